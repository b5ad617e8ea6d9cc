import { existsSync, readFileSync, promises as fs } from 'node:fs';
import { missingConfig } from '../contracts/config.js';
import { compareIds } from '../core/difficult.js';
import { globToRegExp } from '../core/glob.js';
import { batchNumbered, isVoidRun, type RunState } from '../core/fold.js';
import { branchName, branchRef } from '../core/names.js';
import { configPath, localPath, tuningDir } from '../core/paths.js';
import type { NextStep } from '../core/next.js';
import { EXIT, usageError, type ExitCode } from '../errors.js';
import { stoppedForBudget } from '../core/run-stop.js';
import { diskFullError } from '../git/disk-full.js';
import type { Env } from '../git/identity.js';
import { withDriverLock } from '../git/lock-owner.js';
import { openRepo } from '../git/open.js';
import type { GitRepo } from '../git/types.js';
import { killAll } from '../run/process.js';
import type { CaseEvent } from '../run/progress.js';
import { isFinalStep, performStep, type StepContext, type StepOutcome } from './auto-step.js';
import { nextFor } from './decide.js';
import { recordedFinalLine } from './final.js';
import { withRepair } from './rewritten.js';
import { loadTuning, readText, startTuning, type Tuning } from './tuning.js';
import { listTunings, resolveTuningName } from './tuning-name.js';

/** Tokens and dollars spent (what the live view in src/cli/live.ts shows). */
export interface Usage {
  tokens: number;
  costUsd: number;
}

/**
 * `git tune auto`: the loop unattended. It follows `git tune next` and no
 * other state machine: each step `next` says is done through the use cases
 * its command calls (src/app/auto-step.ts), with a typed outcome, and the two
 * steps that need a person are done with the configured judge and editor:
 * - grade: the draft (with the judge's verdicts) is recorded as drafted; a
 *   wrong case whose judge says `caseOnly` (the fault is in the case, docs/contracts.md#judge)
 *   is put on the difficult list first, so the draft counts it there;
 * - edit: the editor is called for every shortfall the findings show (wrong
 *   cases, proposals, cost left to cut, memory saved twice or saving too
 *   little). An editor that changes nothing ends the half as at `maxRuns`.
 * It stops for a person only where the method needs one (no editor; a
 * refusal it cannot resolve), at once on a downed sandbox, after three VOID
 * runs in a row of one batch and half, on a spent budget (the tuning's own,
 * or the ceiling shared by every tuning this auto drives), and at the next
 * safe point on Ctrl-C or `git tune stop`. Every step is a commit, so `git
 * tune auto` again carries on from history, also after a kill -9.
 */
export type AutoOutcome =
  | 'done' | 'until' | 'stopped' | 'interrupted' | 'time-up' | 'stuck' | 'over-budget' | 'sandbox-down' | 'void-floor' | 'final-failed' | 'error'
  /** The editor changed nothing `maxEditorIdle` halves in a row: a person decides (src/app/auto-step.ts). */
  | 'editor-idle';

export interface AutoResult {
  tuning: string;
  outcome: AutoOutcome;
  message: string;
  steps: Array<{ kind: string; run: string | null; command: string | null }>;
  /** What this auto spent on the tuning's cases. */
  spent: Usage;
  exitCode: ExitCode;
  /** When it ended at the final check (done or final-failed): right / wrong / stuck with counts and ids (docs/method.md#final-check). */
  final?: string | null;
}

/** What every tuning one `git tune auto` drives shares: the ceiling, what was spent against it, Ctrl-C, the time limit. */
export interface AutoSession {
  ceiling: { maxCostUsd: number | null; maxTokens: number | null };
  /** What the ceiling is called in the message that stops auto (default: "the ceiling of this auto"). */
  ceilingName?: string;
  spent: Usage;
  interrupted: { value: boolean };
  /**
   * `--max-minutes`: when the time is up (by the session's clock) and how
   * long it was; auto stops at the next step boundary after it, never mid-step.
   */
  deadline?: { at: number; minutes: number } | null;
}

export interface AutoOptions {
  until?: 'final';
  maxSteps?: number;
  env: Env;
  session: AutoSession;
  /** Narration: auto's own lines. */
  say: (line: string) => void;
  /** What a step did, shown under its line (default: as `say`, indented). */
  detail?: (text: string) => void;
  /** The step about to be done (for a live view). */
  onStep?: (step: NextStep, tuning: Tuning, number: number) => void;
  onCase?: (event: CaseEvent) => void;
  clock?: () => Date;
  /** What the driver lock names as its holder (default `git tune auto`). */
  command?: string;
}

export const stopFile = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'stop');

export const newSession = (ceiling: AutoSession['ceiling'] = { maxCostUsd: null, maxTokens: null }): AutoSession => ({
  ceiling, spent: { tokens: 0, costUsd: 0 }, interrupted: { value: false },
});

/** Why the shared ceiling stops auto, or null while there is some left. */
export function ceilingSpent(session: AutoSession): string | null {
  const { ceiling, spent } = session;
  const name = session.ceilingName ?? 'the ceiling of this auto';
  if (ceiling.maxCostUsd !== null && spent.costUsd >= ceiling.maxCostUsd) {
    return `${name} is spent: $${spent.costUsd.toFixed(4)} of $${Number(ceiling.maxCostUsd.toFixed(6))}`;
  }
  if (ceiling.maxTokens !== null && spent.tokens >= ceiling.maxTokens) {
    return `${name} is spent: ${spent.tokens.toLocaleString('en-US')} of ${ceiling.maxTokens.toLocaleString('en-US')} tokens`;
  }
  return null;
}

/** Why the time limit stops auto (at a step boundary), or null while there is time left. */
export function timeUp(session: AutoSession, now: Date): string | null {
  const d = session.deadline;
  if (!d || now.getTime() < d.at) return null;
  return `the time limit is up (--max-minutes ${d.minutes}): stopped between steps; \`git tune auto\` carries on from here`;
}

/** VOID runs at the end of the step's batch and half. */
function voidsInARow(tuning: Tuning, step: NextStep): RunState[] {
  const runs = isFinalStep(tuning, step)
    ? tuning.state.final
    : (step.batch === null ? [] : batchNumbered(tuning.state, step.batch)?.runs ?? []).filter((r) => r.half === step.half);
  const out: RunState[] = [];
  for (let i = runs.length - 1; i >= 0 && isVoidRun(runs[i]!); i--) out.unshift(runs[i]!);
  return out;
}

function summary(step: NextStep): string {
  const where = step.run ?? (step.batch !== null ? `batch ${step.batch}` : '');
  return `${step.kind}${where ? ` ${where}` : ''}: ${step.message}`;
}

/** Drives one tuning (the checked-out one, or `name`) until next says it is done or something stops it. */
export async function autoTuning(cwd: string, opts: AutoOptions, name?: string): Promise<AutoResult> {
  return autoTuningIn(await openRepo(cwd), opts, name);
}

/**
 * The same in an opened repository (a fleet's target runs in its own linked
 * worktree: src/git/linked-worktree.ts). It drives the tuning: the driver
 * lock is taken before anything else, so a second auto is refused before it
 * would clear the first one's stop request.
 */
export async function autoTuningIn(repo: GitRepo, opts: AutoOptions, name?: string): Promise<AutoResult> {
  const resolved = await resolveTuningName(repo, name);
  const drive = () => whileWatchingStopNow(stopFile(repo.gitdir, resolved.name), () => driveTuning(repo, opts, resolved.name));
  return withDriverLock(repo.gitdir, [resolved.name], opts.command ?? 'git tune auto', drive, !resolved.onBranch);
}

/** The stop request `git tune stop --now` writes: `now <time>`; a plain stop writes the time alone. */
export const stopNowLine = (at: Date) => `now ${at.toISOString()}\n`;

/**
 * Runs `fn` while watching for `git tune stop --now` (a request made after
 * it started): the running runners, judges and editors are killed at once,
 * on the user's request, so none of them is recorded (the cases run again
 * when auto carries on) and auto stops as on a plain stop.
 */
async function whileWatchingStopNow<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const since = Date.now();
  const timer = setInterval(() => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    const at = /^now (\S+)/.exec(text)?.[1];
    if (at !== undefined && Date.parse(at) >= since - 1000) killAll('SIGKILL');
  }, 200);
  timer.unref();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

async function driveTuning(repo: GitRepo, opts: AutoOptions, name: string): Promise<AutoResult> {
  let tuning = await startTuning(repo, name);
  const { session } = opts;
  const stop = stopFile(repo.gitdir, tuning.name);
  await fs.rm(stop, { force: true }); // a request left from an earlier auto is not for this one
  const spent: Usage = { tokens: 0, costUsd: 0 };
  const steps: AutoResult['steps'] = [];
  const clock = opts.clock ?? (() => new Date());
  const ctx: StepContext = {
    env: opts.env,
    clock,
    say: opts.say,
    detail: opts.detail ?? ((text) => opts.say(text.replace(/\n$/, '').split('\n').map((l) => `  ${l}`).join('\n'))),
    interrupted: session.interrupted,
    // A stop request, Ctrl-C or the spent ceiling stops a run from launching cases; the running ones finish and are kept.
    stop: () => existsSync(stop) || ceilingSpent(session) !== null,
    onCase: (event) => {
      if (event.kind === 'finished') {
        for (const u of [spent, session.spent]) {
          u.tokens += event.result.tokens;
          u.costUsd += event.result.costUsd;
        }
      }
      opts.onCase?.(event);
    },
  };
  const finish = (outcome: AutoOutcome, message: string, exitCode: ExitCode, final: string | null = null): AutoResult =>
    ({ tuning: tuning.name, outcome, message, steps, spent: { ...spent }, exitCode, final });
  /** The final check's line for the closing line: what was right, wrong and stuck, not the verdict alone. */
  const finalOf = (t: Tuning) => recordedFinalLine(t).catch(() => null);
  const stopped = async (): Promise<AutoResult | null> => {
    if (existsSync(stop)) {
      await fs.rm(stop, { force: true });
      return finish('stopped', 'stopped on request (git tune stop); `git tune auto` carries on from here', EXIT.ok);
    }
    if (session.interrupted.value) return finish('interrupted', 'interrupted (Ctrl-C); `git tune auto` carries on from here', EXIT.interrupted);
    const ceiling = ceilingSpent(session);
    return ceiling ? finish('over-budget', ceiling, EXIT.history) : null;
  };
  /** A step that did not get done: the budget, the final check, or the step's own failure. */
  const failed = async (step: NextStep, outcome: StepOutcome & { kind: 'budget' | 'interrupted' | 'error' }): Promise<AutoResult> => {
    const early = await stopped();
    if (early) return early;
    const now = await loadTuning(repo, tuning.name);
    const after = nextFor(now);
    if (after.kind === 'final-failed') return finish('final-failed', after.message, EXIT.notVerified, await finalOf(now));
    const budget = after.notes.find((n) => n.includes('budget spent'))
      ?? (after.kind === 'resume' && stoppedForBudget(now.state.runs.get(after.run!)?.stopped) ? after.message : undefined);
    if (outcome.kind === 'budget' || budget) return finish('over-budget', budget ?? (outcome.kind === 'budget' ? outcome.reason : ''), EXIT.history);
    if (outcome.kind === 'interrupted') return finish('interrupted', `${outcome.run} stopped; \`git tune auto\` carries on from here`, EXIT.interrupted);
    return finish('error', `${step.kind} failed (exit ${outcome.exitCode}): ${outcome.message}${outcome.hint ? ` (fix: ${outcome.hint})` : ''}`, outcome.exitCode);
  };

  const maxSteps = opts.maxSteps ?? 2000;
  for (let i = 0; i < maxSteps; i++) {
    tuning = await loadTuning(repo, tuning.name);
    const early = await stopped();
    if (early) return early;
    const decided = nextFor(tuning);
    // A rewritten step stops auto at once, with the command that repairs it (src/app/rewritten.ts).
    const step = decided.kind === 'repair' ? await withRepair(tuning, decided) : decided;
    // Checked here only, between steps: a step once started finishes. Like a spent ceiling, a limit this
    // auto was given (exit 3); `git tune next` names the step to carry on with.
    const late = step.kind === 'done' || step.kind === 'final-failed' || step.kind === 'void-floor' ? null : timeUp(session, clock());
    if (late) return finish('time-up', late, EXIT.history);
    if (step.kind === 'void-rerun' || step.kind === 'void-floor') {
      const voids = voidsInARow(tuning, step);
      if (voids.length >= 3) {
        const last = voids[voids.length - 1]!;
        const where = isFinalStep(tuning, step) ? 'the final check' : `batch ${step.batch} ${step.half}`;
        return finish('stuck', `three VOID runs in a row of ${where} (${voids.map((r) => `${r.name} at concurrency ${r.concurrency}`).join(', ')}): ${last.void ?? 'graded VOID'}`, EXIT.history);
      }
    }
    steps.push({ kind: step.kind, run: step.run, command: step.command });
    if (opts.onStep) opts.onStep(step, tuning, steps.length);
    else opts.say(`next: ${summary(step)}`);
    const before = tuning.tip;
    switch (step.kind) {
      case 'done':
        return finish('done', step.message, EXIT.ok, await finalOf(tuning));
      case 'final-failed':
        return finish('final-failed', step.message, EXIT.notVerified, await finalOf(tuning));
      case 'void-floor':
        return finish('void-floor', step.message, EXIT.history);
      case 'resume':
        // Raising the budget is the user's call, not auto's.
        if (stoppedForBudget(tuning.state.runs.get(step.run!)?.stopped)) return finish('over-budget', step.message, EXIT.history);
        break;
      case 'final':
        if (opts.until === 'final') return finish('until', 'stopped before the final check (--until final)', EXIT.ok);
        break;
      default:
    }
    const outcome = await performStep(tuning, step, ctx);
    switch (outcome.kind) {
      case 'stuck':
        return finish(outcome.code ?? 'stuck', `${outcome.reason}${outcome.command ? `; then: ${outcome.command}` : ''}`, EXIT.history);
      case 'sandbox-down':
        return finish('sandbox-down', outcome.reason, EXIT.runner);
      case 'budget': case 'interrupted': case 'error':
        return failed(step, outcome);
      case 'void': case 'done':
    }
    const tip = await repo.resolveRef(tuning.ref);
    if (tip === before) return finish('stuck', `${step.kind} changed nothing; stopping rather than looping`, EXIT.history);
    // The same step on the same run three times over is a loop, not progress.
    const recent = steps.slice(-3);
    if (recent.length === 3 && recent.every((s) => s.kind === step.kind && s.run === step.run && s.kind !== 'confirm' && s.kind !== 'void-rerun')) {
      return finish('stuck', `${step.kind} of ${step.run} came back three times without progress: ${step.message}`, EXIT.history);
    }
  }
  return finish('stuck', `no end after ${maxSteps} steps`, EXIT.history);
}

export interface AllResult {
  tunings: AutoResult[];
  /** tune/* branches left out, and why. */
  skipped: Array<{ tuning: string; why: string }>;
  spent: Usage;
  ceiling: AutoSession['ceiling'];
  exitCode: ExitCode;
}

/**
 * `--all --only <glob>`: the tunings whose name the glob matches (picomatch,
 * `*` within a name); a glob that matches none is refused, listing them.
 */
export function onlyMatching(names: readonly string[], only: string | undefined): string[] {
  if (only === undefined) return [...names];
  const re = globToRegExp(only);
  const kept = names.filter((n) => re.test(n));
  if (kept.length === 0) {
    throw usageError('no-match', `--only ${only} matches no tuning (tunings: ${names.join(', ') || 'none'})`,
      names.length ? `git tune auto --all --only '${names[0]!.replace(/[@-].*$/, '')}*'` : `git tune init <name> --prose '<glob>' --runner '<command>'`);
  }
  return kept;
}

export async function configured(repo: GitRepo, name: string): Promise<string | null> {
  try {
    const tip = await repo.resolveRef(branchRef(name));
    if (!tip || (await readText(repo, tip, configPath(tuningDir(name)))) === null) return 'no config.yaml on the branch';
    const missing = missingConfig((await loadTuning(repo, name)).config!);
    return missing ? `its config has no ${missing}` : null;
  } catch (err) {
    return `cannot be read: ${(err as Error).message}`;
  }
}

/**
 * `git tune auto --all`: every `tune/*` branch that has a config, by name, in
 * turn, each switched to with native `git switch` and driven to its end under
 * its own budget, all of them under one shared ceiling. Back on the branch it
 * started from at the end.
 */
export async function autoAll(cwd: string, opts: AutoOptions & { only?: string }): Promise<AllResult> {
  const repo = await openRepo(cwd);
  const skipped: AllResult['skipped'] = [];
  const names: string[] = [];
  for (const name of onlyMatching((await listTunings(repo)).sort(compareIds), opts.only)) {
    const why = await configured(repo, name);
    if (why) skipped.push({ tuning: name, why });
    else names.push(name);
  }
  if (names.length === 0) {
    throw usageError('no-tunings', `no tune/* branch has a config${skipped.length ? ` (${skipped.map((s) => `${s.tuning}: ${s.why}`).join('; ')})` : ''}`,
      `git tune init <name> --prose 'agents/**/*.md' --runner 'node agent.js'`);
  }
  // It switches branches under every tuning it will drive: it drives them all from the start, or none.
  return withDriverLock(repo.gitdir, names, opts.command ?? 'git tune auto --all', () => driveAll(repo, names, skipped, opts));
}

async function driveAll(repo: GitRepo, names: string[], skipped: AllResult['skipped'], opts: AutoOptions): Promise<AllResult> {
  const dirty = await repo.uncommittedPaths(opts.env);
  if (dirty.length > 0) {
    throw usageError('uncommitted-changes', `--all switches branches, and the working tree has uncommitted changes: ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`,
      'git stash   # or commit them, then: git tune auto --all');
  }
  for (const s of skipped) opts.say(`skipping ${branchName(s.tuning)}: ${s.why}`);
  const home = await repo.headRef();
  const homeOid = home ? null : await repo.resolveRef('HEAD');
  const results: AutoResult[] = [];
  const notStarted = (name: string, outcome: AutoOutcome, message: string, exitCode: ExitCode): AutoResult =>
    ({ tuning: name, outcome, message, steps: [], spent: { tokens: 0, costUsd: 0 }, exitCode });
  let halt: AutoResult | null = null;
  for (const name of names) {
    if (halt) {
      results.push(notStarted(name, halt.outcome, `not started: ${halt.message}`, halt.exitCode));
      continue;
    }
    const ceiling = ceilingSpent(opts.session);
    if (ceiling) {
      results.push(notStarted(name, 'over-budget', `not started: ${ceiling}`, EXIT.history));
      continue;
    }
    const left = await repo.uncommittedPaths(opts.env);
    if (left.length > 0) {
      results.push(notStarted(name, 'error', `not started: the working tree has uncommitted changes (${left.slice(0, 3).join(', ')})`, EXIT.usage));
      continue;
    }
    opts.say(`── ${branchName(name)}`);
    try {
      if ((await repo.headRef()) !== `refs/heads/${branchName(name)}`) await repo.switchBranch(branchName(name), opts.env);
      const result = await autoTuning(repo.dir, opts, name);
      results.push(result);
      if (result.outcome === 'stopped' || result.outcome === 'interrupted' || result.outcome === 'time-up') halt = result;
    } catch (err) {
      const full = diskFullError(err, repo.dir);
      results.push(full ? notStarted(name, 'error', `${full.message} (fix: ${full.hint})`, EXIT.space) : notStarted(name, 'error', (err as Error).message, EXIT.unexpected));
    }
  }
  const back = home ? home.replace('refs/heads/', '') : homeOid;
  if (back && (await repo.headRef()) !== home && (await repo.uncommittedPaths(opts.env)).length === 0) {
    await (home ? repo.switchBranch(back, opts.env) : repo.detachHead(back, opts.env)).catch(() => {});
  }
  const failed = results.find((r) => r.exitCode !== EXIT.ok);
  return { tunings: results, skipped, spent: { ...opts.session.spent }, ceiling: opts.session.ceiling, exitCode: failed?.exitCode ?? EXIT.ok };
}
