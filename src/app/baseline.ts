import { promises as fs } from 'node:fs';
import path from 'node:path';
import { datasetRev } from '../contracts/dataset.js';
import type { CaseResult } from '../contracts/result.js';
import { caseVerdict } from '../core/findings.js';
import { scoreOf } from '../core/held-out.js';
import { baselineResultsPath } from '../core/paths.js';
import { budgetRefusal } from '../core/run-due.js';
import { interruptedStop, type RunStop } from '../core/run-stop.js';
import { runStopError } from './run-stop.js';
import type { Score } from '../core/steps.js';
import { historyError, usageError } from '../errors.js';
import { withToolLock } from '../git/lock-owner.js';
import { resolveCommand } from '../run/presets/index.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import { RunStore } from '../run/store.js';
import { commitStep, targetOf } from './commit.js';
import { requireWriter } from './guards.js';
import { casesById } from './held-out.js';
import { judgeRun } from './judge.js';
import { Plan, type DryRunnable } from './plan.js';
import { refuseIf } from './refuse.js';
import { runCasesKept, type RunContext } from './run.js';
import { reloadTuning, type Tuning } from './tuning.js';

/**
 * `git tune baseline` (docs/held-out.md): the prose as it was at the
 * tuning's start (its init commit) runs the selection and the held-out set
 * once, in a temporary copy of the init commit's tree outside the
 * repository, so the user's working tree, index and HEAD are never touched;
 * the copy is removed after, also after a failure. The results become one
 * `baseline` step commit, which the final check compares with.
 */
export interface BaselineOutcome {
  commit: string;
  init: string;
  selection: Score;
  heldOut: Score | null;
  results: Array<{ id: string; set: 'selection' | 'held-out'; right: boolean }>;
}

/** The name the baseline's cases run under (TUNE_RUN), and its store of finished cases in this clone. */
export const BASELINE_RUN = 'baseline';

export async function runBaseline(opened: Tuning, opts: { concurrency?: number; heldOutOnly?: boolean }, ctx: DryRunnable<RunContext>): Promise<BaselineOutcome | Plan> {
  await requireWriter(opened);
  return withToolLock(opened.repo.gitdir, opened.name, 'git tune baseline', () => runBaselineLocked(opened, opts, ctx));
}

async function runBaselineLocked(opened: Tuning, opts: { concurrency?: number; heldOutOnly?: boolean }, ctx: DryRunnable<RunContext>): Promise<BaselineOutcome | Plan> {
  const tuning = await reloadTuning(opened);
  await requireWriter(tuning);
  const config = tuning.config;
  if (!config?.runner) throw usageError('no-runner', 'no runner is configured', `git tune config set runner.command 'node agent.js'`);
  resolveCommand(config.runner, 'runner', config);
  const init = tuning.state.initOid;
  if (!init) throw historyError('no-init-commit', `tuning ${tuning.name} has no init commit: the baseline runs the prose as it was there`, 'git tune log');
  const heldOut = await tuning.loadHeldOut();
  const selection = opts.heldOutOnly ? [] : tuning.selection?.ids ?? [];
  const ids = [...selection, ...heldOut.map((c) => c.id)];
  if (ids.length === 0) {
    throw historyError('no-dataset', 'the baseline has nothing to run: no selection yet and no held-out set',
      'git tune dataset import --held-out held-out.jsonl   # or: git tune select');
  }
  const cases = await casesById(tuning);
  const spent = { ...tuning.state.usage };
  refuseIf(budgetRefusal('the baseline', config.budget, spent));
  if (ctx.dryRun) {
    return new Plan([], `copy the tree of the init commit ${init.slice(0, 7)} to a temporary folder, run ${ids.length} cases there (${selection.length} of the selection, ${heldOut.length} held-out), remove the folder, then record a baseline commit`);
  }
  const heldSet = new Set(heldOut.map((c) => c.id));
  const concurrency = opts.concurrency ?? config.concurrency;
  // Finished cases are kept in this clone (keyed by the init commit), so an interrupted baseline resumes.
  const store = new RunStore(tuning.repo.gitdir, tuning.name, `${BASELINE_RUN}.${init.slice(0, 12)}`);
  const stored = await store.load(ids);
  const tree = await makeScratch('baseline-tree');
  let stopped: RunStop | null;
  try {
    await exportTree(tuning, init, tree);
    stopped = await runCasesKept(ids.filter((id) => !stored.has(id)).map((id) => cases.get(id)!), {
      root: tree, name: BASELINE_RUN, config: { ...config, runner: config.runner! }, target: null, memory: [], concurrency,
      store, stored, usedBefore: spent, total: ids.length,
    }, ctx);
  } finally {
    await removeScratch(tree);
  }
  if (ids.some((id) => !stored.has(id))) {
    throw runStopError(stopped ?? interruptedStop(), 'the baseline', 'git tune baseline   # finished cases are kept; the rest run', '; nothing was recorded');
  }
  const results: CaseResult[] = ids.map((id) => stored.get(id)!.result);
  const raw = new Map(ids.map((id) => [id, stored.get(id)!.rawResult]));
  // The judge grades as in any run, from the repository root (it reads the case and the result, not the prose run).
  const judge = config.judge
    ? await judgeRun(tuning.repo.dir, config.judge, ids.map((id) => cases.get(id)!), results, raw, { env: ctx.env, concurrency: config.concurrency, run: BASELINE_RUN, scope: config })
    : {};
  const verdicts = new Map(results.map((r) => [r.id, caseVerdict(r, judge[r.id])]));
  const isRight = (id: string) => verdicts.get(id) === 'right';
  const selScore = scoreOf(results.filter((r) => !heldSet.has(r.id)), isRight);
  const heldScore = heldOut.length > 0 ? scoreOf(results.filter((r) => heldSet.has(r.id)), isRight) : null;
  const heldOutRev = heldOut.length > 0 ? datasetRev(heldOut) : null;
  const file = {
    init, heldOutRev,
    cases: results.map((r) => ({ set: heldSet.has(r.id) ? 'held-out' : 'selection', verdict: verdicts.get(r.id), ...(judge[r.id] ? { judge: judge[r.id] } : {}), ...r })),
  };
  const say = (s: Score) => `${s.right}/${s.cases} right`;
  const commit = await commitStep(targetOf(tuning), {
    step: { step: 'baseline', tuning: tuning.name, init, selection: selScore, heldOut: heldScore, heldOutRev, difficult: [] },
    subject: `tune(${tuning.name}): baseline of ${init.slice(0, 7)}: selection ${say(selScore)}${heldScore ? `, held-out ${say(heldScore)}` : ''}`,
    body: `The prose as it was at the tuning's start (${init.slice(0, 12)}), run in a temporary copy of that commit's tree.`,
    changes: new Map([[baselineResultsPath(tuning.dir), { content: `${JSON.stringify(file, null, 2)}\n` }]]),
  }, { env: ctx.env, now: ctx.clock() });
  await store.remove();
  return {
    commit, init, selection: selScore, heldOut: heldScore,
    results: results.map((r) => ({ id: r.id, set: heldSet.has(r.id) ? 'held-out' as const : 'selection' as const, right: isRight(r.id) })),
  };
}

/** Writes the files of `commit`'s tree into `dir` (modes kept; symlinks as links): the prose and the agent as they were. */
async function exportTree(tuning: Tuning, commit: string, dir: string): Promise<void> {
  for (const f of await tuning.repo.listFiles(commit, '')) {
    const to = path.join(dir, f.path);
    await fs.mkdir(path.dirname(to), { recursive: true });
    const blob = await tuning.repo.readBlobAt(commit, f.path);
    if (blob === null) continue;
    if (f.mode === '120000') await fs.symlink(Buffer.from(blob).toString('utf8'), to);
    else await fs.writeFile(to, blob, { mode: f.mode === '100755' ? 0o755 : 0o644 });
  }
}
