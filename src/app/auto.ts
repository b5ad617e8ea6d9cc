import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { missingConfig } from '../contracts/config.js';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import { splitArgs } from '../core/argv.js';
import { compareIds, viewDifficult } from '../core/difficult.js';
import { isJudgeOutput, mergeProposals, parseFindings } from '../core/findings.js';
import { batchNumbered, isVoidRun, type RunState } from '../core/fold.js';
import { branchName, branchRef, FINAL_RUN, tuningDir } from '../core/names.js';
import type { NextStep } from '../core/next.js';
import { TuneError, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { runGit } from '../git/native.js';
import { openRepo } from '../git/open.js';
import type { GitRepo } from '../git/types.js';
import { resolveCommand } from '../run/presets/index.js';
import { runProcess } from '../run/process.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import { caseEvents, type CaseEvent } from '../run/progress.js';
import { nextFor } from './decide.js';
import { CONFIG_FILE } from './config-file.js';
import { changesPath } from './edit.js';
import { findingsPath, judgePath } from './grade.js';
import type { Usage } from './live.js';
import { uncommittedProse } from './prose.js';
import { stopRequest } from './run.js';
import { listTunings, loadTuning, readText, type Tuning } from './tuning.js';

/**
 * `git tune auto`: the loop unattended. It follows `git tune next` and no
 * other state machine: each step's printed command is what it runs (through
 * this same CLI, in-process), and the two steps that need a person are done
 * with the configured judge and editor:
 * - grade: the draft (with the judge's verdicts) is recorded as drafted; a
 *   wrong case whose judge says `caseOnly` (the fault is in the case, SPEC 6)
 *   is put on the difficult list first, so the draft counts it there;
 * - edit: the editor applies the judge's merged proposals and writes
 *   changes.md. A case-only case goes to the difficult list instead of into
 *   an edit; when the editor has nothing to change and every wrong case is on
 *   the list, the run is graded again; otherwise auto stops for a person.
 * It stops at once on a downed sandbox, after three VOID runs in a row of one
 * batch and half, on a spent budget (the tuning's own, or the ceiling shared
 * by every tuning this auto drives), and at the next safe point on Ctrl-C or
 * `git tune stop`. Every step is a commit, so `git tune auto` again carries on
 * from history, also after a kill -9.
 */
export type AutoOutcome =
  | 'done' | 'until' | 'stopped' | 'interrupted' | 'stuck' | 'over-budget' | 'sandbox-down' | 'void-floor' | 'final-failed' | 'error';

export interface AutoResult {
  tuning: string;
  outcome: AutoOutcome;
  message: string;
  steps: Array<{ kind: string; run: string | null; command: string | null }>;
  /** What this auto spent on the tuning's cases. */
  spent: Usage;
  exitCode: number;
}

/** What every tuning one `git tune auto` drives shares: the ceiling, what was spent against it, Ctrl-C. */
export interface AutoSession {
  ceiling: { maxCostUsd: number | null; maxTokens: number | null };
  spent: Usage;
  interrupted: { value: boolean };
}

export interface CliOutcome {
  code: number;
  /** The `error:` line the command printed, if it failed. */
  error: string | null;
}

export interface AutoOptions {
  until?: 'final';
  maxSteps?: number;
  env: Env;
  session: AutoSession;
  /** Narration: auto's own lines. */
  say: (line: string) => void;
  /** The step about to be done (for a live view). */
  onStep?: (step: NextStep, tuning: Tuning, number: number) => void;
  onCase?: (event: CaseEvent) => void;
  /** Runs `git-tune <args>` in-process. */
  cli: (args: string[]) => Promise<CliOutcome>;
}

export const stopFile = (gitdir: string, tuning: string) => path.join(gitdir, 'tune', tuning, 'stop');

export const newSession = (ceiling: AutoSession['ceiling'] = { maxCostUsd: null, maxTokens: null }): AutoSession => ({
  ceiling, spent: { tokens: 0, costUsd: 0 }, interrupted: { value: false },
});

/** Why the shared ceiling stops auto, or null while there is some left. */
export function ceilingSpent(session: AutoSession): string | null {
  const { ceiling, spent } = session;
  if (ceiling.maxCostUsd !== null && spent.costUsd >= ceiling.maxCostUsd) {
    return `the ceiling of this auto is spent: $${spent.costUsd.toFixed(4)} of $${ceiling.maxCostUsd}`;
  }
  if (ceiling.maxTokens !== null && spent.tokens >= ceiling.maxTokens) {
    return `the ceiling of this auto is spent: ${spent.tokens.toLocaleString('en-US')} of ${ceiling.maxTokens.toLocaleString('en-US')} tokens`;
  }
  return null;
}

/** The commands of a `next` step: `git tune a && git tune b` → [[a], [b]]. */
export function commandsOf(line: string): string[][] {
  return line.split(/\s+&&\s+/).map((part) => {
    const args = splitArgs(part.trim());
    if (args[0] !== 'git' || args[1] !== 'tune') throw new Error(`not a git-tune command: ${part}`);
    return args.slice(2);
  });
}

const shellWord = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

async function runArgs(args: string[], opts: AutoOptions): Promise<CliOutcome> {
  opts.say(`$ git tune ${args.map(shellWord).join(' ')}`);
  return opts.cli(args);
}

async function runLine(line: string, opts: AutoOptions): Promise<CliOutcome> {
  for (const args of commandsOf(line)) {
    const outcome = await runArgs(args, opts);
    if (outcome.code !== 0) return outcome;
  }
  return { code: 0, error: null };
}

const ok: CliOutcome = { code: 0, error: null };

/** VOID runs at the end of the step's batch and half. */
function voidsInARow(tuning: Tuning, step: NextStep): RunState[] {
  const batch = step.batch === null ? undefined : batchNumbered(tuning.state, step.batch);
  const runs = (batch?.runs ?? []).filter((r) => r.half === step.half);
  const out: RunState[] = [];
  for (let i = runs.length - 1; i >= 0 && isVoidRun(runs[i]!); i--) out.unshift(runs[i]!);
  return out;
}

function notFixed(tuning: Tuning): Set<string> {
  return new Set(viewDifficult(tuning.state, tuning.config!.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id));
}

function parseJudge(text: string | null): JudgeFile {
  return text ? judgeFileSchema.parse(JSON.parse(text)) : {};
}

/** Of the wrong cases, those the judge says are at fault themselves (`caseOnly`) and not yet on the difficult list. */
function caseOnlyCases(wrong: readonly string[], judge: JudgeFile, listed: ReadonlySet<string>): string[] {
  return wrong.filter((id) => {
    const j = judge[id];
    return isJudgeOutput(j) && j.caseOnly && !listed.has(id);
  });
}

const CASE_ONLY_NOTE = 'the judge says the fault is in the case (caseOnly): another edit would learn nothing';

async function listCaseOnly(ids: readonly string[], opts: AutoOptions): Promise<CliOutcome> {
  for (const id of ids) {
    const outcome = await runArgs(['difficult', 'add', id, '--why', 'wrong', '--note', CASE_ONLY_NOTE], opts);
    if (outcome.code !== 0) return outcome;
  }
  return ok;
}

/** The grade step done as a grader would: the draft, case-only cases listed, the draft recorded. */
async function gradeStep(tuning: Tuning, step: NextStep, opts: AutoOptions): Promise<CliOutcome> {
  if (step.run === FINAL_RUN) return runArgs(['grade'], opts);
  let outcome = await runArgs(['grade', '--draft', '--force'], opts);
  if (outcome.code !== 0) return outcome;
  const run = tuning.state.runs.get(step.run!)!;
  const worktree = (file: string) => fs.readFile(path.join(tuning.repo.dir, file), 'utf8').catch(() => null);
  const draft = parseFindings((await worktree(findingsPath(tuning, run.name))) ?? '', run.cases);
  const wrong = [...draft.cases].filter(([, v]) => v === 'wrong').map(([id]) => id);
  const caseOnly = caseOnlyCases(wrong, parseJudge(await worktree(judgePath(tuning, run.name))), notFixed(tuning));
  if (caseOnly.length > 0) {
    outcome = await listCaseOnly(caseOnly, opts);
    if (outcome.code !== 0) return outcome;
    // Drafted again with them on the list (the judge's verdicts are kept in judge.json, not asked again).
    await fs.rm(path.join(tuning.repo.dir, findingsPath(tuning, run.name)), { force: true });
    outcome = await runArgs(['grade', '--draft'], opts);
    if (outcome.code !== 0) return outcome;
  }
  return runArgs(['grade'], opts);
}

/** Runs the configured editor on the graded run; true when it changed prose. */
async function runEditor(tuning: Tuning, run: RunState, judge: JudgeFile, opts: AutoOptions): Promise<boolean> {
  const config = tuning.config!;
  const editor = config.editor!;
  // Every case's proposals count: a with-memory run can be all right and still save twice.
  const proposals = mergeProposals(judge, run.cases)
    .map((p) => ({ file: p.file, change: p.change, why: p.why.join('; '), expect: p.expect.join('; '), cases: p.cases }));
  const scratch = await makeScratch('editor');
  try {
    const proposalsFile = path.join(scratch, 'proposals.json');
    await fs.writeFile(proposalsFile, JSON.stringify(proposals, null, 2));
    const command = resolveCommand(editor);
    opts.say(`editor: ${proposals.length} proposal${proposals.length === 1 ? '' : 's'} for ${run.name}`);
    const outcome = await runProcess({
      command: command.command, shell: command.shell, cwd: tuning.repo.dir,
      env: {
        ...opts.env, ...editor.env, ...command.env, TUNE_ROOT: tuning.repo.dir,
        TUNE_FINDINGS: path.join(tuning.repo.dir, findingsPath(tuning, run.name)),
        TUNE_PROPOSALS: proposalsFile,
        TUNE_CHANGES: path.join(tuning.repo.dir, changesPath(tuning, run.name)),
        TUNE_HALF: run.half ?? 'nomem',
        TUNE_RUN: run.name,
      },
      timeoutMs: editor.timeoutSec * 1000,
      stdoutFile: path.join(scratch, 'stdout'), stderrFile: path.join(scratch, 'stderr'),
    });
    if (outcome.exitCode !== 0) {
      const err = (await fs.readFile(path.join(scratch, 'stderr'), 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' / ');
      throw usageError('editor-failed', `the editor failed on ${run.name} (exit ${outcome.exitCode ?? outcome.signal}${outcome.timedOut ? ', timed out' : ''})${err ? `: ${err}` : ''}`,
        `fix the editor (${editor.command?.join(' ') ?? editor.preset}), then: git tune auto`);
    }
  } finally {
    await removeScratch(scratch);
  }
  return (await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy])).length > 0;
}

/**
 * The edit step: case-only cases to the difficult list, the editor for the
 * rest, `git tune edit`. When nothing is left to edit and every wrong case is
 * on the list, the run is graded again (that regrade is due: the list
 * changed). `stuck` says why a person must take over.
 */
async function editStep(tuning: Tuning, step: NextStep, opts: AutoOptions): Promise<CliOutcome & { stuck?: string }> {
  const config = tuning.config!;
  const run = tuning.state.runs.get(step.run!)!;
  const grade = run.grade!;
  const judge = parseJudge(await readText(tuning.repo, tuning.tip, judgePath(tuning, run.name)));
  const listed = notFixed(tuning);
  const caseOnly = caseOnlyCases(grade.wrong, judge, listed);
  let outcome = await listCaseOnly(caseOnly, opts);
  if (outcome.code !== 0) return outcome;
  const open = grade.wrong.filter((id) => !listed.has(id) && !caseOnly.includes(id));
  const prose = [...config.prose, ...config.memoryPolicy];

  // An editor that finished before a kill left prose and changes.md behind: record them, do not edit twice.
  const changesFile = changesPath(tuning, run.name);
  const changes = await fs.readFile(path.join(tuning.repo.dir, changesFile), 'utf8').catch(() => null);
  const editorDone = changes !== null && changes !== (await readText(tuning.repo, tuning.tip, changesFile))
    && (await uncommittedProse(tuning.repo, tuning.tip, prose)).length > 0;
  const proposals = mergeProposals(judge, run.cases).length;
  let changed = editorDone;
  if (!editorDone && config.editor && (open.length > 0 || proposals > 0)) {
    changed = await runEditor(tuning, run, judge, opts);
  }
  if (changed) return runArgs(['edit'], opts);

  const person = `a person must edit the prose, write ${changesFile}, then run \`git tune edit\``;
  if (open.length > 0) {
    return { ...ok, stuck: config.editor ? `the editor changed nothing for ${run.name} (still wrong: ${open.join(', ')}): ${person}` : `no editor is configured: ${person}` };
  }
  outcome = await runLine('git tune grade --draft --force && git tune grade', opts);
  if (outcome.code !== 0) return outcome;
  const after = await loadTuning(tuning.repo, tuning.name);
  const verdict = after.state.runs.get(run.name)?.grade?.verdict;
  if (verdict === grade.verdict) {
    return { ...ok, stuck: `${run.name} is ${verdict} again and ${config.editor ? 'the editor has nothing to change' : 'no editor is configured'}: ${person}` };
  }
  return ok;
}

function summary(step: NextStep): string {
  const where = step.run ?? (step.batch !== null ? `batch ${step.batch}` : '');
  return `${step.kind}${where ? ` ${where}` : ''}: ${step.message}`;
}

/** Drives one tuning (the checked-out one, or `name`) until next says it is done or something stops it. */
export async function autoTuning(cwd: string, opts: AutoOptions, name?: string): Promise<AutoResult> {
  const repo = await openRepo(cwd);
  let tuning = await loadTuning(repo, name);
  const { session } = opts;
  const stop = stopFile(repo.gitdir, tuning.name);
  await fs.rm(stop, { force: true }); // a request left from an earlier auto is not for this one
  const spent: Usage = { tokens: 0, costUsd: 0 };
  const steps: AutoResult['steps'] = [];
  const listener = caseEvents.listener;
  const check = stopRequest.check;
  caseEvents.listener = (event) => {
    if (event.kind === 'finished') {
      for (const u of [spent, session.spent]) {
        u.tokens += event.result.tokens;
        u.costUsd += event.result.costUsd;
      }
    }
    opts.onCase?.(event);
  };
  // A stop request, Ctrl-C or the spent ceiling stops a run from launching cases; the running ones finish and are kept.
  stopRequest.check = () => existsSync(stop) || session.interrupted.value || ceilingSpent(session) !== null;
  const finish = (outcome: AutoOutcome, message: string, exitCode: number): AutoResult =>
    ({ tuning: tuning.name, outcome, message, steps, spent: { ...spent }, exitCode });
  const stopped = async (): Promise<AutoResult | null> => {
    if (existsSync(stop)) {
      await fs.rm(stop, { force: true });
      return finish('stopped', 'stopped on request (git tune stop); `git tune auto` carries on from here', 0);
    }
    if (session.interrupted.value) return finish('interrupted', 'interrupted (Ctrl-C); `git tune auto` carries on from here', 130);
    const ceiling = ceilingSpent(session);
    return ceiling ? finish('over-budget', ceiling, 3) : null;
  };

  try {
    const maxSteps = opts.maxSteps ?? 2000;
    for (let i = 0; i < maxSteps; i++) {
      tuning = await loadTuning(repo, tuning.name);
      const early = await stopped();
      if (early) return early;
      const step = nextFor(tuning);
      if (step.kind === 'void-rerun' || step.kind === 'void-floor') {
        const voids = voidsInARow(tuning, step);
        if (voids.length >= 3) {
          const last = voids[voids.length - 1]!;
          return finish('stuck', `three VOID runs in a row of batch ${step.batch} ${step.half} (${voids.map((r) => `${r.name} at concurrency ${r.concurrency}`).join(', ')}): ${last.void ?? 'graded VOID'}`, 3);
        }
      }
      steps.push({ kind: step.kind, run: step.run, command: step.command });
      if (opts.onStep) opts.onStep(step, tuning, steps.length);
      else opts.say(`next: ${summary(step)}`);
      const before = tuning.tip;
      let outcome: CliOutcome = ok;
      switch (step.kind) {
        case 'done':
          return finish('done', step.message, 0);
        case 'final-failed':
          return finish('final-failed', step.message, 6);
        case 'void-floor':
          return finish('void-floor', step.message, 3);
        case 'dataset':
        case 'config':
          return finish('stuck', `a person must do this step: ${step.message}`, 3);
        case 'resume':
          // Raising the budget is the user's call, not auto's.
          if (tuning.state.runs.get(step.run!)?.stopped?.startsWith('budget')) return finish('over-budget', step.message, 3);
          outcome = await runLine(step.command!, opts);
          break;
        case 'final':
          if (opts.until === 'final') return finish('until', 'stopped before the final check (--until final)', 0);
          outcome = await runLine(step.command!, opts);
          break;
        case 'grade':
          outcome = await gradeStep(tuning, step, opts);
          break;
        case 'edit': {
          const edit = await editStep(tuning, step, opts).catch((err: unknown) => {
            if (err instanceof TuneError) return { code: err.exitCode, error: err.message, stuck: undefined };
            throw err;
          });
          if (edit.stuck) return finish('stuck', edit.stuck, 3);
          outcome = edit;
          break;
        }
        default:
          outcome = await runLine(step.command!, opts);
      }
      if (outcome.code !== 0) {
        const early = await stopped();
        if (early) return early;
        const now = await loadTuning(repo, tuning.name);
        const after = nextFor(now);
        if (after.kind === 'final-failed') return finish('final-failed', after.message, 6);
        const budget = after.notes.find((n) => n.includes('budget spent'))
          ?? (after.kind === 'resume' && now.state.runs.get(after.run!)?.stopped?.startsWith('budget') ? after.message : undefined);
        if (budget) return finish('over-budget', budget, 3);
        if (outcome.code === 5) return finish('sandbox-down', outcome.error ?? `${step.kind} stopped: the runner's sandbox is down`, 5);
        return finish('error', `${step.kind} failed (exit ${outcome.code})${outcome.error ? `: ${outcome.error}` : ''}`, outcome.code);
      }
      const tip = await repo.resolveRef(tuning.ref);
      if (tip === before) return finish('stuck', `${step.kind} changed nothing; stopping rather than looping`, 3);
      // The same step on the same run three times over is a loop, not progress.
      const recent = steps.slice(-3);
      if (recent.length === 3 && recent.every((s) => s.kind === step.kind && s.run === step.run && s.kind !== 'confirm' && s.kind !== 'void-rerun')) {
        return finish('stuck', `${step.kind} of ${step.run} came back three times without progress: ${step.message}`, 3);
      }
    }
    return finish('stuck', `no end after ${maxSteps} steps`, 3);
  } finally {
    caseEvents.listener = listener;
    stopRequest.check = check;
  }
}

export interface AllResult {
  tunings: AutoResult[];
  /** tune/* branches left out, and why. */
  skipped: Array<{ tuning: string; why: string }>;
  spent: Usage;
  ceiling: AutoSession['ceiling'];
  exitCode: number;
}

/** Tracked files with uncommitted changes, as native git sees them. */
async function uncommitted(dir: string, env: Env): Promise<string[]> {
  const { stdout } = await runGit(['status', '--porcelain', '--untracked-files=no'], dir, env);
  return stdout.split('\n').filter(Boolean).map((l) => l.slice(3));
}

async function configured(repo: GitRepo, name: string): Promise<string | null> {
  try {
    const tip = await repo.resolveRef(branchRef(name));
    if (!tip || (await readText(repo, tip, `${tuningDir(name)}/${CONFIG_FILE}`)) === null) return 'no config.yaml on the branch';
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
export async function autoAll(cwd: string, opts: AutoOptions): Promise<AllResult> {
  const repo = await openRepo(cwd);
  const skipped: AllResult['skipped'] = [];
  const names: string[] = [];
  for (const name of (await listTunings(repo)).sort(compareIds)) {
    const why = await configured(repo, name);
    if (why) skipped.push({ tuning: name, why });
    else names.push(name);
  }
  if (names.length === 0) {
    throw usageError('no-tunings', `no tune/* branch has a config${skipped.length ? ` (${skipped.map((s) => `${s.tuning}: ${s.why}`).join('; ')})` : ''}`,
      `git tune init <name> --prose 'agents/**/*.md' --runner 'node agent.js'`);
  }
  const dirty = await uncommitted(repo.dir, opts.env);
  if (dirty.length > 0) {
    throw usageError('uncommitted-changes', `--all switches branches, and the working tree has uncommitted changes: ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`,
      'git stash   # or commit them, then: git tune auto --all');
  }
  for (const s of skipped) opts.say(`skipping ${branchName(s.tuning)}: ${s.why}`);
  const home = await repo.headRef();
  const homeOid = home ? null : await repo.resolveRef('HEAD');
  const results: AutoResult[] = [];
  const notStarted = (name: string, outcome: AutoOutcome, message: string, exitCode: number): AutoResult =>
    ({ tuning: name, outcome, message, steps: [], spent: { tokens: 0, costUsd: 0 }, exitCode });
  let halt: AutoResult | null = null;
  for (const name of names) {
    if (halt) {
      results.push(notStarted(name, halt.outcome, `not started: ${halt.message}`, halt.exitCode));
      continue;
    }
    const ceiling = ceilingSpent(opts.session);
    if (ceiling) {
      results.push(notStarted(name, 'over-budget', `not started: ${ceiling}`, 3));
      continue;
    }
    const left = await uncommitted(repo.dir, opts.env);
    if (left.length > 0) {
      results.push(notStarted(name, 'error', `not started: the working tree has uncommitted changes (${left.slice(0, 3).join(', ')})`, 2));
      continue;
    }
    opts.say(`── ${branchName(name)}`);
    try {
      if ((await repo.headRef()) !== `refs/heads/${branchName(name)}`) await runGit(['switch', '--quiet', branchName(name)], repo.dir, opts.env);
      const result = await autoTuning(repo.dir, opts, name);
      results.push(result);
      if (result.outcome === 'stopped' || result.outcome === 'interrupted') halt = result;
    } catch (err) {
      results.push(notStarted(name, 'error', (err as Error).message, 1));
    }
  }
  const back = home ? home.replace('refs/heads/', '') : homeOid;
  if (back && (await repo.headRef()) !== home && (await uncommitted(repo.dir, opts.env)).length === 0) {
    await runGit(home ? ['switch', '--quiet', back] : ['switch', '--quiet', '--detach', back], repo.dir, opts.env).catch(() => {});
  }
  const failed = results.find((r) => r.exitCode !== 0);
  return { tunings: results, skipped, spent: { ...opts.session.spent }, ceiling: opts.session.ceiling, exitCode: failed?.exitCode ?? 0 };
}
