import { formatMessage, parseMessage, trailerValue, trailerValues } from './trailers.js';

/**
 * Steps a rewrite left behind (a `git reset`, a rebase, `git tune undo`): their
 * run tags and logs are moved aside under `refs/tune-abandoned/<name>/<n>/`,
 * one folder per move, never deleted and never in the way of a new run of the
 * same name (docs/git-model.md). Names and the record's message, as data.
 */
export const abandonedRoot = (tuning: string) => `refs/tune-abandoned/${tuning}`;

/** The refs of move `n`: its record commit, the old tip, the logs ref before, each run tag. */
export const abandonedRecordRef = (tuning: string, n: number) => `${abandonedRoot(tuning)}/${n}/record`;
export const abandonedTipRef = (tuning: string, n: number) => `${abandonedRoot(tuning)}/${n}/tip`;
export const abandonedLogsRef = (tuning: string, n: number) => `${abandonedRoot(tuning)}/${n}/logs`;
export const abandonedTagRef = (tuning: string, n: number, run: string) => `${abandonedRoot(tuning)}/${n}/tags/${run}`;

export type AbandonedPart = { n: number; part: 'record' | 'tip' | 'logs' } | { n: number; part: 'tag'; run: string };

/** What a ref under abandonedRoot(tuning) is; null for anything else. */
export function parseAbandonedRef(tuning: string, ref: string): AbandonedPart | null {
  const root = `${abandonedRoot(tuning)}/`;
  if (!ref.startsWith(root)) return null;
  const m = /^([1-9]\d*)\/(record|tip|logs|tags\/(.+))$/.exec(ref.slice(root.length));
  if (!m) return null;
  const n = Number(m[1]);
  if (m[3] !== undefined) return { n, part: 'tag', run: m[3] };
  return { n, part: m[2] as 'record' | 'tip' | 'logs' };
}

export interface AbandonedRun {
  run: string;
  /** What the run tag held: the run commit no longer on the branch. */
  commit: string;
}

/** One move aside, as its record commit says it. */
export interface AbandonRecord {
  tuning: string;
  /** When they were moved aside (ISO 8601). */
  at: string;
  why: string;
  /** Steps (commits of the first-parent line) no longer on the branch; counted from `from` when known, else from the newest run. */
  steps: number;
  /** The branch tip before the rewrite, when known (git tune undo, the branch's reflog). */
  from: string | null;
  /** The branch tip when they were moved aside. */
  tip: string;
  runs: AbandonedRun[];
}

export function formatAbandonRecord(r: AbandonRecord): string {
  const what = r.runs.length === 1 ? `run ${r.runs[0]!.run}` : `${r.runs.length} runs`;
  return formatMessage({
    subject: `tune(${r.tuning}): ${r.steps} abandoned step${r.steps === 1 ? '' : 's'} (${what}) moved aside: ${r.why}`,
    body: 'Kept by git-tune so a new run of the same name is not in their way; see `git tune log --abandoned`.',
    trailers: [
      ['Tune-Tuning', r.tuning],
      ['Tune-Abandoned-At', r.at],
      ['Tune-Abandoned-Why', r.why],
      ['Tune-Abandoned-Steps', String(r.steps)],
      ['Tune-Abandoned-From', r.from ?? '(unknown)'],
      ['Tune-Abandoned-Tip', r.tip],
      ...r.runs.map((run): [string, string] => ['Tune-Abandoned-Run', `${run.run} ${run.commit}`]),
    ],
  });
}

export function parseAbandonRecord(message: string): AbandonRecord | null {
  const { trailers } = parseMessage(message);
  const tuning = trailerValue(trailers, 'Tune-Tuning');
  const why = trailerValue(trailers, 'Tune-Abandoned-Why');
  const at = trailerValue(trailers, 'Tune-Abandoned-At') ?? '';
  const tip = trailerValue(trailers, 'Tune-Abandoned-Tip');
  const steps = Number(trailerValue(trailers, 'Tune-Abandoned-Steps'));
  if (!tuning || why === undefined || !tip || !Number.isInteger(steps)) return null;
  const from = trailerValue(trailers, 'Tune-Abandoned-From');
  const runs = trailerValues(trailers, 'Tune-Abandoned-Run').map((v) => {
    const [run, commit] = v.split(' ');
    return { run: run!, commit: commit ?? '' };
  });
  return { tuning, at, why, steps, from: from && /^[0-9a-f]{40}$/.test(from) ? from : null, tip, runs };
}

/**
 * The run tags that are in the way: a tag whose commit is not the run commit
 * the branch's history holds for that run (the run was abandoned by a
 * rewrite, or the history has no such run any more).
 */
export function tagsOffTheBranch(tags: readonly AbandonedRun[], runCommit: (run: string) => string | null): AbandonedRun[] {
  return tags.filter((t) => runCommit(t.run) !== t.commit);
}

/**
 * Whether the run tags agree with the branch's runs as they are: every tag on
 * its run's commit, every run commit tagged. Then there is nothing to settle.
 */
export function tagsMatchRuns(tags: readonly AbandonedRun[], runs: ReadonlyMap<string, { runOid: string | null }>): boolean {
  if (tagsOffTheBranch(tags, (run) => runs.get(run)?.runOid ?? null).length > 0) return false;
  const tagged = new Set(tags.map((t) => t.run));
  for (const [run, r] of runs) if (r.runOid && !tagged.has(run)) return false;
  return true;
}
