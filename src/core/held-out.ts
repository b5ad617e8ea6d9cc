import { canonical } from '../contracts/canonical.js';
import { namesCaseId } from './edit.js';
import { DROP_TEST, dropBeyondNoise } from './final-rate.js';
import type { Score } from './steps.js';

/**
 * The held-out set's rules (docs/held-out.md): cases kept apart from the
 * dataset, never planned into a batch, never quoted by prose, run only by the
 * baseline and the final check. Pure.
 */
interface CaseLike {
  id: string;
  input: unknown;
}

/**
 * Where a held-out set and a dataset share a case: the same id, or the same
 * input (compared as canonical JSON, so key order does not hide it). One line
 * per clash, naming both cases.
 */
export function heldOutClashes(dataset: readonly CaseLike[], heldOut: readonly CaseLike[]): string[] {
  const ids = new Set(dataset.map((c) => c.id));
  const inputs = new Map<string, string>();
  for (const c of dataset) if (!inputs.has(canonical(c.input))) inputs.set(canonical(c.input), c.id);
  const clashes: string[] = [];
  for (const c of heldOut) {
    if (ids.has(c.id)) clashes.push(`held-out case ${c.id} has the id of dataset case ${c.id}`);
    const same = inputs.get(canonical(c.input));
    if (same !== undefined) clashes.push(`held-out case ${c.id} has the same input as dataset case ${same}`);
  }
  return clashes;
}

/** The strings of an input a prose line could quote: the input itself when text, else every string inside it. */
function inputStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(inputStrings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(inputStrings);
  return [];
}

/**
 * The shortest input text that counts as quoted: shorter ones ("yes", "2+2")
 * turn up in ordinary prose. The same length as the tuning-to-the-test
 * warning for dataset cases.
 */
export const QUOTE_MIN = 20;

/** Lines an edit adds to one file, each with its line number in the edited file. */
export interface AddedText {
  file: string;
  /** Consecutive added lines as one text, and the line number of its first line. */
  blocks: Array<{ line: number; text: string }>;
}

export interface HeldOutQuote {
  file: string;
  line: number;
  case: string;
  what: 'id' | 'input';
  /** The quoted text, cut to 40 characters. */
  quoted: string;
}

/**
 * Where an edit's added lines name a held-out case's id or quote its input
 * verbatim (an input text of QUOTE_MIN characters or more, possibly over
 * several lines of one block). One entry per file and case, at the first line.
 */
export function heldOutQuotes(added: readonly AddedText[], heldOut: readonly CaseLike[]): HeldOutQuote[] {
  const out: HeldOutQuote[] = [];
  for (const f of added) {
    for (const c of heldOut) {
      const found = findQuote(f, c);
      if (found) out.push(found);
    }
  }
  return out;
}

function findQuote(f: AddedText, c: CaseLike): HeldOutQuote | null {
  const texts = inputStrings(c.input).map((s) => s.trim()).filter((s) => s.length >= QUOTE_MIN);
  for (const block of f.blocks) {
    if (namesCaseId(block.text, c.id)) {
      const lines = block.text.split('\n');
      const at = lines.findIndex((l) => namesCaseId(l, c.id));
      return { file: f.file, line: block.line + Math.max(0, at), case: c.id, what: 'id', quoted: c.id };
    }
    for (const s of texts) {
      const at = block.text.indexOf(s);
      if (at >= 0) {
        const line = block.line + (block.text.slice(0, at).match(/\n/g)?.length ?? 0);
        return { file: f.file, line, case: c.id, what: 'input', quoted: s.length > 40 ? `${s.slice(0, 37)}...` : s };
      }
    }
  }
  return null;
}

/** How a quote reads in the refusal: `prompts/x.md line 12: quotes the input of held-out case h-03 ("…")`. */
export function describeQuote(q: HeldOutQuote): string {
  return q.what === 'id'
    ? `${q.file} line ${q.line}: names held-out case ${q.case}`
    : `${q.file} line ${q.line}: quotes the input of held-out case ${q.case} ("${q.quoted}")`;
}

/** The baseline's numbers the final check compares with (state.baseline, when its held-out set is the current one). */
export interface BaselineScores {
  selection: Score;
  heldOut: Score | null;
}

/** What the final check knows of the held-out set: its cases, the baseline to compare with, and the noise allowed. */
export interface HeldOutInput {
  ids: readonly string[];
  baseline: BaselineScores | null;
  maxDrop: number;
  /** Why the held-out set is not compared (no baseline, or one of another held-out set), or null when it is. */
  unchecked: string | null;
}

/** The held-out rule's outcome: compared or not, how many cases fewer are right, and whether that fails the final check. */
export interface HeldOutJudgement {
  checked: boolean;
  drop: number;
  failed: boolean;
  /** One line for people: what was compared and what it means. */
  line: string;
}

/**
 * The final check fails when the held-out set got worse than the baseline by
 * more than `maxDrop` cases (right with the original prose, wrong with the
 * tuned prose) and by more than the noise explains: Newcombe's 95% interval
 * for the baseline's rate minus the tuned rate lies wholly above 0
 * (DROP_TEST, docs/held-out.md). Both must hold.
 */
export function judgeHeldOut(tuned: Score, input: HeldOutInput): HeldOutJudgement {
  const base = input.baseline?.heldOut ?? null;
  if (input.unchecked !== null || base === null) {
    return { checked: false, drop: 0, failed: false, line: `held-out drop not checked: ${input.unchecked ?? 'the baseline ran no held-out case'}` };
  }
  const drop = base.right - tuned.right;
  const test = dropBeyondNoise(base.right, base.cases, tuned.right, tuned.cases);
  const failed = drop > input.maxDrop && test.beyondNoise;
  const allowed = `heldOut.maxDrop is ${input.maxDrop}`;
  const noise = `${DROP_TEST}: ${signedPct(test.low)} to ${signedPct(test.high)}`;
  const outcome = failed ? 'FAILED, the tuning overfits its selection'
    : drop > input.maxDrop ? 'within the noise (the interval reaches 0)' : 'within the noise allowed';
  const line = drop > 0
    ? `held-out: ${tuned.right}/${tuned.cases} right, ${drop} fewer than the baseline's ${base.right}/${base.cases} (${allowed}; ${noise}): ${outcome}`
    : `held-out: ${tuned.right}/${tuned.cases} right, the baseline ${base.right}/${base.cases} (${allowed}): no drop`;
  return { checked: true, drop, failed, line };
}

const signedPct = (x: number) => `${x > 0 ? '+' : x < 0 ? '−' : ''}${Math.abs(Math.round(x * 100))}%`;

/** Sums a set's results into a score: right by `isRight`, tokens and cost as spent. */
export function scoreOf<R extends { id: string; tokens: number; costUsd: number }>(results: readonly R[], isRight: (id: string) => boolean): Score {
  return {
    right: results.filter((r) => isRight(r.id)).length,
    cases: results.length,
    tokens: results.reduce((s, r) => s + r.tokens, 0),
    costUsd: results.reduce((s, r) => s + r.costUsd, 0),
  };
}

/** One row of the side-by-side table: a set (selection, held-out), tuned against baseline. */
export interface SideBySideRow {
  set: 'selection' | 'held-out';
  tuned: Score;
  baseline: Score | null;
}

export function sideBySide(tuned: { selection: Score; heldOut: Score | null }, baseline: BaselineScores | null): SideBySideRow[] {
  const rows: SideBySideRow[] = [{ set: 'selection', tuned: tuned.selection, baseline: baseline?.selection ?? null }];
  if (tuned.heldOut) rows.push({ set: 'held-out', tuned: tuned.heldOut, baseline: baseline?.heldOut ?? null });
  return rows;
}

const fmtInt = (n: number) => n.toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(4)}`;
const right = (s: Score | null) => (s ? `${s.right}/${s.cases}` : '–');

/** The side-by-side table as markdown: right, tokens, cost; tuned vs baseline. */
export function renderSideBySide(rows: readonly SideBySideRow[]): string[] {
  const out = ['| set | right (tuned) | right (baseline) | tokens (tuned) | tokens (baseline) | cost (tuned) | cost (baseline) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of rows) {
    out.push(`| ${r.set} | ${right(r.tuned)} | ${right(r.baseline)} | ${fmtInt(r.tuned.tokens)} | ${r.baseline ? fmtInt(r.baseline.tokens) : '–'} | ${usd(r.tuned.costUsd)} | ${r.baseline ? usd(r.baseline.costUsd) : '–'} |`);
  }
  return out;
}

/** The same table as plain text lines, for a terminal. */
export function renderSideBySidePlain(rows: readonly SideBySideRow[]): string[] {
  return rows.map((r) => `${r.set}: ${right(r.tuned)} right tuned vs ${right(r.baseline)} baseline; ${fmtInt(r.tuned.tokens)} vs ${r.baseline ? fmtInt(r.baseline.tokens) : '–'} tokens; ${usd(r.tuned.costUsd)} vs ${r.baseline ? usd(r.baseline.costUsd) : '–'}`);
}

/** What to do when the held-out set is not compared. */
export const BASELINE_HINT = 'git tune baseline   # runs the original prose on the selection and the held-out set once';
