import { isVoidRun, type RunState, type TuningState } from './fold.js';
import type { Half } from './names.js';

/**
 * USAGE.md (docs/reports.md): tokens and cost by model, by batch and half and
 * by run, with a chart of tokens per batch without vs with memory. Pure: the
 * fold's runs and each finished run's summary in, markdown out.
 */
export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costUsd: number;
}

/** What the reports need of a finished run's results.json. */
export interface RunSummary {
  run: string;
  cases: number;
  /** Cases right by their checks (the grade, not this, says right or wrong). */
  rightByChecks: number;
  tokens: number;
  costUsd: number;
  llmCalls: number;
  toolCalls: number;
  memoryReads: number;
  memoryWrites: number;
  savedTwice: number;
  models: ModelUsage[];
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * A run's summary from its results.json, read leniently: the reports must
 * never stop a step, so a field that is missing counts as 0, and a file that
 * is not a list of results gives null.
 */
export function summarizeResults(run: string, results: unknown): RunSummary | null {
  if (!Array.isArray(results)) return null;
  const models = new Map<string, ModelUsage>();
  const summary: RunSummary = {
    run, cases: results.length, rightByChecks: 0, tokens: 0, costUsd: 0, llmCalls: 0, toolCalls: 0,
    memoryReads: 0, memoryWrites: 0, savedTwice: 0, models: [],
  };
  for (const item of results) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    if (r.right === true) summary.rightByChecks += 1;
    summary.memoryReads += num(r.memoryReads);
    const writes = (r.memoryWrites ?? {}) as Record<string, unknown>;
    summary.memoryWrites += num(writes.added) + num(writes.changed) + num(writes.deleted);
    summary.savedTwice += num(writes.savedTwice);
    // What was spent counts every answer: the first and its repeats (docs/method.md#noise), as the run's own
    // tokens and cost do (the run commit's), so the tables by model and by run add up to the same totals.
    // Rightness and memory stay the first answer's.
    for (const answer of [r, ...(Array.isArray(r.repeats) ? r.repeats : [])]) {
      if (!answer || typeof answer !== 'object') continue;
      const a = answer as Record<string, unknown>;
      summary.tokens += num(a.tokens);
      summary.costUsd += num(a.costUsd);
      summary.llmCalls += num(a.llmCalls);
      summary.toolCalls += num(a.toolCalls);
      for (const u of Array.isArray(a.usage) ? a.usage : []) {
        if (!u || typeof u !== 'object') continue;
        const usage = u as Record<string, unknown>;
        const model = typeof usage.model === 'string' && usage.model ? usage.model : '(unnamed)';
        const m = models.get(model) ?? { model, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
        m.inputTokens += num(usage.inputTokens);
        m.outputTokens += num(usage.outputTokens);
        m.cachedTokens += num(usage.cachedTokens);
        m.costUsd += num(usage.costUsd);
        models.set(model, m);
      }
    }
  }
  summary.models = [...models.values()].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return summary;
}

/** 1234567 → "1,234,567", the same on every machine and locale. */
export function formatCount(n: number): string {
  const sign = n < 0 ? '-' : '';
  const digits = String(Math.round(Math.abs(n)));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export const formatUsd = (n: number): string => `$${n.toFixed(4)}`;

/**
 * The run that speaks for a half: its last finished run that is not VOID (the
 * one the half ended or stands on). `byRunner`: VOID as the runner recorded it
 * only, not as graded (USAGE.md, which only runs rewrite, must not depend on grades).
 */
export function representativeRun(runs: readonly RunState[], half: Half, byRunner = false): RunState | null {
  const finished = runs.filter((r) => r.half === half && r.finished && (byRunner ? r.void === null : !isVoidRun(r)));
  return finished[finished.length - 1] ?? null;
}

/** The runs whose results.json a report reads: the representative run of every half. */
export function representativeRuns(state: TuningState): string[] {
  const out: string[] = [];
  for (const b of state.batches) {
    for (const half of ['nomem', 'mem'] as const) {
      const r = representativeRun(b.runs, half);
      if (r) out.push(r.name);
    }
  }
  const final = state.final.filter((r) => r.finished);
  if (final.length > 0) out.push(final[final.length - 1]!.name);
  return out;
}

export function percentSaved(without: number, withMemory: number): string {
  if (without <= 0) return '–';
  const p = Math.round(((without - withMemory) / without) * 100);
  return p >= 0 ? `−${p}%` : `+${-p}%`;
}

export interface UsageInput {
  state: TuningState;
  /** Summaries of finished runs, by run name (a run without one shows its trailer totals). */
  summaries: ReadonlyMap<string, RunSummary>;
}

const HALF_NAME: Record<Half, string> = { nomem: 'without memory', mem: 'with memory' };

function usedRuns(state: TuningState): RunState[] {
  const runs = [...state.batches.flatMap((b) => b.runs), ...state.final];
  return runs.filter((r) => r.finished || r.tokens > 0 || r.costUsd > 0);
}

export function renderUsage(input: UsageInput): string {
  const { state, summaries } = input;
  const runs = usedRuns(state);
  const lines: string[] = [
    `# Usage of tuning \`${state.tuning}\``,
    '',
    '<!-- Generated by git-tune from the runs\' results; do not edit: every run rewrites it. -->',
    '',
    `**${formatCount(state.usage.tokens)} tokens, ${formatUsd(state.usage.costUsd)}** over ${runs.length} run${runs.length === 1 ? '' : 's'} (tokens are input + output).`,
  ];
  if (runs.length === 0) {
    lines.push('', 'No run has finished yet.');
    return `${lines.join('\n')}\n`;
  }

  // By model: from the finished runs' results.
  const models = new Map<string, ModelUsage>();
  for (const r of runs) {
    for (const m of summaries.get(r.name)?.models ?? []) {
      const t = models.get(m.model) ?? { model: m.model, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
      t.inputTokens += m.inputTokens;
      t.outputTokens += m.outputTokens;
      t.cachedTokens += m.cachedTokens;
      t.costUsd += m.costUsd;
      models.set(m.model, t);
    }
  }
  lines.push('', '## By model', '');
  if (models.size === 0) lines.push('The runners reported no usage by model.');
  else {
    const rows = [...models.values()].sort((a, b) => (a.model < b.model ? -1 : 1));
    lines.push('| model | input tokens | output tokens | cached tokens | tokens | cost |', '| --- | ---: | ---: | ---: | ---: | ---: |');
    for (const m of rows) {
      lines.push(`| ${m.model} | ${formatCount(m.inputTokens)} | ${formatCount(m.outputTokens)} | ${formatCount(m.cachedTokens)} | ${formatCount(m.inputTokens + m.outputTokens)} | ${formatUsd(m.costUsd)} |`);
    }
    const sum = (f: (m: ModelUsage) => number) => rows.reduce((s, m) => s + f(m), 0);
    lines.push(`| **total** | ${formatCount(sum((m) => m.inputTokens))} | ${formatCount(sum((m) => m.outputTokens))} | ${formatCount(sum((m) => m.cachedTokens))} | ${formatCount(sum((m) => m.inputTokens + m.outputTokens))} | ${formatUsd(sum((m) => m.costUsd))} |`);
  }

  // By batch and half: every run counts, VOID and stopped ones too (they were paid for).
  lines.push('', '## By batch and half', '', '| batch | half | runs | tokens | cost | llm calls |', '| --- | --- | ---: | ---: | ---: | ---: |');
  for (const b of state.batches) {
    for (const half of ['nomem', 'mem'] as const) {
      const hr = b.runs.filter((r) => r.half === half && (r.finished || r.tokens > 0));
      if (hr.length === 0) continue;
      const calls = hr.reduce((s, r) => s + (summaries.get(r.name)?.llmCalls ?? 0), 0);
      lines.push(`| ${b.plan.batch} | ${HALF_NAME[half]} | ${hr.length} | ${formatCount(hr.reduce((s, r) => s + r.tokens, 0))} | ${formatUsd(hr.reduce((s, r) => s + r.costUsd, 0))} | ${formatCount(calls)} |`);
    }
  }
  const finals = state.final.filter((r) => r.finished || r.tokens > 0);
  if (finals.length > 0) {
    const calls = finals.reduce((s, r) => s + (summaries.get(r.name)?.llmCalls ?? 0), 0);
    lines.push(`| final check | with last good memory | ${finals.length} | ${formatCount(finals.reduce((s, r) => s + r.tokens, 0))} | ${formatUsd(finals.reduce((s, r) => s + r.costUsd, 0))} | ${formatCount(calls)} |`);
  }

  lines.push(...renderMemoryChart(state));

  lines.push('', '## By run', '', '| run | cases | status | tokens | cost | llm calls | models |', '| --- | ---: | --- | ---: | ---: | ---: | --- |');
  for (const r of runs) {
    const s = summaries.get(r.name);
    // Not the verdict: USAGE.md is rewritten by runs only, and a grade comes later.
    const status = !r.finished ? `stopped: ${r.stopped ?? 'unfinished'}` : r.void ? 'VOID' : 'finished';
    const models = s ? s.models.map((m) => m.model).join(', ') || '–' : '–';
    lines.push(`| ${r.name} | ${s ? s.cases : r.cases.length} | ${escapeCell(status)} | ${formatCount(r.tokens)} | ${formatUsd(r.costUsd)} | ${s ? formatCount(s.llmCalls) : '–'} | ${models} |`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The most batches the chart draws: at GitHub's content width, 30 numbered
 * categories still sit side by side; past that, the chart shows the latest
 * ones and says so, and the table under it keeps every batch.
 */
export const CHART_BATCHES = 30;

/** Tokens of each batch's representative runs: bars without memory, a line with memory. */
function renderMemoryChart(state: TuningState): string[] {
  const rows = state.batches
    .map((b) => ({ batch: b.plan.batch, without: representativeRun(b.runs, 'nomem', true), with: representativeRun(b.runs, 'mem', true) }))
    .filter((r) => r.without || r.with);
  if (rows.length === 0) return [];
  const drawn = rows.slice(-CHART_BATCHES);
  const title = drawn.length < rows.length ? `Tokens per batch, batches ${drawn[0]!.batch}-${drawn[drawn.length - 1]!.batch}` : 'Tokens per batch';
  const out = [
    '', '## Tokens per batch, without vs with memory', '',
    `The last finished run of each half that is not VOID (both halves run the same cases): bars without memory, line with memory.${drawn.length < rows.length ? ` The chart shows the latest ${CHART_BATCHES} batches; the table has them all.` : ''}`,
    '', '```mermaid', 'xychart-beta', `  title "${title}"`,
    // Numbers only, under one axis title: "batch 12" thirty times over would be drawn on top of each other.
    `  x-axis "batch" [${drawn.map((r) => `"${r.batch}"`).join(', ')}]`,
    '  y-axis "tokens"',
    `  bar [${drawn.map((r) => r.without?.tokens ?? 0).join(', ')}]`,
    `  line [${drawn.map((r) => r.with?.tokens ?? 0).join(', ')}]`,
    '```', '',
    '| batch | without memory | with memory | saving |', '| --- | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const w = r.without?.tokens;
    const m = r.with?.tokens;
    out.push(`| ${r.batch} | ${w === undefined ? '–' : formatCount(w)} | ${m === undefined ? '–' : formatCount(m)} | ${w !== undefined && m !== undefined ? percentSaved(w, m) : '–'} |`);
  }
  return out;
}

/** Text safe inside a markdown table cell. */
export function escapeCell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}
