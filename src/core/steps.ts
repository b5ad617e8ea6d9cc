import crypto, { createHash } from 'node:crypto';
import { DIFFICULT_REASONS, type DifficultReason } from '../contracts/values.js';
import { formatMessage, messageTrailers, parseMessage, trailerValue, trailerValues, type Trailer } from './trailers.js';

/**
 * Every step kind of the method and its commit message (docs/git-model.md).
 * A step is data; `formatStep` and `parseStep` are the pair that turns it into
 * the trailers native git shows (`git log --format=%(trailers)`) and back.
 */
export const VERDICTS = ['PROGRESS', 'NO CHANGE', 'REGRESSION', 'MIXED', 'CORRECT', 'PASSED', 'VOID', 'VERIFIED', 'FAILED'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** How one set of cases did in a run: right of cases, and what it spent (the baseline, the final check's held-out set). */
export interface Score {
  right: number;
  cases: number;
  tokens: number;
  costUsd: number;
}

/** `3/4 right, 1200 tokens, $0.004000`: a score as a trailer value, and back. */
export function formatScore(s: Score): string {
  return `${s.right}/${s.cases} right, ${s.tokens} tokens, $${s.costUsd.toFixed(6)}`;
}

export function parseScore(value: string | undefined): Score | null {
  const m = value === undefined ? null : /^(\d+)\/(\d+) right, (\d+) tokens, \$(\d+(?:\.\d+)?)$/.exec(value.trim());
  return m ? { right: Number(m[1]), cases: Number(m[2]), tokens: Number(m[3]), costUsd: Number(m[4]) } : null;
}

export type DifficultChange =
  | { op: 'add'; id: string; reason: DifficultReason }
  | { op: 'fix'; id: string };

export type StepData =
  | { step: 'init'; tuning: string }
  | { step: 'config'; keys: string[] }
  | { step: 'dataset'; cases: number; rev: string; heldOut?: { cases: number; rev: string } }
  | { step: 'select'; selected: number; total: number }
  | { step: 'plan'; batch: number; size: number; kind: 'new' | 'difficult'; new: string[]; recheck: string[] }
  | { step: 'run-plan'; run: string }
  | { step: 'run-start'; run: string; concurrency: number }
  | {
      step: 'run';
      run: string;
      concurrency: number;
      cases: number;
      void: string | null;
      stopped: string | null;
      tokens: number;
      costUsd: number;
      /** The prose the run ran (`proseDigest`, src/app/prose.ts): absent in histories written before it was recorded. */
      prose?: string;
      /** Of `tokens`, what the repeats of flips spent (docs/method.md#noise): absent when none ran. */
      repeatTokens?: number;
    }
  | { step: 'run-stop'; run: string; reason: string; tokens: number; costUsd: number }
  | {
      step: 'grade'; run: string; verdict: Verdict; wrong: string[]; review: boolean; keep?: Keep; heldOut?: Score;
      /** The prose the branch holds once this grade (and the reverts before it) is recorded: a half passes on a run of it (docs/method.md#noise). */
      prose?: string;
      flaky?: string[];
    }
  | {
      /** The original prose (the init commit's) run on the selection and the held-out set (docs/held-out.md). */
      step: 'baseline';
      init: string;
      selection: Score;
      heldOut: Score | null;
      heldOutRev: string | null;
    }
  | { step: 'edit'; run: string; aims: string[] | null }
  | { step: 'revert'; reverts: string[] }
  | { step: 'difficult' }
  | { step: 'candidate'; run: string }
  | { step: 'checkpoint'; batch: number }
  | { step: 'note' };

/**
 * Unconfirmed edits a grade keeps on purpose (`git tune grade --keep <commit>
 * --why "…"`): who kept them (the grade's author) and why, so the history
 * says it (docs/grading.md, "Edits settle at grading").
 */
export interface Keep {
  edits: string[];
  why: string;
  by: string;
}

export type StepKind = StepData['step'];
export const STEP_KINDS: readonly StepKind[] = [
  'init', 'config', 'dataset', 'select', 'plan', 'run-plan', 'run-start', 'run', 'run-stop', 'grade', 'edit', 'revert',
  'difficult', 'candidate', 'checkpoint', 'note', 'baseline',
];

export type Step = StepData & { tuning: string; difficult: DifficultChange[] };

/**
 * A step commit as core decides it (a grade and its reverts): the step, the
 * message and the files it writes (null: deleted). The app's writer takes it
 * as its StepCommit (src/app/commit.ts), which adds what only the app knows.
 */
export interface StepCommitData {
  step: Step;
  subject: string;
  body?: string;
  changes: ReadonlyMap<string, { content: string } | null>;
  /** Paths read from the working tree on purpose (findings.md, judge.json): not "dirty". */
  fromWorktree?: ReadonlySet<string>;
}

const NONE = '(none)';

export function formatIds(ids: readonly string[]): string {
  return ids.length === 0 ? NONE : ids.join(',');
}

export function parseIds(value: string | undefined): string[] {
  if (value === undefined || value === NONE || value === '') return [];
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

function formatDifficult(change: DifficultChange): string {
  return change.op === 'add' ? `add ${change.id} ${change.reason}` : `fix ${change.id}`;
}

function parseDifficult(value: string): DifficultChange | null {
  const parts = value.trim().split(/\s+/);
  if (parts[0] === 'add' && parts.length === 3 && (DIFFICULT_REASONS as readonly string[]).includes(parts[2]!)) {
    return { op: 'add', id: parts[1]!, reason: parts[2] as DifficultReason };
  }
  if (parts[0] === 'fix' && parts.length === 2) return { op: 'fix', id: parts[1]! };
  return null;
}

function stepTrailers(step: Step): Trailer[] {
  const t: Trailer[] = [['Tune-Tuning', step.tuning], ['Tune-Step', step.step]];
  switch (step.step) {
    case 'init':
    case 'difficult':
    case 'note':
      break;
    case 'config':
      t.push(['Tune-Keys', step.keys.join(',') || NONE]);
      break;
    case 'dataset':
      t.push(['Tune-Cases', String(step.cases)], ['Tune-Dataset-Rev', step.rev]);
      if (step.heldOut) t.push(['Tune-Held-Out', String(step.heldOut.cases)], ['Tune-Held-Out-Rev', step.heldOut.rev]);
      break;
    case 'select':
      t.push(['Tune-Selected', String(step.selected)], ['Tune-Total', String(step.total)]);
      break;
    case 'plan':
      t.push(
        ['Tune-Batch', String(step.batch)],
        ['Tune-Size', String(step.size)],
        ['Tune-Kind', step.kind],
        ['Tune-New', formatIds(step.new)],
        ['Tune-Recheck', formatIds(step.recheck)],
      );
      break;
    case 'run-plan':
      t.push(['Tune-Run', step.run]);
      break;
    case 'run-start':
      t.push(['Tune-Run', step.run], ['Tune-Concurrency', String(step.concurrency)]);
      break;
    case 'run':
      t.push(
        ['Tune-Run', step.run],
        ['Tune-Concurrency', String(step.concurrency)],
        ['Tune-Cases', String(step.cases)],
        ['Tune-Tokens', String(step.tokens)],
        ['Tune-Cost-Usd', step.costUsd.toFixed(6)],
      );
      if (step.void !== null) t.push(['Tune-Void', oneLine(step.void)]);
      if (step.stopped !== null) t.push(['Tune-Stopped', oneLine(step.stopped)]);
      if (step.prose !== undefined) t.push(['Tune-Prose', step.prose]);
      if (step.repeatTokens) t.push(['Tune-Repeat-Tokens', String(step.repeatTokens)]);
      break;
    case 'run-stop':
      t.push(
        ['Tune-Run', step.run],
        ['Tune-Stopped', oneLine(step.reason)],
        ['Tune-Tokens', String(step.tokens)],
        ['Tune-Cost-Usd', step.costUsd.toFixed(6)],
      );
      break;
    case 'grade':
      t.push(
        ['Tune-Run', step.run],
        ['Tune-Verdict', step.verdict],
        ['Tune-Wrong', formatIds(step.wrong)],
        ['Tune-Review', step.review ? 'yes' : 'no'],
      );
      if (step.keep) {
        for (const oid of step.keep.edits) t.push(['Tune-Keep', oid]);
        t.push(['Tune-Keep-Why', oneLine(step.keep.why)], ['Tune-Kept-By', oneLine(step.keep.by)]);
      }
      if (step.heldOut) t.push(['Tune-Held-Out-Score', formatScore(step.heldOut)]);
      if (step.prose !== undefined) t.push(['Tune-Prose', step.prose]);
      if (step.flaky?.length) t.push(['Tune-Flaky', formatIds(step.flaky)]);
      break;
    case 'baseline':
      t.push(['Tune-Baseline-Of', step.init], ['Tune-Selection-Score', formatScore(step.selection)]);
      if (step.heldOut) t.push(['Tune-Held-Out-Score', formatScore(step.heldOut)], ['Tune-Held-Out-Rev', step.heldOutRev ?? NONE]);
      break;
    case 'edit':
      t.push(['Tune-Run', step.run]);
      if (step.aims !== null) t.push(['Tune-Aims', formatIds(step.aims)]);
      break;
    case 'revert':
      for (const oid of step.reverts) t.push(['Tune-Reverts', oid]);
      break;
    case 'candidate':
      t.push(['Tune-Run', step.run]);
      break;
    case 'checkpoint':
      t.push(['Tune-Batch', String(step.batch)]);
      break;
  }
  for (const change of step.difficult) t.push(['Tune-Difficult', formatDifficult(change)]);
  return t;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim() || 'unknown';
}

/**
 * The seal: the last trailer of every step message the tool writes, a
 * checksum over the trailers before it. The fold trusts only sealed steps,
 * so `Tune-Step: grade` / `Tune-Verdict: PASSED` typed into a hand commit
 * (or a step's trailers edited) cannot fake a grade: such a commit is read
 * as a hand commit, with a warning in `git tune status`. It guards against
 * hand-made and mistaken trailers, not against someone who recomputes it on
 * purpose (who could as well run `git tune grade`, which enforces the rules).
 * Parents are left out so a history that travels (push, pull, clone) stays
 * sealed.
 */
export const SEAL_TRAILER = 'Tune-Seal';
const SEAL_LOWER = SEAL_TRAILER.toLowerCase();

// One-shot hashing (Node 20.12+) costs a third of a Hash object's: the fold checks a seal per commit.
// Looked up at the first seal, not at load: a command that checks none loads no node:crypto (scripts/bundle.mjs).
let oneShot: ((algorithm: string, data: string) => string) | null | undefined;
const sha256Hex = (text: string): string => {
  oneShot ??= (crypto as { hash?: (algorithm: string, data: string) => string }).hash ?? null;
  return oneShot ? oneShot('sha256', text) : createHash('sha256').update(text).digest('hex');
};
const SEAL_VERSION = 'v1';

export function sealOf(trailers: readonly Trailer[]): string {
  return sealOfFirst(trailers, trailers.length);
}

/** The seal of the first `count` trailers (a loop: it runs once per commit of a walk). */
function sealOfFirst(trailers: readonly Trailer[], count: number): string {
  let text = 'git-tune step seal\n';
  for (let i = 0; i < count; i++) {
    const trailer = trailers[i]!;
    const key = trailer[0];
    const value = trailer[1];
    if (key.length !== SEAL_LOWER.length || key.toLowerCase() !== SEAL_LOWER) text += `${key}: ${value.trim()}\n`;
  }
  return `${SEAL_VERSION} ${sha256Hex(text).slice(0, 16)}`;
}

/** Whether a message's trailers end with a seal that matches them. */
export function isSealed(message: string): boolean {
  return sealedTrailers(parseMessage(message).trailers);
}

function sealedTrailers(trailers: readonly Trailer[]): boolean {
  const last = trailers[trailers.length - 1];
  return last !== undefined && last[0] === SEAL_TRAILER && last[1] === sealOfFirst(trailers, trailers.length - 1);
}

/**
 * Why a commit's step trailers are not trusted, or null (sealed, or no
 * `Tune-Step` for this tuning at all). For the fold's warnings.
 */
export function unsealedStep(message: string, tuning: string): string | null {
  const { trailers } = parseMessage(message);
  const kind = trailerValue(trailers, 'Tune-Step');
  if (kind === undefined || trailerValue(trailers, 'Tune-Tuning') !== tuning || isSealed(message)) return null;
  return trailerValue(trailers, SEAL_TRAILER) === undefined
    ? `Tune-Step: ${kind} without the ${SEAL_TRAILER} git-tune writes`
    : `Tune-Step: ${kind} whose trailers do not match their ${SEAL_TRAILER} (edited after git-tune wrote them)`;
}

export function formatStep(step: Step, subject: string, body = ''): string {
  const trailers = stepTrailers(step);
  return formatMessage({ subject, body, trailers: [...trailers, [SEAL_TRAILER, sealOf(trailers)]] });
}

/** Adds (or renews) the seal of a message's trailers: for messages the tool composes itself (hooks). */
export function sealMessage(message: string): string {
  const parsed = parseMessage(message);
  const trailers = parsed.trailers.filter(([key]) => key !== SEAL_TRAILER);
  return formatMessage({ ...parsed, trailers: [...trailers, [SEAL_TRAILER, sealOf(trailers)]] });
}

/** The step a sealed commit message records, or null when it carries no (trusted) tuning step. */
export function parseStep(message: string): Step | null {
  const trailers = messageTrailers(message);
  return sealedTrailers(trailers) ? stepOf(trailers) : null;
}

/** The step the trailers say, sealed or not (for tests and diagnostics only). */
export function parseStepTrailers(message: string): Step | null {
  return stepOf(parseMessage(message).trailers);
}

/** Trailer keys as git-tune writes them, lower-cased once (a sealed step's keys are these). */
const LOWER_KEYS = new Map<string, string>();

function stepOf(trailers: readonly Trailer[]): Step | null {
  // One pass: the first value of each key, case-insensitively (as trailerValue reads it), and every Tune-Difficult.
  const first: Record<string, string> = Object.create(null) as Record<string, string>;
  const difficult: DifficultChange[] = [];
  // Indexed, not destructured: early in a walk this runs unoptimized, where `[key, value] =` walks an iterator.
  for (let i = 0; i < trailers.length; i++) {
    const trailer = trailers[i]!;
    const key = trailer[0];
    const value = trailer[1];
    let lower = LOWER_KEYS.get(key);
    if (lower === undefined) {
      lower = key.toLowerCase();
      if (LOWER_KEYS.size < 64) LOWER_KEYS.set(key, lower);
    }
    if (lower === 'tune-difficult') {
      const change = parseDifficult(value);
      if (change !== null) difficult.push(change);
    }
    if (first[lower] === undefined) first[lower] = value;
  }
  // Looked up by lower-case key.
  const get = (lower: string): string | undefined => first[lower];
  const tuning = get('tune-tuning');
  const kind = get('tune-step');
  if (tuning === undefined || kind === undefined) return null;
  const num = (key: string) => {
    const v = get(key);
    const n = v === undefined ? NaN : Number(v);
    return Number.isFinite(n) ? n : null;
  };
  const run = get('tune-run');
  switch (kind as StepKind) {
    case 'init':
      return { tuning, difficult, step: 'init' };
    case 'difficult':
      return { tuning, difficult, step: 'difficult' };
    case 'note':
      return { tuning, difficult, step: 'note' };
    case 'config':
      return { tuning, difficult, step: 'config', keys: parseIds(get('tune-keys')) };
    case 'dataset': {
      const cases = num('tune-cases');
      if (cases === null) return null;
      const heldOut = num('tune-held-out');
      return {
        tuning, difficult, step: 'dataset', cases, rev: get('tune-dataset-rev') ?? '',
        ...(heldOut !== null ? { heldOut: { cases: heldOut, rev: get('tune-held-out-rev') ?? '' } } : {}),
      };
    }
    case 'select': {
      const selected = num('tune-selected');
      return selected === null ? null : { tuning, difficult, step: 'select', selected, total: num('tune-total') ?? selected };
    }
    case 'plan': {
      const batch = num('tune-batch');
      const planKind = get('tune-kind') === 'difficult' ? 'difficult' : 'new';
      if (batch === null) return null;
      const ids = parseIds(get('tune-new'));
      return {
        tuning, difficult, step: 'plan', batch, size: num('tune-size') ?? ids.length, kind: planKind,
        new: ids, recheck: parseIds(get('tune-recheck')),
      };
    }
    case 'run-plan':
      return run === undefined ? null : { tuning, difficult, step: 'run-plan', run };
    case 'run-start':
      return run === undefined ? null : { tuning, difficult, step: 'run-start', run, concurrency: num('tune-concurrency') ?? 1 };
    case 'run': {
      if (run === undefined) return null;
      const prose = get('tune-prose');
      return {
        tuning, difficult, step: 'run', run,
        concurrency: num('tune-concurrency') ?? 1,
        cases: num('tune-cases') ?? 0,
        void: get('tune-void') ?? null,
        stopped: get('tune-stopped') ?? null,
        tokens: num('tune-tokens') ?? 0,
        costUsd: num('tune-cost-usd') ?? 0,
        ...(prose !== undefined ? { prose } : {}),
        ...(num('tune-repeat-tokens') ? { repeatTokens: num('tune-repeat-tokens')! } : {}),
      };
    }
    case 'run-stop':
      return run === undefined
        ? null
        : {
            tuning, difficult, step: 'run-stop', run, reason: get('tune-stopped') ?? 'stopped',
            tokens: num('tune-tokens') ?? 0, costUsd: num('tune-cost-usd') ?? 0,
          };
    case 'grade': {
      const verdict = get('tune-verdict');
      if (run === undefined || !(VERDICTS as readonly string[]).includes(verdict ?? '')) return null;
      const kept = trailerValues(trailers, 'Tune-Keep');
      const heldOut = parseScore(get('tune-held-out-score'));
      const prose = get('tune-prose');
      return {
        tuning, difficult, step: 'grade', run, verdict: verdict as Verdict,
        wrong: parseIds(get('tune-wrong')), review: get('tune-review') === 'yes',
        ...(kept.length > 0 ? { keep: { edits: kept, why: get('tune-keep-why') ?? '', by: get('tune-kept-by') ?? '' } } : {}),
        ...(heldOut ? { heldOut } : {}),
        ...(prose !== undefined ? { prose } : {}),
        ...(get('tune-flaky') ? { flaky: parseIds(get('tune-flaky')) } : {}),
      };
    }
    case 'baseline': {
      const init = get('tune-baseline-of');
      const selection = parseScore(get('tune-selection-score'));
      if (init === undefined || selection === null) return null;
      const heldOut = parseScore(get('tune-held-out-score'));
      const rev = get('tune-held-out-rev');
      return { tuning, difficult, step: 'baseline', init, selection, heldOut, heldOutRev: heldOut && rev && rev !== NONE ? rev : null };
    }
    case 'edit': {
      if (run === undefined) return null;
      const aims = get('tune-aims');
      return { tuning, difficult, step: 'edit', run, aims: aims === undefined ? null : parseIds(aims) };
    }
    case 'revert':
      return { tuning, difficult, step: 'revert', reverts: trailerValues(trailers, 'Tune-Reverts') };
    case 'candidate':
      return run === undefined ? null : { tuning, difficult, step: 'candidate', run };
    case 'checkpoint': {
      const batch = num('tune-batch');
      return batch === null ? null : { tuning, difficult, step: 'checkpoint', batch };
    }
    default:
      return null;
  }
}
