import type { EditKeep, EditStatus } from './fold.js';
import type { Half } from './names.js';
import type { Score } from './steps.js';
import { escapeCell, formatCount, formatUsd, percentSaved } from './usage.js';

/**
 * `git tune review <batch>` (docs/reports.md): the pull-request body of one
 * batch. Pure: the batch's data in, markdown out, cut to fit GitHub's limit
 * on a pull-request body (65,536 characters): diffs are shortened first,
 * each with a note and where to read it whole.
 */
export const GITHUB_BODY_LIMIT = 65_536;

export interface ReviewCase {
  id: string;
  class: string | null;
  as: 'new' | 'difficult' | 'recheck';
  difficult: string | null;
}

export interface ReviewRun {
  run: string;
  half: Half;
  number: number;
  finished: boolean;
  verdict: string | null;
  void: string | null;
  cases: number;
  /** Case ids the grade says are wrong (null: not graded). */
  wrong: string[] | null;
  /** Right by checks, for a finished run not graded yet. */
  rightByChecks: number | null;
  tokens: number;
  /** Of `tokens`, the first answers' (the repeats of flips left out): what the runs are compared on. */
  answerTokens: number;
  costUsd: number;
  llmCalls: number | null;
  memoryWrites: number | null;
  savedTwice: number | null;
  /** First-answer tokens minus those of the run before it in the same half. */
  deltaTokens: number | null;
  findings: string | null;
}

export interface ReviewFileDiff {
  path: string;
  patch: string;
}

export interface ReviewEdit {
  commit: string;
  /** The graded run the edit responds to (the run whose findings proposed it). */
  run: string;
  half: Half;
  hand: boolean;
  aims: string[];
  status: EditStatus;
  /** The run that tried it: confirmed or not (null: pending, or reverted before any run). */
  triedBy: string | null;
  /** The revert commit that undid it. */
  revertedBy: string | null;
  /** Who kept it unconfirmed on purpose, and why. */
  kept: EditKeep | null;
  why: string[];
  files: ReviewFileDiff[];
  url: string | null;
}

export interface ReviewDifficultChange {
  op: 'add' | 'fix';
  id: string;
  reason: string | null;
  at: string;
}

export interface ReviewInput {
  tuning: string;
  batch: number;
  size: number;
  kind: 'new' | 'difficult';
  why: string;
  status: string;
  cases: ReviewCase[];
  runs: ReviewRun[];
  edits: ReviewEdit[];
  memory: { candidate: { run: string; files: number } | null; checkpoint: boolean };
  difficult: ReviewDifficultChange[];
  head: { commit: string; url: string | null };
  base: { commit: string };
  /** The tuning's held-out set (docs/held-out.md): its size and the baseline's score on it, when one ran on this set. */
  heldOut?: { cases: number; baseline: Score | null };
}

const short = (oid: string) => oid.slice(0, 7);
const HALF_TEXT: Record<Half, string> = { nomem: 'without memory', mem: 'with memory' };
const runLabel = (run: string) => run.replace(/^batch\d+-/, '');

function commitRef(commit: string, url: string | null): string {
  return url ? `[\`${short(commit)}\`](${url})` : `\`${short(commit)}\``;
}

function rightCell(run: ReviewRun): string {
  if (!run.finished) return 'unfinished';
  if (run.void) return 'VOID';
  if (run.wrong) return `${run.cases - run.wrong.length}/${run.cases}`;
  return run.rightByChecks === null ? '–' : `${run.rightByChecks}/${run.cases} by checks`;
}

function header(input: ReviewInput): string[] {
  const lines = [`# Batch ${input.batch} of tuning \`${input.tuning}\``, ''];
  const nomem = input.runs.filter((r) => r.half === 'nomem' && r.finished && !r.void);
  const mem = input.runs.filter((r) => r.half === 'mem' && r.finished && !r.void);
  const parts = [
    `${input.cases.length} cases (${input.cases.filter((c) => c.as !== 'recheck').length} ${input.kind} + ${input.cases.filter((c) => c.as === 'recheck').length} recheck)`,
    input.status,
  ];
  const n = nomem[nomem.length - 1];
  const m = mem[mem.length - 1];
  if (n && m) parts.push(`tokens ${formatCount(n.answerTokens)} without memory → ${formatCount(m.answerTokens)} with memory (${percentSaved(n.answerTokens, m.answerTokens)})`);
  lines.push(`**${parts.join(' · ')}.**`);
  if (input.why) lines.push('', `Planned: ${input.why}`);
  lines.push('', `Commits ${short(input.base.commit)}..${commitRef(input.head.commit, input.head.url)}; every step of the batch is one commit.`);
  return lines;
}

function casesSection(input: ReviewInput, maxRows: number): string[] {
  const graded = input.runs.filter((r) => r.finished);
  const lines = ['## Cases', ''];
  const head = ['case', 'class', 'in batch as', ...graded.map((r) => runLabel(r.run))];
  lines.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  const rows = input.cases.slice(0, maxRows);
  for (const c of rows) {
    const cells = graded.map((r) => (r.void ? 'VOID' : r.wrong ? (r.wrong.includes(c.id) ? '**wrong**' : 'right') : '?'));
    const as = c.as + (c.difficult ? ` (difficult: ${c.difficult})` : '');
    lines.push(`| \`${c.id}\` | ${escapeCell(c.class ?? '–')} | ${as} | ${cells.join(' | ')} |`);
  }
  if (input.cases.length > rows.length) lines.push('', `… and ${input.cases.length - rows.length} more cases: \`git tune review ${input.batch} --json\` lists them all.`);
  return lines;
}

function runsSection(input: ReviewInput): string[] {
  const lines = ['## Runs', ''];
  if (input.runs.length === 0) return [...lines, 'No run yet.'];
  lines.push(
    '| run | half | verdict | cases right | tokens | Δ tokens | llm calls | memory writes | saved twice | cost |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const r of input.runs) {
    const verdict = r.verdict ? (r.findings ? `[${r.verdict}](${r.findings})` : r.verdict) : r.void ? 'VOID' : r.finished ? 'not graded' : 'unfinished';
    const delta = r.deltaTokens === null ? '–' : r.deltaTokens > 0 ? `+${formatCount(r.deltaTokens)}` : r.deltaTokens === 0 ? '±0' : formatCount(r.deltaTokens);
    const opt = (n: number | null) => (n === null ? '–' : formatCount(n));
    // The first answers' tokens (what Δ compares), and what the repeats of flips added, apart.
    const repeats = r.tokens - r.answerTokens;
    const tokens = repeats > 0 ? `${formatCount(r.answerTokens)} + ${formatCount(repeats)} in repeats` : formatCount(r.tokens);
    lines.push(`| ${r.run} | ${HALF_TEXT[r.half]} | ${verdict} | ${rightCell(r)} | ${tokens} | ${delta} | ${opt(r.llmCalls)} | ${opt(r.memoryWrites)} | ${opt(r.savedTwice)} | ${formatUsd(r.costUsd)} |`);
  }
  return lines;
}

function editFate(e: ReviewEdit): string {
  switch (e.status) {
    case 'confirmed': return `**confirmed** by ${e.triedBy}`;
    case 'unconfirmed': return `**unconfirmed** by ${e.triedBy}`;
    case 'reverted': return `**reverted** by ${e.revertedBy ? `\`${short(e.revertedBy)}\`` : 'a revert'}${e.triedBy ? ` after ${e.triedBy} did not confirm it` : ', before any run tried it'}`;
    case 'pending': return '**pending**: no run has tried it yet';
    case 'kept': return `**kept** by ${e.kept?.by || 'someone'} (${e.kept?.why || 'no reason given'})${e.triedBy ? ` though ${e.triedBy} did not confirm it` : ', though no run tried it'}`;
  }
}

/** An edit's section; `diffBudget` caps each diff (characters), null for whole diffs. */
function editSection(e: ReviewEdit, i: number, diffBudget: (patch: string) => number | null): string[] {
  const lines = [
    `### ${i + 1}. ${commitRef(e.commit, e.url)} ${e.hand ? 'hand edit' : 'edit'} after ${e.run} — ${editFate(e)}`,
    '',
    `Responds to ${e.run} (${HALF_TEXT[e.half]}); aims at ${e.aims.length ? e.aims.map((a) => `\`${a}\``).join(', ') : 'no case named'}.`,
  ];
  if (e.why.length > 0) lines.push('', ...e.why.map((w) => `> ${w}`));
  if (e.files.length === 0) lines.push('', '_No prose file changed._');
  for (const f of e.files) {
    const cap = diffBudget(f.patch);
    let patch = f.patch.replace(/\n$/, '');
    let note = '';
    if (cap !== null && patch.length > cap) {
      const all = patch.split('\n');
      const kept: string[] = [];
      let size = 0;
      for (const line of all) {
        if (size + line.length + 1 > cap) break;
        kept.push(line);
        size += line.length + 1;
      }
      patch = kept.join('\n');
      note = `Diff cut after ${kept.length} of ${all.length} lines to fit the pull request; the whole diff: ${e.url ?? `\`git show ${e.commit} -- ${f.path}\``}`;
    }
    // A fence longer than any backtick run inside the diff.
    const fence = '`'.repeat(Math.max(3, ...[...patch.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    lines.push('', `\`${f.path}\``, '', `${fence}diff`, patch, fence);
    if (note) lines.push('', `_${note}_`);
  }
  return lines;
}

function memorySection(input: ReviewInput): string[] {
  const lines = ['## Memory', ''];
  const { candidate, checkpoint } = input.memory;
  const nomem = input.runs.filter((r) => r.half === 'nomem' && r.finished && !r.void);
  const saved = nomem[nomem.length - 1];
  if (candidate) lines.push(`- candidate memory from ${candidate.run}: ${candidate.files} file${candidate.files === 1 ? '' : 's'} changed against the last good memory${saved?.memoryWrites !== null && saved ? ` (${formatCount(saved.memoryWrites!)} memory writes in that run)` : ''}`);
  else lines.push('- no candidate memory yet');
  const mem = input.runs.filter((r) => r.half === 'mem' && r.finished && !r.void);
  if (mem.length > 0) lines.push(`- saved twice, run by run with memory: ${mem.map((r) => `${runLabel(r.run)} ${r.savedTwice === null ? '?' : formatCount(r.savedTwice)}`).join(' → ')}`);
  lines.push(`- checkpoint: ${checkpoint ? 'yes, the candidate is the last good memory' : 'not yet'}`);
  return lines;
}

function difficultSection(input: ReviewInput): string[] {
  const lines = ['## Difficult list', ''];
  if (input.difficult.length === 0) return [...lines, 'No change in this batch.'];
  for (const d of input.difficult) lines.push(`- ${d.op === 'add' ? `added \`${d.id}\` (${d.reason})` : `fixed \`${d.id}\``} at ${d.at}`);
  return lines;
}

/** The held-out set is never in a batch: the review says so, and what the baseline got on it. */
function heldOutLine(h: NonNullable<ReviewInput['heldOut']>): string {
  const base = h.baseline ? `the original prose got ${h.baseline.right}/${h.baseline.cases} right (\`git tune baseline\`)` : 'no baseline yet (`git tune baseline`)';
  return `**Held-out set:** ${h.cases} case${h.cases === 1 ? '' : 's'} no batch uses and no edit may quote; ${base}. The final check compares them.`;
}

function assemble(input: ReviewInput, maxRows: number, diffBudget: (patch: string) => number | null): string {
  const parts = [
    header(input).join('\n'),
    casesSection(input, maxRows).join('\n'),
    runsSection(input).join('\n'),
    ['## Edits', '', input.edits.length === 0 ? 'No edit in this batch.' : `${input.edits.length} edit${input.edits.length === 1 ? '' : 's'}, oldest first.`,
      ...input.edits.flatMap((e, i) => ['', ...editSection(e, i, diffBudget)])].join('\n'),
    memorySection(input).join('\n'),
    difficultSection(input).join('\n'),
    ...(input.heldOut ? [heldOutLine(input.heldOut)] : []),
    '<sub>Written by `git tune review`; `git tune pr` keeps this pull request up to date.</sub>',
  ];
  return `${parts.join('\n\n')}\n`;
}

/**
 * The review as markdown, at most `limit` characters: whole when it fits;
 * else every diff gets an equal share of what the rest leaves (a short diff
 * gives what it does not use to the others), and as a last resort the cases
 * table is shortened.
 */
export function renderReview(input: ReviewInput, limit = GITHUB_BODY_LIMIT): string {
  const whole = assemble(input, Infinity, () => null);
  if (whole.length <= limit) return whole;
  const patches = input.edits.flatMap((e) => e.files.map((f) => f.patch));
  let maxRows = input.cases.length;
  for (;;) {
    // What the body takes with every diff empty (notes included), then share the rest.
    const skeleton = assemble(input, maxRows, () => 0).length;
    const room = limit - skeleton - 64;
    if (room > 0 || maxRows === 0) {
      const caps = shareOut(patches.map((p) => p.length), Math.max(0, room));
      const byPatch = new Map<string, number[]>();
      patches.forEach((p, i) => byPatch.set(p, [...(byPatch.get(p) ?? []), caps[i]!]));
      const body = assemble(input, maxRows, (p) => byPatch.get(p)?.shift() ?? 0);
      if (body.length <= limit) return body;
    }
    if (maxRows === 0) break;
    maxRows = Math.floor(maxRows / 2);
  }
  const note = '\n\n_This review was cut to fit a pull request; `git tune review` prints it whole._\n';
  return whole.slice(0, limit - note.length) + note;
}

/** Water-filling: each size gets min(size, an equal share of what is left). */
function shareOut(sizes: readonly number[], room: number): number[] {
  const caps = new Array<number>(sizes.length).fill(0);
  const order = sizes.map((s, i) => [s, i] as const).sort((a, b) => a[0] - b[0]);
  let left = room;
  order.forEach(([size, i], k) => {
    const share = Math.floor(left / (order.length - k));
    caps[i] = Math.min(size, share);
    left -= caps[i]!;
  });
  return caps;
}
