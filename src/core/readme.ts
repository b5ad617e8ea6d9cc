import type { Config } from '../contracts/config.js';
import type { BatchPlan } from '../contracts/files.js';
import { retriesText, viewDifficult } from './difficult.js';
import { finalLine } from './final-rate.js';
import { batchCases, countedRuns, isVoidRun, rightCases, type BatchState, type EditState, type HistoryCommit, type RunState, type TuningState } from './fold.js';
import { editFate } from './edits.js';
import type { Half } from './names.js';
import type { NextStep } from './next.js';
import { RUN_FILES, runFilePath } from './paths.js';
import { planBatch } from './plan.js';
import { renderSideBySide, sideBySide } from './held-out.js';
import { parseStep, type Step } from './steps.js';
import { parseMessage } from './trailers.js';
import { renderMap } from './readme-map.js';
import { answerTokens } from './tuning-state.js';
import { escapeCell, formatCount, formatUsd, percentSaved, representativeRun, type RunSummary } from './usage.js';

/**
 * The tuning's README.md (docs/reports.md), regenerated in the commit of every
 * step. Pure: the folded state, the commits it was folded from, the settings
 * and a few small inputs in; markdown out. No clock and no commit id of the
 * commit it goes into, so commit ids stay deterministic.
 */
export const HAND_START = '<!-- git-tune:hand-written:start (kept when the README is regenerated) -->';
export const HAND_END = '<!-- git-tune:hand-written:end -->';

export const HAND_PLACEHOLDER = `## What is tuned and why

_Write here which agent this tuning is for, what its prose does, and what a right answer must do. git-tune keeps this part when it rewrites the README; \`git tune next\` reminds you while it is this placeholder._

## Open problems

_Cases, failures or costs you know about and have not solved yet._`;

/** The start marker, with whatever an older version wrote inside it. */
export const START_RE = /<!-- git-tune:hand-written:start[^>]*-->/;

/** The hand-written part of a README (between the markers), or null when the markers are missing or out of order. */
export function extractHandSection(readme: string): string | null {
  const start = START_RE.exec(readme);
  if (!start) return null;
  const from = start.index + start[0].length;
  const end = readme.indexOf(HAND_END, from);
  if (end < 0) return null;
  return readme.slice(from, end).replace(/^\r?\n/, '').replace(/\s+$/, '');
}

export function isHandPlaceholder(section: string | null): boolean {
  return section === null || normalize(section) === normalize(HAND_PLACEHOLDER) || normalize(section) === '';
}

const normalize = (s: string) => s.replace(/\r\n/g, '\n').replace(/\s+/g, ' ').trim();

export interface PredictedBatch {
  batch: number;
  size: number;
  kind: BatchPlan['kind'];
  /** Exact (planned by docs/method.md#batches from history as it is) or assumed (later batches, as if each went smoothly). */
  exact: boolean;
}

/**
 * The batches not planned yet, drawn by the growth rule of docs/method.md#batches: the next
 * one as `planBatch` would plan it from history as it stands, each later one as
 * if the one before went smoothly (size doubles up to maxBatch), until the
 * selection is used up; then one batch of the open difficult cases, if any.
 */
export function predictBatches(state: TuningState, config: Config | null, selection: readonly string[]): PredictedBatch[] {
  if (!config || selection.length === 0) return [];
  const next = planBatch({ state, selection, complexity: () => undefined, settings: config });
  if (!next) return [];
  const out: PredictedBatch[] = [{ batch: next.batch, size: next.size, kind: next.kind, exact: true }];
  if (next.kind === 'difficult') return out;
  const used = new Set(state.batches.flatMap((b) => batchCases(b.plan)));
  for (const id of next.new) used.add(id);
  let unused = selection.filter((id) => !used.has(id)).length;
  let size = next.size;
  let batch = next.batch;
  while (unused > 0 && out.length < 50) {
    size = Math.min(config.maxBatch, 2 * size);
    batch += 1;
    out.push({ batch, size, kind: 'new', exact: false });
    unused -= Math.min(size, unused);
  }
  const open = viewDifficult(state, config.maxRetries).filter((e) => e.status === 'open').length;
  if (open > 0) out.push({ batch: batch + 1, size: Math.min(open, size), kind: 'difficult', exact: false });
  return out;
}

export interface ReadmeInput {
  state: TuningState;
  /** The commits the state was folded from, oldest first (the last ones may carry placeholder ids). */
  commits: readonly HistoryCommit[];
  config: Config | null;
  selection: readonly string[];
  next: NextStep | null;
  /** Results summaries of finished runs (at least each half's representative run). */
  summaries: ReadonlyMap<string, RunSummary>;
  /** The hand-written part, kept as it is. */
  hand: string;
}

const LOG_LIMIT = 60;
const HALF_TEXT: Record<Half, string> = { nomem: 'no memory', mem: 'with memory' };

// The map has a file of its own; its limits are part of the README's contract.
export { MAP_AHEAD, MAP_BATCHES } from './readme-map.js';

export function renderReadme(input: ReadmeInput): string {
  const { state } = input;
  const predicted = predictBatches(state, input.config, input.selection);
  const sections = [
    `# Tuning \`${state.tuning}\``,
    '<!-- Generated by git-tune at every step, from the branch history. Edit only the hand-written part between the markers below. -->',
    renderWhere(input, predicted),
    `${HAND_START}\n${input.hand.trim() || HAND_PLACEHOLDER}\n${HAND_END}`,
    renderMap(input, predicted),
    renderPlan(input, predicted),
    renderBatches(input),
    renderDifficult(input),
    renderResults(input),
    renderHeldOut(input),
    renderNextSection(input),
    renderLog(input),
  ];
  return `${sections.filter((s) => s !== '').join('\n\n')}\n`;
}

// ---------------------------------------------------------------------------
// where we are

function renderWhere(input: ReadmeInput, predicted: PredictedBatch[]): string {
  const { state, next } = input;
  const total = state.batches.length + predicted.length;
  const current = state.batches[state.batches.length - 1];
  let where: string;
  const finalRun = state.final[state.final.length - 1];
  if (finalRun) where = `the final check${finalRun.grade ? ` is ${finalRun.grade.verdict}` : finalRun.finished ? ' ran and waits for its grade' : ' is running'}`;
  else if (!current) where = state.selection ? 'set up, before batch 1' : 'setting up';
  else {
    const runs = current.runs;
    const half: Half = runs.some((r) => r.half === 'mem') ? 'mem' : 'nomem';
    const hr = runs.filter((r) => r.half === half);
    const last = hr[hr.length - 1];
    const run = last ? `, run ${last.number}${last.grade ? ` ${last.grade.verdict}` : last.finished ? ' not graded yet' : ' running'}` : ', no run yet';
    where = `batch ${current.plan.batch} of about ${total}, ${HALF_TEXT[half]}${run}`;
  }
  const lines = [`## Where we are`, '', `**Now: ${where}.**${next ? ' Next: [below](#next).' : ''}`, ''];
  const view = viewDifficult(state, input.config?.maxRetries ?? 3);
  const used = new Set(state.batches.flatMap((b) => batchCases(b.plan)));
  const rows: Array<[string, string]> = [
    ['dataset', state.dataset ? `${state.dataset.cases} cases (rev ${state.dataset.rev})` : 'not imported yet'],
    ['selection', state.selection ? `${state.selection.selected} of ${state.selection.total} cases; ${used.size} used in batches so far` : 'not made yet'],
    ['batches', `${state.batches.length} planned${predicted.length ? `, about ${predicted.length} ahead` : ''}; ${state.checkpoints.length} passed with memory`],
    ['difficult', `${view.filter((e) => e.status === 'open').length} open, ${view.filter((e) => e.status === 'fixed').length} fixed, ${view.filter((e) => e.status === 'stuck').length} stuck`],
    ['last good memory', lastGood(state)],
    ['usage', `${formatCount(state.usage.tokens)} tokens, ${formatUsd(state.usage.costUsd)} (by model and run: [USAGE.md](USAGE.md))`],
    ['steps', `${state.commits} commits on \`tune/${state.tuning}\``],
  ];
  lines.push('| | |', '| --- | --- |', ...rows.map(([k, v]) => `| ${k} | ${escapeCell(v)} |`));
  return lines.join('\n');
}

function lastGood(state: TuningState): string {
  const batch = state.checkpoints.length ? Math.max(...state.checkpoints) : null;
  return batch === null ? 'empty (no batch has passed with memory yet)' : `up to batch ${batch}`;
}

// ---------------------------------------------------------------------------
// plan and settings

function planWhy(input: ReadmeInput, b: BatchState): string {
  const commit = input.commits[b.index];
  return commit ? parseMessage(commit.message).body.split('\n')[0]!.trim() : '';
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

function renderPlan(input: ReadmeInput, predicted: PredictedBatch[]): string {
  const lines = ['## Plan and settings', ''];
  const current = input.state.batches[input.state.batches.length - 1];
  if (current) {
    const why = planWhy(input, current);
    lines.push(
      `Batch ${current.plan.batch}: ${current.plan.new.length} ${current.plan.kind} case${current.plan.new.length === 1 ? '' : 's'} + ${current.plan.recheck.length} recheck, size ${current.plan.size}${why ? `: ${why}` : ''}.`,
      '',
      `- new: ${current.plan.new.map(code).join(', ') || '–'}`,
      `- recheck: ${current.plan.recheck.map(code).join(', ') || '–'}`,
    );
  } else lines.push('No batch planned yet.');
  if (predicted.length > 0) {
    lines.push('', `Ahead: ${predicted.map((p) => `batch ${p.batch} (${p.exact ? '' : '~'}${p.size} ${p.kind})`).join(', ')}, then the final check.`);
  }
  const c = input.config;
  if (c) {
    const cmd = (spec: Config['runner']) => (spec ? (spec.command ? code(spec.command.join(' ')) : `preset ${spec.preset}`) : '–');
    const budget = [c.budget.maxCostUsd !== null ? `$${c.budget.maxCostUsd}` : '', c.budget.maxTokens !== null ? `${formatCount(c.budget.maxTokens)} tokens` : ''].filter(Boolean).join(', ') || 'none';
    const rows: Array<[string, string]> = [
      ['limit', c.limit === null ? 'all cases' : String(c.limit)],
      ['batch size', `${c.minBatch} first, growing to at most ${c.maxBatch}`],
      ['recheck', `${c.recheck} per batch`],
      ['maxRuns', `${c.maxRuns} per half`],
      ['maxRetries', `${c.maxRetries} batches per difficult case`],
      ['concurrency', String(c.concurrency)],
      ['seed', String(c.seed)],
      ['prose', c.prose.map(code).join(', ') || '–'],
      ['memory policy', c.memoryPolicy.map(code).join(', ') || '–'],
      ['runner', cmd(c.runner)],
      ['judge', cmd(c.judge)],
      ['editor', cmd(c.editor)],
      ['budget', budget],
    ];
    lines.push('', '| setting | value |', '| --- | --- |', ...rows.map(([k, v]) => `| ${k} | ${escapeCell(v)} |`));
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// batches

// Links relative to the README, which sits in the tuning's folder.
const findings = (run: string) => runFilePath('.', run, RUN_FILES.findings).slice(2);
const changes = (run: string) => runFilePath('.', run, RUN_FILES.changes).slice(2);

function halfNumbers(input: ReadmeInput, b: BatchState, half: Half) {
  const rep = representativeRun(b.runs, half);
  return { rep, summary: rep ? input.summaries.get(rep.name) ?? null : null };
}

function changedCell(input: ReadmeInput, b: BatchState): string {
  const parts: string[] = [];
  for (const r of b.runs) {
    if (!r.finished) continue;
    const head = r.grade ? `[${r.name.replace(/^batch\d+-/, '')} ${r.grade.verdict}](${findings(r.name)})` : `${r.name.replace(/^batch\d+-/, '')} ${isVoidRun(r) ? 'VOID' : 'not graded'}`;
    const edits = input.state.edits.filter((e) => e.run === r.name);
    const tail = edits.length > 0 ? ` → [${edits.length === 1 ? 'edit' : `${edits.length} edits`}](${changes(r.name)}) ${edits.map((e) => e.status).join(', ')}` : '';
    parts.push(head + tail);
  }
  return parts.join('; ') || '–';
}

function renderBatches(input: ReadmeInput): string {
  const { state } = input;
  const lines = ['## Batches', ''];
  if (state.batches.length === 0) return [...lines, 'No batch yet.'].join('\n');
  lines.push(
    '| batch | size | new + recheck | runs (no memory + with memory) | status | cases right | llm calls (without → with memory) | tokens (without → with memory) | saved twice | what changed |',
    '| ---: | ---: | --- | --- | --- | --- | --- | --- | ---: | --- |',
  );
  for (const b of state.batches) {
    const n = halfNumbers(input, b, 'nomem');
    const m = halfNumbers(input, b, 'mem');
    const nomemRuns = b.runs.filter((r) => r.half === 'nomem');
    const memRuns = b.runs.filter((r) => r.half === 'mem');
    const status = state.checkpoints.includes(b.plan.batch)
      ? 'passed, checkpointed'
      : memRuns.some((r) => r.grade?.verdict === 'PASSED') ? 'passed with memory'
        : memRuns.length > 0 ? 'with memory'
          : nomemRuns.some((r) => r.grade?.verdict === 'PASSED') ? 'passed without memory'
            : nomemRuns.length > 0 ? 'without memory' : 'planned';
    const right = (rep: RunState | null) => (rep?.grade ? `${rightCases(rep).length}/${rep.cases.length}` : '–');
    const pair = (a: number | undefined, c: number | undefined, saving: boolean) =>
      `${a === undefined ? '–' : formatCount(a)} → ${c === undefined ? '–' : formatCount(c)}${saving && a !== undefined && c !== undefined ? ` (${percentSaved(a, c)})` : ''}`;
    lines.push(`| ${[
      b.plan.batch, b.plan.size, `${b.plan.new.length} ${b.plan.kind} + ${b.plan.recheck.length}`,
      `${countedRuns(nomemRuns)} + ${countedRuns(memRuns)}`, status,
      `${right(n.rep)} → ${right(m.rep)}`,
      pair(n.summary?.llmCalls, m.summary?.llmCalls, false),
      pair(n.rep?.tokens, m.rep?.tokens, true),
      m.summary ? formatCount(m.summary.savedTwice) : '–',
      changedCell(input, b),
    ].join(' | ')} |`);
  }
  lines.push('', 'Numbers are those of the last finished run of each half (the same cases); every run is in [USAGE.md](USAGE.md).');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// difficult cases, results, next

function renderDifficult(input: ReadmeInput): string {
  const maxRetries = input.config?.maxRetries ?? 3;
  const view = viewDifficult(input.state, maxRetries);
  const lines = ['## Difficult cases', ''];
  if (view.length === 0) return [...lines, 'None.'].join('\n');
  lines.push('| case | reason | status | added in batch | retries | right in runs |', '| --- | --- | --- | ---: | ---: | ---: |');
  const order = { open: 0, stuck: 1, fixed: 2 } as const;
  // Its right-rate from the history (docs/method.md#noise): the graded runs that held it, each by the majority of its answers.
  const graded = [...input.state.runs.values()].filter((r) => r.grade && !isVoidRun(r));
  for (const e of [...view].sort((a, b) => order[a.status] - order[b.status] || a.index - b.index)) {
    const held = graded.filter((r) => r.cases.includes(e.id));
    const right = held.filter((r) => !r.grade!.wrong.includes(e.id)).length;
    lines.push(`| ${code(e.id)} | ${e.reason} | ${e.status} | ${e.batch} | ${retriesText(e, maxRetries)} | ${held.length ? `${right} of ${held.length}` : '–'} |`);
  }
  return lines.join('\n');
}

function renderResults(input: ReadmeInput): string {
  const { state } = input;
  const lines = ['## Results so far', ''];
  const used = new Set(state.batches.flatMap((b) => batchCases(b.plan)));
  const edits = (s: EditState['status']) => state.edits.filter((e) => e.status === s).length;
  let without = 0;
  let withMemory = 0;
  for (const b of state.batches) {
    const n = representativeRun(b.runs, 'nomem');
    const m = representativeRun(b.runs, 'mem');
    if (n?.grade?.verdict === 'PASSED' && m?.grade?.verdict === 'PASSED') {
      without += answerTokens(n);
      withMemory += answerTokens(m);
    }
  }
  lines.push(
    state.selection ? `- cases used: ${used.size} of ${state.selection.selected} selected (${state.selection.total} in the dataset)` : '- cases used: none yet (no selection)',
    `- batches passed with memory: ${state.checkpoints.length} of ${state.batches.length}`,
    `- edits: ${state.edits.length} (${edits('confirmed')} confirmed, ${edits('unconfirmed')} unconfirmed, ${edits('reverted')} reverted${edits('kept') ? `, ${edits('kept')} kept` : ''}, ${edits('pending')} pending)`,
    `- tokens: ${formatCount(state.usage.tokens)}, cost ${formatUsd(state.usage.costUsd)}`,
  );
  if (without > 0) lines.push(`- memory: the passing runs with memory used ${formatCount(withMemory)} tokens where the same cases without memory used ${formatCount(without)} (${percentSaved(without, withMemory)})`);
  const finalRun = state.final[state.final.length - 1];
  if (finalRun?.grade) {
    // Right / wrong / stuck with ids next to the verdict (docs/reports.md): a stuck case is reported, never hidden in "right".
    const stuck = viewDifficult(state, input.config?.maxRetries ?? 3).filter((e) => e.status === 'stuck' && finalRun.cases.includes(e.id)).map((e) => e.id);
    const line = finalLine({ verdict: finalRun.grade.verdict, right: rightCases(finalRun).length, total: finalRun.cases.length, wrong: finalRun.grade.wrong.filter((id) => !stuck.includes(id)), stuck });
    lines.push(`- final check: **${line.replace(/:.*/, '')}**${line.slice(line.indexOf(':'))} — [findings](${findings(finalRun.name)})`);
  } else lines.push(`- final check: ${finalRun ? (finalRun.finished ? 'ran, not graded yet' : 'running') : 'not run yet'}`);
  return lines.join('\n');
}

/**
 * The held-out set beside the selection, tuned prose against the original
 * (docs/held-out.md): from the baseline step and the final check's grade.
 */
function renderHeldOut(input: ReadmeInput): string {
  const { state } = input;
  const finalRun = state.final[state.final.length - 1];
  const graded = finalRun?.grade ?? null;
  if (!state.heldOut && !state.baseline && !graded?.heldOut) return '';
  const lines = ['## Held-out set', ''];
  lines.push(state.heldOut
    ? `${state.heldOut.cases} held-out case${state.heldOut.cases === 1 ? '' : 's'} (\`held-out.jsonl\`): no batch uses them and no edit may quote them; the baseline and the final check run them.`
    : 'No held-out set now.');
  const base = state.baseline && { selection: state.baseline.selection, heldOut: state.baseline.heldOut };
  const stale = state.baseline && state.heldOut && state.baseline.heldOutRev !== state.heldOut.rev;
  if (!state.baseline) lines.push('', 'Baseline: not run yet (`git tune baseline` runs the original prose once; without it the final check cannot compare the held-out set).');
  else if (stale) lines.push('', `Baseline (${code(state.baseline.oid.slice(0, 7))}) ran another held-out set: \`git tune baseline\` again to compare.`);
  if (finalRun && graded?.heldOut) {
    const heldTokens = graded.heldOut.tokens;
    const heldCost = graded.heldOut.costUsd;
    const tunedSelection = { right: rightCases(finalRun).length, cases: finalRun.cases.length, tokens: finalRun.tokens - heldTokens, costUsd: finalRun.costUsd - heldCost };
    lines.push('', `The final check (**${graded.verdict}**), tuned prose vs the prose at the tuning's start:`, '');
    lines.push(...renderSideBySide(sideBySide({ selection: tunedSelection, heldOut: graded.heldOut }, stale ? null : base)));
  } else if (base && !stale) {
    lines.push('', `Baseline of ${code(state.baseline!.init.slice(0, 7))}: selection ${base.selection.right}/${base.selection.cases} right${base.heldOut ? `, held-out ${base.heldOut.right}/${base.heldOut.cases} right` : ''}; the final check compares with it.`);
  }
  return lines.join('\n');
}

function renderNextSection(input: ReadmeInput): string {
  const { next } = input;
  if (!next) return '';
  const lines = ['## Next', '', `${next.message}.`.replace(/\.\.$/, '.')];
  if (next.command) lines.push('', '```sh', next.command, '```');
  for (const note of next.notes) lines.push('', `> note: ${note}`);
  lines.push('', '`git tune next` says the same from the history at any time.');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// log

/** Markdown-safe text for a list item written by a person (a hand commit's subject). */
function escapeText(text: string): string {
  return text.replace(/([\\`*_[\]<>|#])/g, '\\$1');
}

/** One line for a step; `escape` is applied to text a person wrote (a keep's why): markdown for the README, plain for the terminal. */
export function describeStep(step: Step, subject: string, edit?: EditState, escape: (text: string) => string = escapeText): { text: string; links: Array<[string, string]> } {
  switch (step.step) {
    case 'init': return { text: `started tuning ${step.tuning}`, links: [] };
    case 'config': return { text: `settings changed: ${step.keys.join(', ') || 'config.yaml'}`, links: [['config', 'config.yaml']] };
    case 'dataset': return { text: `dataset of ${step.cases} cases imported`, links: [] };
    case 'select': return { text: `selected ${step.selected} of ${step.total} cases`, links: [] };
    case 'plan': return { text: `planned batch ${step.batch}: ${step.new.length} ${step.kind} + ${step.recheck.length} recheck`, links: [] };
    case 'run-plan': return { text: `planned ${step.run} (imported: its cases were laid out, it never started)`, links: [] };
    case 'run-start': return { text: `started ${step.run} (concurrency ${step.concurrency})`, links: [] };
    case 'run': return { text: `ran ${step.run}: ${step.cases} cases, ${formatCount(step.tokens)} tokens, ${formatUsd(step.costUsd)}${step.void ? `, VOID (${step.void})` : ''}`, links: [] };
    case 'run-stop': return { text: `${step.run} stopped: ${step.reason}`, links: [] };
    case 'grade': return { text: `graded ${step.run}: ${step.verdict}${step.wrong.length ? `, ${step.wrong.length} wrong` : ''}`, links: [['findings', findings(step.run)]] };
    case 'edit': return {
      text: `edit after ${step.run}${edit ? `: ${escape(editFate(edit))}` : ''}`,
      links: [['changes', changes(step.run)]],
    };
    case 'revert': return { text: `reverted ${step.reverts.map((o) => o.slice(0, 7)).join(', ') || 'nothing'}`, links: [] };
    case 'difficult': return { text: 'difficult list', links: [] };
    case 'candidate': return { text: `candidate memory from ${step.run}`, links: [] };
    case 'checkpoint': return { text: `checkpoint: batch ${step.batch} is in the last good memory`, links: [] };
    case 'note': return { text: `note: ${escapeText(subject)}`, links: [] };
    case 'baseline': return {
      text: `baseline (the prose of ${step.init.slice(0, 7)}): selection ${step.selection.right}/${step.selection.cases} right${step.heldOut ? `, held-out ${step.heldOut.right}/${step.heldOut.cases} right` : ''}`,
      links: [['results', 'baseline/results.json']],
    };
  }
}

function renderLog(input: ReadmeInput): string {
  const { state, commits } = input;
  const edits = new Map(state.edits.map((e) => [e.index, e]));
  const lines = ['## Log', '', 'Newest first; every step is one commit (`git tune log` lists them all, with their ids).', ''];
  const start = Math.max(0, commits.length - LOG_LIMIT);
  for (let i = commits.length - 1; i >= start; i--) {
    const commit = commits[i]!;
    const step = parseStep(commit.message);
    const { subject } = parseMessage(commit.message);
    let text: string;
    let links: Array<[string, string]> = [];
    if (step && step.tuning === state.tuning) {
      ({ text, links } = describeStep(step, subject, edits.get(i)));
      const diff = step.difficult.map((d) => (d.op === 'add' ? `+${d.id} (${d.reason})` : `fixed ${d.id}`));
      if (diff.length > 0) text += step.step === 'difficult' ? `: ${diff.join(', ')}` : `; difficult list: ${diff.join(', ')}`;
    } else {
      const edit = edits.get(i);
      text = edit ? `hand edit after ${edit.run}: ${escapeText(editFate(edit))} — ${escapeText(subject)}` : `hand commit: ${escapeText(subject)}`;
    }
    lines.push(`- **${i + 1}** ${text}${links.map(([t, href]) => ` · [${t}](${href})`).join('')}`);
  }
  if (start > 0) lines.push(`\n… and ${start} earlier steps: \`git tune log\`.`);
  return lines.join('\n');
}
