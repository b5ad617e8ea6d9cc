import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Case } from '../contracts/dataset.js';
import type { CaseRepeat, CaseResult } from '../contracts/result.js';
import { stuckEntries, viewDifficult } from '../core/difficult.js';
import { FINAL_RUN, repeatStoreName, runOfStore } from '../core/names.js';
import { repeatsDue, type FlipDue } from '../core/noise.js';
import { localPath } from '../core/paths.js';
import { spentBeforeRun, type Spent } from '../core/run-due.js';
import { keptWorkspaceDir } from '../run/case.js';
import type { CaseLogs } from '../run/logs.js';
import { RunStore } from '../run/store.js';
import type { Tuning } from './tuning.js';

/**
 * A flip is re-run before it decides (docs/method.md#noise): once a run's
 * cases have all ended, and before its run commit, the cases whose one
 * answer would decide are run again `noise.repeats` times on the same prose
 * and memory. Each repeat is a real runner execution kept like a case (a
 * store of its own, so a stopped run resumes its repeats), recorded in the
 * case's `repeats` in results.json and its logs under `<run>/<case>/repeat-<n>/`.
 */

/** Where repeat `n` of a run is kept while the run is not recorded. */
export const repeatStore = (tuning: Tuning, run: string, n: number) => new RunStore(tuning.repo.gitdir, tuning.name, repeatStoreName(run, n));

/**
 * What the stores of a run not recorded yet hold, first answers and repeats:
 * spent already, so the budget counts it before the run commit does.
 */
export async function keptUsage(tuning: Tuning, run: string): Promise<Spent> {
  const folders = await fs.readdir(localPath(tuning.repo.gitdir, tuning.name, 'runs')).catch(() => [] as string[]);
  let used: Spent = { tokens: 0, costUsd: 0 };
  for (const folder of folders.filter((f) => runOfStore(f) === run)) {
    for (const { result } of (await new RunStore(tuning.repo.gitdir, tuning.name, folder).loadAll()).values()) {
      used = { tokens: used.tokens + result.tokens, costUsd: used.costUsd + result.costUsd };
    }
  }
  return used;
}

/**
 * What a tuning has spent, its runs not recorded yet included (a run stopped
 * without a run-stop commit, by Ctrl-C or a shared ceiling, keeps its cases in
 * their stores): the recorded usage less what a run-stop recorded of such a
 * run, plus what its stores hold.
 */
export async function spentSoFar(tuning: Tuning): Promise<Spent> {
  const folders = await fs.readdir(localPath(tuning.repo.gitdir, tuning.name, 'runs')).catch(() => [] as string[]);
  let spent: Spent = tuning.state.usage;
  for (const run of new Set(folders.map(runOfStore))) {
    if (tuning.state.runs.get(run)?.finished) continue; // recorded; its stores are a finished run's leftovers
    spent = spentBeforeRun({ ...tuning.state, usage: spent }, run, await keptUsage(tuning, run));
  }
  return spent;
}

/** Which cases of the finished first pass are re-run (core decides; the run state is read here). */
export function flipsOf(tuning: Tuning, run: string, results: readonly CaseResult[]): FlipDue[] {
  // A final check's result set (final --ci, --shard) has no run state: it is recorded later, if at all.
  const state = tuning.state.runs.get(run) ?? null;
  if (!state && run !== FINAL_RUN) return [];
  // By the checks: an error is wrong; a void case says nothing; no checks (null): the judge decides at grading.
  const now = new Map(results.filter((r) => r.status !== 'void').map((r) => [r.id, r.status === 'error' ? false : r.right]));
  const stuck = new Set(stuckEntries(viewDifficult(tuning.state, tuning.config?.maxRetries ?? 3)).map((e) => e.id));
  return repeatsDue(tuning.state, state, now, stuck);
}

/** A stored repeat as results.json records it: the case's fields without id and rev, its number and its round (2 only when it is). */
export function asRepeat(result: CaseResult, n: number, round: 1 | 2 = 1): CaseRepeat {
  const { id: _id, rev: _rev, repeats: _repeats, ...rest } = result;
  return { ...rest, n, ...(round === 2 ? { round } : {}) };
}

/** The repeats' logs for the logs ref, each under `<case>/repeat-<n>`. */
export function repeatLogs(tuning: Tuning, run: string, results: readonly CaseResult[], stores: ReadonlyMap<number, Map<string, { rawResult: string | null }>>): CaseLogs[] {
  const out: CaseLogs[] = [];
  for (const r of results) {
    for (const rep of r.repeats ?? []) {
      const dir = repeatStore(tuning, run, rep.n).logDir;
      const safe = r.id.replace(/[^A-Za-z0-9._-]/g, '_');
      out.push({
        id: `${r.id}/repeat-${rep.n}`,
        stdoutFile: path.join(dir, `${safe}.stdout`), stderrFile: path.join(dir, `${safe}.stderr`),
        transcriptFile: path.join(dir, `${safe}.transcript.jsonl`), workspaceDir: keptWorkspaceDir(dir, r.id),
        rawResult: stores.get(rep.n)?.get(r.id)?.rawResult ?? null,
      });
    }
  }
  return out;
}

/** The cases to run for repeat `n`: the flips not kept yet in its store. */
export function repeatTodo(due: readonly FlipDue[], stored: ReadonlyMap<string, unknown>, dataset: ReadonlyMap<string, Case>): Case[] {
  return due.filter((d) => !stored.has(d.id)).map((d) => dataset.get(d.id)!).filter(Boolean);
}
