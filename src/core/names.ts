/**
 * Names that appear in refs, folders and trailers, each a parse/format pair:
 * run names (`batch03-nomem-run2`, `final-check`), the tuning branch
 * (`tune/<name>`) and run tags (`tune/<name>/<run>`).
 */
export type Half = 'nomem' | 'mem';
export const HALVES: readonly Half[] = ['nomem', 'mem'];

export type RunId =
  | { kind: 'batch'; batch: number; half: Half; number: number }
  /** The final check; `number` from 2 on when a VOID one ran again (`final-check-run2`). */
  | { kind: 'final'; number?: number };

export const FINAL_RUN = 'final-check';
const FINAL_RERUN = /^final-check-run([1-9]\d*)$/;

/** The name of the n-th final check of a tuning: `final-check`, then `final-check-run2`, … (a VOID one runs again). */
export function finalRunName(n: number): string {
  return formatRunName({ kind: 'final', number: n });
}

/** Whether `name` is a run of the final check (the first or a re-run). */
export function isFinalRun(name: string): boolean {
  return parseRunName(name)?.kind === 'final';
}

const RUN_NAME = /^batch(\d{2,})-(nomem|mem)-run([1-9]\d*)$/;
const TUNING_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A target model's name where it is part of a tuning's name (`support@gpt-4o`): the characters of a tuning name. */
const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CASE_ID = /^[A-Za-z0-9._-]+$/;

export function formatRunName(run: RunId): string {
  if (run.kind === 'final') return run.number === undefined || run.number === 1 ? FINAL_RUN : `${FINAL_RUN}-run${run.number}`;
  return `batch${String(run.batch).padStart(2, '0')}-${run.half}-run${run.number}`;
}

export function parseRunName(name: string): RunId | null {
  if (name === FINAL_RUN) return { kind: 'final' };
  const rerun = FINAL_RERUN.exec(name);
  // `final-check-run1` is not a name we write: the first is `final-check`.
  if (rerun) return Number(rerun[1]) >= 2 ? { kind: 'final', number: Number(rerun[1]) } : null;
  const m = RUN_NAME.exec(name);
  if (!m) return null;
  const batch = Number(m[1]);
  // `batch3` and `batch003` are not the names we write: keep the pair exact.
  if (batch < 1 || String(batch).padStart(2, '0') !== m[1]) return null;
  return { kind: 'batch', batch, half: m[2] as Half, number: Number(m[3]) };
}

const plainName = (name: string) => TUNING_NAME.test(name) && !name.endsWith('.lock') && !name.includes('..') && !name.endsWith('.');

/**
 * A tuning's name: letters, digits, `.`, `_`, `-`; or a fleet's tuning of one
 * target, `<fleet>@<target>` (docs/git-model.md, Fleets), both parts such names.
 */
export function isValidTuningName(name: string): boolean {
  const fleet = parseFleetTuning(name);
  return fleet ? plainName(fleet.fleet) && isValidTargetName(fleet.target) : plainName(name);
}

/** Whether a target's name can be part of a fleet tuning's name (and so of its branch and folder). */
export function isValidTargetName(target: string): boolean {
  return TARGET_NAME.test(target) && !target.endsWith('.lock') && !target.includes('..') && !target.endsWith('.');
}

/** The tuning of `target` in fleet `fleet`: branch `tune/<fleet>@<target>`, files in `.tune/<fleet>@<target>/`. */
export const fleetTuningName = (fleet: string, target: string) => `${fleet}@${target}`;

/** `support@gpt-4o` → {fleet: support, target: gpt-4o}; null for a name without exactly one `@`. */
export function parseFleetTuning(name: string): { fleet: string; target: string } | null {
  const at = name.indexOf('@');
  if (at <= 0 || at !== name.lastIndexOf('@') || at === name.length - 1) return null;
  return { fleet: name.slice(0, at), target: name.slice(at + 1) };
}

export function isValidCaseId(id: string): boolean {
  return CASE_ID.test(id) && id !== '.' && id !== '..';
}

export const branchName = (tuning: string) => `tune/${tuning}`;
export const branchRef = (tuning: string) => `refs/heads/tune/${tuning}`;
export const tagName = (tuning: string, run: string) => `tune/${tuning}/${run}`;
export const tagRef = (tuning: string, run: string) => `refs/tags/tune/${tuning}/${run}`;

export function parseBranchName(branch: string): string | null {
  const m = /^(?:refs\/heads\/)?tune\/([^/]+)$/.exec(branch);
  return m && isValidTuningName(m[1]!) ? m[1]! : null;
}

/** The tuning named, or the one whose branch HEAD (`head`, a ref or null when detached) names; null when neither. */
export function namedTuning(requested: string | undefined, head: string | null): { name: string; onBranch: boolean } | null {
  const current = head ? parseBranchName(head) : null;
  if (requested) return { name: requested, onBranch: current === requested };
  return current ? { name: current, onBranch: true } : null;
}

export function parseTagName(tag: string): { tuning: string; run: string } | null {
  const m = /^(?:refs\/tags\/)?tune\/([^/]+)\/([^/]+)$/.exec(tag);
  if (!m || !isValidTuningName(m[1]!) || parseRunName(m[2]!) === null) return null;
  return { tuning: m[1]!, run: m[2]! };
}

/** The store folder (under `.git/tune/<name>/runs/`) of repeat `n` of a run, and the run a store folder belongs to. */
export const repeatStoreName = (run: string, n: number) => `${run}.repeat-${n}`;
export const runOfStore = (folder: string) => folder.replace(/\.repeat-\d+$/, '');

export const batchLabel = (batch: number) => `batch${String(batch).padStart(2, '0')}`;
