import { makeWayForRun, viewOf } from './abandon.js';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import type { CommandSpec, Config } from '../contracts/config.js';
import { shellQuote } from '../core/argv.js';
import type { Case } from '../contracts/dataset.js';
import type { CaseResult, MemoryWrite, RunMeta } from '../contracts/result.js';
import { batchCases, batchNumbered, latestGradedRun } from '../core/fold.js';
import { parseRunName, tagName } from '../core/names.js';
import { answersOf, caseOutcome, FLIP_WHY, secondRoundDue, settled, type FlipDue } from '../core/noise.js';
import type { NextStep } from '../core/next.js';
import { budgetStop, interruptedStop, sandboxStop, type RunStop } from '../core/run-stop.js';
import { budgetLeft, budgetRefusal, dueRun, spentBeforeRun, unconfirmedEditsRefusal, type DueRun } from '../core/run-due.js';
import { localPath, memoryPath, RUN_FILES, runFilePath } from '../core/paths.js';
import { historyError, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { withToolLock } from '../git/lock-owner.js';
import { diskFullError, isSpaceError } from '../git/disk-full.js';
import { runCase } from '../run/case.js';
import { writeRunLogs, type CaseLogs } from '../run/logs.js';
import { keptWorkspaceDir } from '../run/case.js';
import type { MemoryFile } from '../run/memory.js';
import { runPool } from '../run/pool.js';
import { resolveCommand } from '../run/presets/index.js';
import { createProgress, type CaseEvent } from '../run/progress.js';
import { createNotices } from '../run/notices.js';
import { killAll } from '../run/process.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import { RunStore, type StoredCase } from '../run/store.js';
import { commitStep, planSteps, targetOf, type StepCommit } from './commit.js';
import { nextFor } from './decide.js';
import { requireWriter } from './guards.js';
import { casesById, finalCases } from './held-out.js';
import { Plan, type DryRunnable, type Writes } from './plan.js';
import { proseDigest, uncommittedProse } from './prose.js';
import { asRepeat, flipsOf, keptUsage, repeatLogs, repeatStore, repeatTodo } from './repeats.js';
import { uncommittedRunnerFiles } from './runner-files.js';
import { orRefuse, refuseIf } from './refuse.js';
import { loadTuning, openTuning, reloadTuning, type Tuning } from './tuning.js';

/**
 * `git tune run` / `git tune final`: run what is due, case by case, keep each
 * result as it ends, and record the run as one tagged commit (docs/method.md#halves, docs/contracts.md).
 */
export interface RunOptions {
  final: boolean;
  concurrency?: number;
  target?: string;
}

export interface RunContext extends Writes {
  env: Env;
  now: Date;
  clock: () => Date;
  err: (text: string) => void;
  isTTY: boolean;
  /** Set to true (by a signal handler) to stop launching cases. */
  interrupted: { value: boolean };
  /** Asked before each case starts: true stops launching cases, as Ctrl-C does (`git tune auto`'s stop request and ceiling). */
  stop?: () => boolean;
  /** A case starting or ending, for a watcher in this process (`git tune auto`'s live view). */
  onCase?: (event: CaseEvent) => void;
}

export interface RunOutcome {
  run: string;
  finished: boolean;
  results: CaseResult[];
  void: string | null;
  /** Why the run stopped before every case ran (null: it finished). */
  stopped: RunStop | null;
  commit: string | null;
  /** The run's tag, whole (`tune/<name>/<run>`), once committed. */
  tag: string | null;
}

/** Which run `git tune run` (or `final`) starts or resumes now, from `next` (src/core/run-due.ts). */
export function dueRunOf(tuning: Tuning, step: NextStep, final: boolean): DueRun {
  return orRefuse(dueRun(tuning.state, step, final));
}

/** At `done` no edit is unconfirmed: one no run will confirm is reverted (or kept) before the final check is recorded. */
export function requireNoUnconfirmedEdits(tuning: Tuning, step: NextStep): void {
  refuseIf(unconfirmedEditsRefusal(tuning.state, step));
}

function casesOf(tuning: Tuning, name: string): string[] {
  const id = parseRunName(name);
  if (!id) throw new Error(`bad run name ${name}`);
  if (id.kind === 'final') return tuning.selection?.ids ?? [];
  const batch = batchNumbered(tuning.state, id.batch);
  if (!batch) throw historyError('no-plan', `batch ${id.batch} was never planned`, 'git tune batch');
  return batchCases(batch.plan);
}

export async function memoryFor(tuning: Tuning, name: string): Promise<MemoryFile[]> {
  const id = parseRunName(name)!;
  const source = id.kind === 'final' ? 'last-good' : id.half === 'mem' ? 'candidate' : null;
  if (source === null) return [];
  const dir = memoryPath(tuning.dir, source);
  const files = await tuning.repo.listFiles(tuning.tip, dir);
  const out: MemoryFile[] = [];
  for (const f of files) {
    const content = await tuning.repo.readBlobAt(tuning.tip, f.path);
    if (content) out.push({ path: f.path.slice(dir.length + 1), content });
  }
  return out;
}

function voidReason(results: readonly CaseResult[]): string | null {
  const voids = results.filter((r) => r.status === 'void');
  if (voids.length === 0) return null;
  const first = voids[0]!;
  return `${voids.length} case${voids.length === 1 ? '' : 's'} void (${first.id}: ${first.void})`;
}

/** What a run of `name` needs, checked before anything is written. */
export interface RunPreflight {
  config: Config & { runner: CommandSpec };
  target: Target | null;
  concurrency: number;
  ids: string[];
  dataset: Map<string, Case>;
}

type Target = Config['targets'][number];

/** The checks every run makes before its first write: a runner, prose as committed, the target, every case there. */
export async function preflightRun(tuning: Tuning, name: string, opts: { concurrency?: number; target?: string }): Promise<RunPreflight> {
  const config = tuning.config;
  if (!config?.runner) throw usageError('no-runner', 'no runner is configured', `git tune config set runner.command 'node agent.js'`);
  resolveCommand(config.runner, 'runner', config); // an unknown preset fails here, before anything is written
  const dirty = await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  if (dirty.length > 0) {
    // An edit responds to a graded run: before there is one, `git tune edit` would be refused.
    const graded = latestGradedRun(tuning.state) !== null;
    throw usageError('prose-not-committed', `prose has uncommitted changes: ${dirty.join(', ')}; a run uses the prose exactly as committed`,
      graded ? 'git tune edit   # records them as an edit of the latest graded run (or: git stash)'
        : `git stash   # no run is graded yet, so there is no edit to record; to start from the changed prose instead: git commit -m "prose to start from" -- ${dirty.map(shellQuote).join(' ')}`);
  }
  // A tuning pinned to a target (a fleet's: config `target`) runs it unless told another.
  const wanted = opts.target ?? config.target;
  const target = wanted ? config.targets.find((t) => t.name === wanted) : null;
  if (wanted && !target) {
    throw usageError('no-such-target', `no target named ${wanted}`, `git tune config   # targets: ${config.targets.map((t) => t.name).join(', ') || 'none'}`);
  }
  // The final check runs the held-out set too (docs/held-out.md); no batch ever does.
  const final = parseRunName(name)?.kind === 'final';
  const ids = final ? await finalCases(tuning) : casesOf(tuning, name);
  const dataset = final ? await casesById(tuning) : new Map((await tuning.loadDataset()).map((c) => [c.id, c]));
  const missing = ids.filter((id) => !dataset.has(id));
  if (missing.length > 0) {
    throw historyError('cases-missing', `the dataset no longer holds ${missing.length} case(s) of ${name}: ${missing.slice(0, 5).join(', ')}`, 'git tune dataset import <file>   # with those cases back');
  }
  return { config: config as RunPreflight['config'], target: target ?? null, concurrency: opts.concurrency ?? config.concurrency, ids, dataset };
}

export interface CasePool {
  /** The run the cases belong to (its memory, TUNE_RUN). */
  name: string;
  cases: readonly Case[];
  preflight: RunPreflight;
  store: RunStore;
  /** Results kept so far (a resumed run's); each finished case is added. */
  stored: Map<string, StoredCase>;
  /** Tokens and cost spent before these cases, counted against the budget. */
  usedBefore: { tokens: number; costUsd: number };
  /** How many cases the progress line counts (the run's, not only these). */
  total: number;
  /** These cases are the run's repeat `n` (docs/method.md#noise): the progress lines say so. */
  repeat?: number;
}

/** Where and how `runCasesKept` runs cases: a run of the tuning, or the baseline in a copy of the init commit's tree. */
export interface KeptCases {
  /** The working directory the runner gets (TUNE_ROOT). */
  root: string;
  name: string;
  config: Config & { runner: NonNullable<Config['runner']> };
  target: Target | null;
  memory: MemoryFile[];
  concurrency: number;
  store: RunStore;
  stored: Map<string, StoredCase>;
  usedBefore: { tokens: number; costUsd: number };
  /** How many cases the progress line counts (finished ones included). */
  total: number;
  repeat?: number;
}

/**
 * Runs cases at most `concurrency` at once, each kept in the store as it
 * ends (a downed sandbox's case is not kept: it says nothing about the
 * prose and runs again once the sandbox is back); stops launching on a
 * downed sandbox, a spent budget or a signal, and says which (null: all ran).
 */
export async function runCasesKept(cases: readonly Case[], k: KeptCases, ctx: RunContext): Promise<RunStop | null> {
  const scratch = await makeScratch(k.name);
  const progress = createProgress(k.name, k.total, k.total - cases.length, ctx.err, ctx.isTTY, ctx.onCase, k.repeat);
  let stopped: RunStop | null = null;
  // A full disk (our own write of a case, or the runner's): no new case starts, the running ones end unkept, and it is thrown once they have.
  let diskFull: unknown = null;
  let runnerSaid: string | null = null;
  const running = { ...k.usedBefore };
  // A preset's notices (no price known, retries) reach the terminal once per run, not only each case's log.
  const notices = createNotices('runner', ctx.err);
  try {
    await runPool(cases, k.concurrency, async (item) => {
      progress.started(item.id);
      const outcome = await runCase({
        root: k.root, run: k.name, runner: k.config.runner, scope: k.config, target: k.target, memory: k.memory,
        scratch, logDir: k.store.logDir, env: ctx.env, now: ctx.clock,
      }, item);
      // Killed on the user's request: no result (the run stays unfinished and resumes with this case).
      if (outcome.interrupted) return;
      progress.finished(outcome.result);
      await notices.add(outcome.stderrFile, item.id);
      running.tokens += outcome.result.tokens;
      running.costUsd += outcome.result.costUsd;
      if (outcome.result.sandboxDown) {
        stopped ??= sandboxStop(outcome.result.sandboxDown);
        return;
      }
      if (outcome.diskFull || diskFull !== null) {
        if (diskFull === null && outcome.diskFull) runnerSaid = `${item.id}: ${outcome.diskFull.message} (not kept; it runs again)`;
        diskFull ??= outcome.diskFull;
        return;
      }
      try {
        await k.store.save(outcome.result, outcome.writes, outcome.rawResult);
      } catch (err) {
        if (!isSpaceError(err)) throw err;
        diskFull ??= err;
        return;
      }
      k.stored.set(item.id, { result: outcome.result, writes: outcome.writes, rawResult: outcome.rawResult });
      const spent = budgetLeft(k.config.budget, running);
      if (spent !== null) stopped ??= budgetStop(spent);
    }, () => stopped !== null || diskFull !== null || ctx.interrupted.value || (ctx.stop?.() ?? false));
    if (diskFull !== null) throw diskFullError(diskFull, k.root, runnerSaid ? [runnerSaid] : []) ?? diskFull;
  } finally {
    progress.done();
    notices.end();
    await removeScratch(scratch);
  }
  return stopped;
}

/**
 * Runs cases at most `concurrency` at once, each kept in the store as it
 * ends; stops launching on a downed sandbox, a spent budget or a signal. The
 * prose a runner changed is put back. Writes no commit.
 */
export async function runCasePool(tuning: Tuning, pool: CasePool, ctx: RunContext): Promise<{ stopped: RunStop | null; touched: string[] }> {
  const { config, target, concurrency } = pool.preflight;
  const stopped = await runCasesKept(pool.cases, {
    root: tuning.repo.dir, name: pool.name, config, target, memory: await memoryFor(tuning, pool.name), concurrency,
    store: pool.store, stored: pool.stored, usedBefore: pool.usedBefore, total: pool.total, ...(pool.repeat ? { repeat: pool.repeat } : {}),
  }, ctx);

  // A runner works in the repository root; whatever it changed of the prose
  // (clean before the run) is put back, so the recorded run matches its commit.
  const touched = await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  if (touched.length > 0) {
    // The runner, or a person editing meanwhile: what is there is kept aside before the restore.
    const kept = localPath(tuning.repo.gitdir, tuning.name, 'changed-during-run', pool.name);
    for (const file of touched) await fs.cp(path.join(tuning.repo.dir, file), path.join(kept, file)).catch(() => undefined);
    await tuning.repo.checkoutPaths(tuning.tip, touched);
    ctx.err(`warning: the runner changed files of the repository; restored from ${tuning.tip.slice(0, 7)}: ${touched.join(', ')} (what was there is kept in ${path.relative(tuning.repo.dir, kept)}/)\n`);
  }
  return { stopped, touched };
}

export interface FinishedRun {
  name: string;
  ids: readonly string[];
  results: readonly CaseResult[];
  writes: Record<string, MemoryWrite[]>;
  logs: readonly CaseLogs[];
  concurrency: number;
  target: string | null;
  startedAt: string;
  touched: readonly string[];
  /** Extra keys for run.json (e.g. the shards a collected run came from). */
  meta?: Record<string, unknown>;
  /** The runner's own files that were not committed when the run ran (src/app/runner-files.ts). */
  runnerUncommitted?: readonly string[];
}

/** The run commit (results, run.json, memory writes; tagged) and its logs on the logs ref. */
export async function recordRun(tuning: Tuning, run: FinishedRun, ctx: RunContext): Promise<{ commit: string; void: string | null }> {
  const config = tuning.config!;
  const { name, ids, results, concurrency } = run;
  const runUsage = usageOf(results);
  const reason = voidReason(results);
  const meta: RunMeta = {
    run: name, tuning: tuning.name, cases: [...ids], concurrency,
    runner: config.runner!.command ?? [`preset:${config.runner!.preset}`], target: run.target,
    machine: { platform: os.platform(), arch: os.arch(), cpus: os.cpus().length, node: process.version },
    startedAt: [run.startedAt, ...results.map((r) => r.startedAt)].sort()[0]!,
    finishedAt: ctx.clock().toISOString(), void: reason, stopped: null,
    ...(run.touched.length > 0 ? { repositoryWrites: [...run.touched] } : {}),
    ...run.meta,
  };
  const writes: Record<string, MemoryWrite[]> = {};
  for (const id of ids) {
    const w = run.writes[id] ?? [];
    if (w.length > 0) writes[id] = w;
  }
  const changes = new Map([
    [runFilePath(tuning.dir, name, RUN_FILES.meta), { content: `${JSON.stringify(meta, null, 2)}\n` }],
    [runFilePath(tuning.dir, name, RUN_FILES.results), { content: `${JSON.stringify(results, null, 2)}\n` }],
  ]);
  if (Object.keys(writes).length > 0) changes.set(runFilePath(tuning.dir, name, RUN_FILES.memoryWrites), { content: `${JSON.stringify(writes, null, 2)}\n` });
  await writeRunLogs(tuning.repo, tuning.name, name, run.logs, { env: ctx.env, now: ctx.clock() });
  const right = results.filter((r) => caseOutcome(r).verdict === 'right').length;
  // Cases without a verdict yet (the judge grades them): the subject says so, not "0/6 right".
  const forJudge = results.filter((r) => r.right === null && r.status !== 'void').length;
  const decided = ids.length - forJudge;
  const score = forJudge === 0 ? `${right}/${ids.length} right by checks`
    : decided === 0 ? `${forJudge} for the judge`
    : `${right}/${decided} right by checks, ${forJudge} for the judge`;
  const unrecorded = run.runnerUncommitted ?? [];
  // The prose this run ran (its start commit's): a half passes only on a run of the prose the branch holds (src/core/basis.ts).
  const prose = await proseDigest(tuning.repo, tuning.state.runs.get(name)?.startOid ?? tuning.tip, [...config.prose, ...config.memoryPolicy]);
  const commit = await commitStep(targetOf(tuning), {
    step: {
      step: 'run', tuning: tuning.name, run: name, concurrency, cases: ids.length, void: reason, stopped: null,
      tokens: runUsage.tokens, costUsd: runUsage.costUsd, prose, difficult: [],
      repeatTokens: runUsage.tokens - results.reduce((s, r) => s + r.tokens, 0),
    },
    subject: `tune(${tuning.name}): ${name}: ${reason ? 'VOID' : score}, ${runUsage.tokens} tokens`,
    ...(unrecorded.length > 0 ? { body: `Runner files not committed when this run ran (it cannot be reproduced from this commit): ${unrecorded.join(', ')}` } : {}),
    changes,
    tags: [name],
  }, { env: ctx.env, now: ctx.clock() });
  return { commit, void: reason };
}

/** The run-start commit: the run's trace in history comes first, so after a crash `next` says resume. */
export async function startRun(tuning: Tuning, name: string, opts: RunStart, ctx: RunContext): Promise<Tuning> {
  await commitStep(targetOf(tuning), runStartStep(tuning, name, opts), { env: ctx.env, now: ctx.clock() });
  return loadTuning(tuning.repo, tuning.name);
}

interface RunStart {
  concurrency: number;
  resume: boolean;
  toRun: number;
  total: number;
}

function runStartStep(tuning: Tuning, name: string, opts: RunStart): StepCommit {
  return {
    step: { step: 'run-start', tuning: tuning.name, run: name, concurrency: opts.concurrency, difficult: [] },
    subject: `tune(${tuning.name}): ${opts.resume ? 'resume' : 'start'} ${name} (${opts.toRun} of ${opts.total} cases to run, concurrency ${opts.concurrency})`,
    changes: new Map(),
  };
}

export async function executeRun(cwd: string, tuningName: string | undefined, opts: RunOptions, ctx: DryRunnable<RunContext>): Promise<RunOutcome | Plan> {
  return runDue(await openTuning(cwd, tuningName), opts, ctx);
}

/** The run that is due of a tuning already opened (by a command that runs it among other steps: auto, final --ci). */
export async function runDue(opened: Tuning, opts: RunOptions, ctx: RunContext): Promise<RunOutcome>;
export async function runDue(opened: Tuning, opts: RunOptions, ctx: DryRunnable<RunContext>): Promise<RunOutcome | Plan>;
export async function runDue(opened: Tuning, opts: RunOptions, ctx: DryRunnable<RunContext>): Promise<RunOutcome | Plan> {
  // One command at a time runs a tuning's cases: the tool lock is held from the checks to the
  // run commit, so a second `run` (or a `grade`, an `edit`…) is told who runs instead of racing it.
  await requireWriter(opened);
  return withToolLock(opened.repo.gitdir, opened.name, opts.final ? 'git tune final' : 'git tune run', () => runDueLocked(opened, opts, ctx));
}

async function runDueLocked(opened: Tuning, opts: RunOptions, ctx: DryRunnable<RunContext>): Promise<RunOutcome | Plan> {
  let tuning = await reloadTuning(opened); // read again under the lock
  await requireWriter(tuning);
  if (!tuning.config?.runner) throw usageError('no-runner', 'no runner is configured', `git tune config set runner.command 'node agent.js'`);
  resolveCommand(tuning.config.runner, 'runner', tuning.config); // an unknown preset fails first, as before any other check
  const step = nextFor(tuning);
  const { name, resume } = dueRunOf(tuning, step, opts.final);
  // Before any case runs: a tag left by abandoned steps is moved aside; one on the branch is refused (the run commit could not be tagged).
  const aside = await makeWayForRun(viewOf(tuning), name, { env: ctx.env, now: ctx.clock() }, { dryRun: ctx.dryRun === true });
  const preflight = await preflightRun(tuning, name, opts);
  const { config, concurrency, ids, dataset } = preflight;
  const store = new RunStore(tuning.repo.gitdir, tuning.name, name);
  const stored = await store.load(ids);
  // Spent before this run's cases, and with what its stores keep (first answers and repeats of a stopped run).
  const before = spentBeforeRun(tuning.state, name, { tokens: 0, costUsd: 0 });
  const usedBefore = spentBeforeRun(tuning.state, name, await keptUsage(tuning, name));
  refuseIf(budgetRefusal(name, config.budget, usedBefore));

  const runnerUncommitted = await uncommittedRunnerFiles(tuning, config.runner);
  if (runnerUncommitted.length > 0) {
    ctx.err(`warning: the runner's own files are not committed (${runnerUncommitted.join(', ')}): this run cannot be reproduced from its commit, which records it; commit them first to make it reproducible\n`);
  }
  const startedAt = ctx.clock().toISOString();
  const start = { concurrency, resume, toRun: ids.length - stored.size, total: ids.length };
  // A dry run plans the run-start commit, the first write, and stops there: no case runs.
  if (ctx.dryRun) {
    const plan = new Plan(await planSteps(targetOf(tuning), [runStartStep(tuning, name, start)]));
    const tags = aside.map((r) => tagName(tuning.name, r)).join(', ');
    const one = aside.length === 1;
    return aside.length === 0 ? plan
      : plan.followedBy(`before the commit, the run tag${one ? '' : 's'} ${tags} (on ${one ? 'a commit' : 'commits'} the branch does not hold) ${one ? 'goes' : 'go'} aside to refs/tune-abandoned`);
  }
  tuning = await startRun(tuning, name, start, ctx);
  const todo = ids.filter((id) => !stored.has(id)).map((id) => dataset.get(id)!);
  const { stopped, touched } = await runCasePool(tuning, { name, cases: todo, preflight, store, stored, usedBefore, total: ids.length }, ctx);
  const firsts = ids.map((id) => stored.get(id)?.result).filter((r): r is CaseResult => r !== undefined);
  const stopRun = async (reason: RunStop | null, kept: readonly CaseResult[], what: string): Promise<RunOutcome> => {
    if (reason) {
      const runUsage = usageOf(kept);
      await commitStep(targetOf(tuning), {
        step: { step: 'run-stop', tuning: tuning.name, run: name, reason: reason.text, tokens: runUsage.tokens, costUsd: runUsage.costUsd, difficult: [] },
        subject: `tune(${tuning.name}): ${name} stopped after ${what} (${reason.text})`,
        changes: new Map(),
      }, { env: ctx.env, now: ctx.clock() });
    }
    return { run: name, finished: false, results: [...kept], void: null, stopped: reason ?? interruptedStop(), commit: null, tag: null };
  };
  if (firsts.length < ids.length) return stopRun(stopped, firsts, `${firsts.length} of ${ids.length} cases`);

  // A flip is re-run before it decides (docs/method.md#noise), before the run commit: the run records every answer.
  const repeated = await runRepeats(tuning, name, firsts, { preflight, before, dataset }, ctx);
  if (!repeated.finished) return stopRun(repeated.stopped, repeated.results, `its ${ids.length} cases, re-running ${repeated.due} of them`);
  const results = repeated.results;

  const writes: Record<string, MemoryWrite[]> = {};
  for (const id of ids) writes[id] = stored.get(id)!.writes;
  const { commit, void: reason } = await recordRun(tuning, {
    name, ids, results, writes, concurrency, target: preflight.target?.name ?? null, startedAt, touched: [...new Set([...touched, ...repeated.touched])], runnerUncommitted,
    logs: [...ids.map((id) => ({
      id, stdoutFile: path.join(store.logDir, `${id}.stdout`), stderrFile: path.join(store.logDir, `${id}.stderr`),
      transcriptFile: path.join(store.logDir, `${id}.transcript.jsonl`), workspaceDir: keptWorkspaceDir(store.logDir, id),
      rawResult: stored.get(id)!.rawResult,
    })), ...repeatLogs(tuning, name, results, repeated.stores)],
  }, ctx);
  await store.remove();
  for (const n of repeated.stores.keys()) await repeatStore(tuning, name, n).remove();
  return { run: name, finished: true, results, void: reason, stopped: null, commit, tag: tagName(tuning.name, name) };
}

const usageOf = (results: readonly CaseResult[]) => results.reduce((acc, r) => ({
  tokens: acc.tokens + r.tokens + (r.repeats ?? []).reduce((s, x) => s + x.tokens, 0),
  costUsd: acc.costUsd + r.costUsd + (r.repeats ?? []).reduce((s, x) => s + x.costUsd, 0),
}), { tokens: 0, costUsd: 0 });

interface Repeated {
  finished: boolean;
  results: CaseResult[];
  stopped: RunStop | null;
  due: number;
  touched: string[];
  stores: Map<number, Map<string, StoredCase>>;
}

/**
 * The repeats of a finished first pass (docs/method.md#noise): the flips core names
 * (`repeatsDue`), each run up to `noise.repeats` more times, one repeat per pass, until
 * no remaining repeat can change its majority; a flip whose first round still contradicts
 * its last graded answer is run a second round of as many, which must reproduce it.
 * A pass's cases are kept as they end, so a stopped run resumes its repeats. A VOID run
 * says nothing and is not repeated.
 */
export async function runRepeats(
  tuning: Tuning, name: string, firsts: readonly CaseResult[],
  run: {
    preflight: RunPreflight; before: { tokens: number; costUsd: number }; dataset: ReadonlyMap<string, Case>;
    /** The store the first answers are kept in, when not the run's own (a final check's result set): repeat `n` goes in `<store>.repeat-<n>`. */
    store?: string;
  }, ctx: RunContext,
): Promise<Repeated> {
  const k = run.preflight.config.noise.repeats;
  const due = k > 0 && voidReason(firsts) === null ? flipsOf(tuning, name, firsts) : [];
  const stores = new Map<number, Map<string, StoredCase>>();
  const touched: string[] = [];
  if (due.length > 0) {
    ctx.err(`${name}: re-running ${due.length} case${due.length === 1 ? '' : 's'} up to ${k} time${k === 1 ? '' : 's'} before it decides (${due.map((d) => `${d.id}: ${FLIP_WHY[d.why]}`).join('; ')})\n`);
  }
  /** The first answers with the repeats stored so far (repeat n > k + 1 is of round 2). */
  const withRepeats = () => firsts.map((r) => {
    const repeats = [...stores].filter(([, s]) => s.has(r.id)).map(([n, s]) => asRepeat(s.get(r.id)!.result, n, n > k + 1 ? 2 : 1));
    return repeats.length > 0 ? { ...r, repeats } : r;
  });
  /** Runs repeats `from`..`to` of the cases in `flips`, each until its outcome is settled. */
  const round = async (flips: readonly FlipDue[], from: number, to: number): Promise<Repeated | null> => {
    for (let n = from; n <= to; n++) {
      // A case whose majority no remaining repeat can change stops here (by its checks; the judge, where it decides, is asked at grading).
      // In round 2, that round begins after each case's answers of round 1.
      const sofar = new Map(withRepeats().map((r) => [r.id, {
        verdicts: caseOutcome(r).answers, secondAt: from > k + 1 ? answersOf(r).filter((a) => a.round === 1).length : undefined,
      }]));
      const active = flips.filter((d) => !settled(sofar.get(d.id)!.verdicts, to + 1 - n, sofar.get(d.id)!.secondAt));
      if (active.length === 0) break;
      const store = repeatStore(tuning, run.store ?? name, n);
      const stored = await store.load(active.map((d) => d.id));
      stores.set(n, stored);
      const todo = repeatTodo(active, stored, run.dataset);
      if (todo.length === 0) continue;
      // Spent before the run, its first answers, and every repeat kept so far (this pass's included).
      const sofarSpent = usageOf(withRepeats());
      const usedBefore = { tokens: run.before.tokens + sofarSpent.tokens, costUsd: run.before.costUsd + sofarSpent.costUsd };
      const pass = await runCasePool(tuning, { name, cases: todo, preflight: run.preflight, store, stored, usedBefore, total: todo.length, repeat: n }, ctx);
      touched.push(...pass.touched);
      // Stopped: the repeats that ended are spent, so a run-stop commit counts them too.
      if (active.some((d) => !stored.has(d.id))) return { finished: false, results: withRepeats(), stopped: pass.stopped, due: due.length, touched, stores };
    }
    return null;
  };
  const first = await round(due, 2, k + 1);
  if (first) return first;
  const again = secondRoundDue(due, withRepeats());
  if (again.length > 0) {
    ctx.err(`${name}: re-running ${again.map((d) => d.id).join(', ')} a second round (up to ${k} more): ${again.length === 1 ? 'its' : 'their'} answers still contradict the last graded one\n`);
    const second = await round(again, k + 2, 2 * k + 1);
    if (second) return second;
  }
  return { finished: true, results: withRepeats(), stopped: null, due: due.length, touched, stores };
}

export function interruptOnSignals(flag: { value: boolean }, err: (s: string) => void): () => void {
  let count = 0;
  const handler = () => {
    count++;
    flag.value = true;
    if (count === 1) err('\nstopping: no new case starts; the running ones finish and are kept (Ctrl-C again to kill them)\n');
    else killAll('SIGKILL');
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
