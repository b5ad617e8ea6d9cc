import { createHash } from 'node:crypto';
import type { JudgeFile } from '../contracts/judge.js';
import { globBase, matcher } from '../core/glob.js';
import { isVoidRun, type RunState } from '../core/fold.js';
import { caseNoise, observationsOf, type CaseNoise, type Observation } from '../core/noise.js';
import { memoryPath } from '../core/paths.js';
import { readRunJudge, readRunResults } from './results.js';
import type { Tuning } from './tuning.js';

/**
 * Repeats from the history (docs/method.md#noise): runs of one case under the
 * same prose and memory are repeats of each other. A run's *condition* is the
 * prose it ran (the prose and memory-policy files at its run-start commit)
 * and the memory it started from (none; the candidate; the last good
 * memory), as content ids; each recorded answer (first and repeats) is an
 * observation under it. Core folds them into each case's right-rate and
 * token spread (`caseNoise`). Reads only.
 */

/** The prose and memory a run ran on, as one id: runs with the same id are repeats of each other. */
export async function conditionOf(tuning: Tuning, run: RunState): Promise<string> {
  const globs = [...(tuning.config?.prose ?? []), ...(tuning.config?.memoryPolicy ?? [])];
  const isProse = matcher(globs);
  const files = new Map<string, string>();
  for (const base of new Set(globs.map(globBase).filter((b): b is string => b !== null))) {
    for (const f of await tuning.repo.listFiles(run.startOid, base)) if (isProse(f.path)) files.set(f.path, f.oid);
  }
  const memory = run.half === 'nomem' ? 'none' : await tuning.repo.treeOidAt(run.startOid, memoryPath(tuning.dir, run.half === 'mem' ? 'candidate' : 'last-good'));
  const hash = createHash('sha1');
  for (const [p, oid] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${p}\0${oid}\n`);
  hash.update(`memory\0${run.half === 'nomem' ? 'none' : (memory ?? 'empty')}`);
  return hash.digest('hex');
}

/** Every recorded answer of the history's finished, not void runs (judged ones by their judge.json), with its run's condition. */
export async function historyObservations(tuning: Tuning, opts: { until?: RunState; exclude?: string } = {}): Promise<{ observations: Map<string, Observation[]>; conditions: Map<string, string> }> {
  const observations = new Map<string, Observation[]>();
  const conditions = new Map<string, string>();
  const runs = [...tuning.state.runs.values()]
    .filter((r) => r.finished && r.runOid && !isVoidRun(r) && r.name !== opts.exclude && (!opts.until || r.startIndex <= opts.until.startIndex))
    .sort((a, b) => a.startIndex - b.startIndex);
  for (const run of runs) {
    const condition = await conditionOf(tuning, run);
    conditions.set(run.name, condition);
    const { results } = await readRunResults(tuning, run.name);
    const judge: JudgeFile = await readRunJudge(tuning, run.name);
    for (const r of results) {
      const graded = run.grade ? run.grade.wrong.includes(r.id) : undefined;
      const list = observations.get(r.id) ?? [];
      list.push(...observationsOf(run.name, condition, r, judge, graded));
      observations.set(r.id, list);
    }
  }
  return { observations, conditions };
}

/** Each case's noise from the history: over every answer, or under one condition only. */
export function noiseOf(observations: ReadonlyMap<string, readonly Observation[]>, condition?: string): Map<string, CaseNoise> {
  const out = new Map<string, CaseNoise>();
  for (const [id, obs] of observations) {
    const under = condition === undefined ? obs : obs.filter((o) => o.condition === condition);
    if (under.length > 0) out.set(id, caseNoise(id, under));
  }
  return out;
}

/** Every case's noise over the whole history, by id (for `status --json`). */
export async function casesNoise(tuning: Tuning): Promise<Record<string, CaseNoise>> {
  const all = noiseOf((await historyObservations(tuning)).observations);
  return Object.fromEntries([...all].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
