import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { judgeFileSchema } from '../contracts/judge.js';
import { splitArgs } from '../core/argv.js';
import { viewDifficult } from '../core/difficult.js';
import { isVoidRun } from '../core/fold.js';
import { mergeProposals } from '../core/findings.js';
import type { NextStep } from '../core/next.js';
import type { Env } from '../git/identity.js';
import { resolveCommand } from '../run/presets/index.js';
import { runProcess } from '../run/process.js';
import { nextFor } from './decide.js';
import { changesPath } from './edit.js';
import { findingsPath, judgePath } from './grade.js';
import { uncommittedProse } from './prose.js';
import { stopRequest } from './run.js';
import { loadTuning, readText, type Tuning } from './tuning.js';
import { openRepo } from '../git/open.js';

/**
 * `git tune auto`: the loop unattended. It follows `git tune next` and no
 * other state machine: each step's printed command is what it runs (through
 * this same CLI, in-process), and the two steps that need a person are done
 * with the configured judge and editor:
 * - grade: the draft (with the judge's verdicts) is recorded as drafted;
 * - edit: the editor applies the judge's merged proposals and writes
 *   changes.md; when there is nothing to propose (the judge says only the
 *   case is wrong), the wrong cases go to the difficult list instead and the
 *   run is graded again.
 */
export type AutoOutcome = 'done' | 'until' | 'stopped' | 'stuck' | 'over-budget' | 'void-floor' | 'final-failed' | 'error';

export interface AutoResult {
  tuning: string;
  outcome: AutoOutcome;
  message: string;
  steps: Array<{ kind: string; run: string | null; command: string | null }>;
  exitCode: number;
}

export interface AutoOptions {
  until?: 'final';
  maxSteps?: number;
  env: Env;
  say: (line: string) => void;
  /** Runs `git-tune <args>` in-process, returning its exit code. */
  cli: (args: string[]) => Promise<number>;
}

export const stopFile = (gitdir: string, tuning: string) => path.join(gitdir, 'tune', tuning, 'stop');

/** The commands of a `next` step: `git tune a && git tune b` → [[a], [b]]. */
export function commandsOf(line: string): string[][] {
  return line.split(/\s+&&\s+/).map((part) => {
    const args = splitArgs(part.trim());
    if (args[0] !== 'git' || args[1] !== 'tune') throw new Error(`not a git-tune command: ${part}`);
    return args.slice(2);
  });
}

async function runLine(line: string, opts: AutoOptions): Promise<number> {
  for (const args of commandsOf(line)) {
    opts.say(`$ git tune ${args.join(' ')}`);
    const code = await opts.cli(args);
    if (code !== 0) return code;
  }
  return 0;
}

function voidsInARow(tuning: Tuning, step: NextStep): number {
  const batch = tuning.state.batches.find((b) => b.plan.batch === step.batch);
  const runs = (batch?.runs ?? []).filter((r) => r.half === step.half);
  let n = 0;
  for (let i = runs.length - 1; i >= 0 && isVoidRun(runs[i]!); i--) n++;
  return n;
}

/** The edit step done by the editor; false when there was nothing it could change. */
async function editWithEditor(tuning: Tuning, step: NextStep, opts: AutoOptions): Promise<boolean> {
  const config = tuning.config!;
  if (!config.editor || !step.run) return false;
  const judgeText = await readText(tuning.repo, tuning.tip, judgePath(tuning, step.run));
  const run = tuning.state.runs.get(step.run)!;
  const judge = judgeText ? judgeFileSchema.parse(JSON.parse(judgeText)) : {};
  // Every case's proposals count: a with-memory run can be all right and still save twice.
  const proposals = mergeProposals(judge, run.cases)
    .map((p) => ({ file: p.file, change: p.change, why: p.why.join('; '), expect: p.expect.join('; '), cases: p.cases }));
  if (proposals.length === 0) return false;
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'git-tune-editor-'));
  try {
    const proposalsFile = path.join(scratch, 'proposals.json');
    await fs.writeFile(proposalsFile, JSON.stringify(proposals, null, 2));
    const command = resolveCommand(config.editor);
    opts.say(`editor: ${proposals.length} proposal(s) for ${step.run}`);
    const outcome = await runProcess({
      command: command.command, shell: command.shell, cwd: tuning.repo.dir,
      env: {
        ...opts.env, ...config.editor.env, ...command.env, TUNE_ROOT: tuning.repo.dir,
        TUNE_FINDINGS: path.join(tuning.repo.dir, findingsPath(tuning, step.run)),
        TUNE_PROPOSALS: proposalsFile,
        TUNE_CHANGES: path.join(tuning.repo.dir, changesPath(tuning, step.run)),
        TUNE_HALF: step.half ?? 'nomem',
        TUNE_RUN: step.run,
      },
      timeoutMs: config.editor.timeoutSec * 1000,
      stdoutFile: path.join(scratch, 'stdout'), stderrFile: path.join(scratch, 'stderr'),
    });
    if (outcome.exitCode !== 0) {
      const err = (await fs.readFile(path.join(scratch, 'stderr'), 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' / ');
      throw new Error(`the editor failed (exit ${outcome.exitCode ?? outcome.signal}${outcome.timedOut ? ', timed out' : ''}): ${err}`);
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  const changed = await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  return changed.length > 0;
}

export async function autoTuning(cwd: string, opts: AutoOptions): Promise<AutoResult> {
  const repo = await openRepo(cwd);
  let tuning = await loadTuning(repo);
  const stop = stopFile(repo.gitdir, tuning.name);
  await fs.rm(stop, { force: true });
  stopRequest.check = () => existsSync(stop);
  const steps: AutoResult['steps'] = [];
  const finish = (outcome: AutoOutcome, message: string, exitCode: number): AutoResult => {
    stopRequest.check = () => false;
    return { tuning: tuning.name, outcome, message, steps, exitCode };
  };
  const maxSteps = opts.maxSteps ?? 2000;
  for (let i = 0; i < maxSteps; i++) {
    tuning = await loadTuning(repo, tuning.name);
    if (existsSync(stop)) {
      await fs.rm(stop, { force: true });
      return finish('stopped', 'stopped on request (git tune stop); `git tune auto` carries on', 0);
    }
    const step = nextFor(tuning);
    steps.push({ kind: step.kind, run: step.run, command: step.command });
    opts.say(`next: ${step.kind}: ${step.message}`);
    const before = tuning.tip;
    let code = 0;
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
      case 'final':
        if (opts.until === 'final') return finish('until', 'stopped before the final check (--until final)', 0);
        code = await runLine(step.command!, opts);
        break;
      case 'void-rerun':
        if (voidsInARow(tuning, step) >= 3) {
          return finish('stuck', `three VOID runs in a row of batch ${step.batch} ${step.half}: ${tuning.state.runs.get(step.run!)?.void ?? ''}`, 3);
        }
        code = await runLine(step.command!, opts);
        break;
      case 'grade':
        code = step.run === 'final-check' ? await runLine('git tune grade', opts) : await runLine('git tune grade --draft --force && git tune grade', opts);
        break;
      case 'edit': {
        if (await editWithEditor(tuning, step, opts)) {
          code = await runLine('git tune edit', opts);
          break;
        }
        // Nothing the editor can change: the wrong cases are the case's fault (or nobody proposes a fix).
        const onList = new Set(viewDifficult(tuning.state, tuning.config!.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id));
        const wrong = (tuning.state.runs.get(step.run!)?.grade?.wrong ?? []).filter((id) => !onList.has(id));
        const adds = wrong.map((id) => `git tune difficult add ${id} --why wrong --note 'no prose edit proposed: the judge says the case is at fault'`);
        code = await runLine([...adds, 'git tune grade --draft --force', 'git tune grade'].join(' && '), opts);
        break;
      }
      default:
        code = await runLine(step.command!, opts);
    }
    if (code !== 0) {
      if (existsSync(stop)) {
        await fs.rm(stop, { force: true });
        return finish('stopped', 'stopped on request (git tune stop); `git tune auto` carries on', 0);
      }
      const now = nextFor(await loadTuning(repo, tuning.name));
      const overBudget = now.notes.some((n) => n.includes('budget spent'));
      const outcome: AutoOutcome = overBudget ? 'over-budget' : code === 5 ? 'stuck' : 'error';
      return finish(outcome, overBudget ? now.notes.find((n) => n.includes('budget spent'))! : `${step.kind} failed (exit ${code})`, code);
    }
    const after = await repo.resolveRef(tuning.ref);
    if (after === before) return finish('stuck', `${step.kind} changed nothing; stopping rather than looping`, 3);
    // The same step on the same run three times over is a loop, not progress.
    const recent = steps.slice(-3);
    if (recent.length === 3 && recent.every((s) => s.kind === step.kind && s.run === step.run && s.kind !== 'confirm' && s.kind !== 'void-rerun')) {
      return finish('stuck', `${step.kind} of ${step.run} came back three times without progress: ${step.message}`, 3);
    }
  }
  return finish('stuck', `no end after ${maxSteps} steps`, 3);
}
