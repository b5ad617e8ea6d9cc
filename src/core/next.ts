import type { Complexity } from '../contracts/dataset.js';
import { stoppedForBudget } from './run-stop.js';
import type { Config } from '../contracts/config.js';
import { missingConfig } from '../contracts/values.js';
import { basisRun, revertedAfter } from './basis.js';
import { viewDifficult } from './difficult.js';
import { closedHalf, countedRuns, currentBatch, halfRuns, isVoidRun, runName, type EditState, type RunState, type TuningState } from './fold.js';
import { FINAL_RUN, parseRunName, type Half } from './names.js';
import { configPath, readmePath, RUN_FILES, runFilePath } from './paths.js';
import { planBatch } from './plan.js';
import { describeRewritten, undoCommand } from './rewritten.js';
import { passedRuleBreaks } from './rules.js';

/**
 * `git tune next`: one step, decided from history alone, in the order of
 * docs/method.md#next. Pure.
 */
export const NEXT_KINDS = [
  'dataset', 'config', 'select', 'batch', 'run', 'resume', 'grade', 'void-floor', 'void-rerun',
  'refused', 'confirm', 'candidate', 'mem-run', 'checkpoint', 'final', 'done', 'final-failed',
  'stop-batch', 'edit', 'repair', 'rerun',
] as const;
export type NextKind = (typeof NEXT_KINDS)[number];

export interface NextStep {
  kind: NextKind;
  message: string;
  command: string | null;
  batch: number | null;
  half: Half | null;
  run: string | null;
  notes: string[];
}

export interface NextInput {
  state: TuningState;
  config: Config | null;
  selection: readonly string[];
  complexity: (id: string) => Complexity | undefined;
  /** `.tune/<name>`, for paths in messages. */
  dir: string;
  /** The README's hand-written part is still the placeholder (docs/method.md#next). */
  readmePlaceholder?: boolean;
}

/** The lowest concurrency at which a VOID run is still re-run (docs/method.md#next). */
export const VOID_FLOOR = 4;

const BATCH_HALF_ORDER: Record<Half, number> = { nomem: 0, mem: 1 };

/** Highest batch, `nomem` before `mem`, then run number. */
export function latestBatchRun(state: TuningState): RunState | null {
  let best: RunState | null = null;
  for (const b of state.batches) {
    for (const r of b.runs) {
      if (
        !best ||
        r.batch > best.batch ||
        (r.batch === best.batch && BATCH_HALF_ORDER[r.half!] > BATCH_HALF_ORDER[best.half!]) ||
        (r.batch === best.batch && r.half === best.half && r.number > best.number)
      ) {
        best = r;
      }
    }
  }
  return best;
}

/** The run an import laid out and nothing started since, when it comes after `latest` in run order. */
function plannedRun(state: TuningState, latest: RunState): { name: string; batch: number; half: Half } | null {
  const id = state.planned === null ? null : parseRunName(state.planned);
  if (id?.kind !== 'batch' || id.batch !== latest.batch || state.runs.has(state.planned!)) return null;
  const later = BATCH_HALF_ORDER[id.half] > BATCH_HALF_ORDER[latest.half!] || (id.half === latest.half && id.number > latest.number);
  return later ? { name: state.planned!, batch: id.batch, half: id.half } : null;
}

export function nextRunNumber(state: TuningState, batch: number, half: Half): number {
  return Math.max(0, ...halfRuns(state, batch, half).map((r) => r.number)) + 1;
}

export function planFor(input: NextInput) {
  const config = input.config!;
  return planBatch({
    state: input.state,
    selection: input.selection,
    complexity: input.complexity,
    settings: config,
  });
}

function notesFor(input: NextInput): string[] {
  const notes: string[] = [];
  const { state, config } = input;
  if (state.dataset && state.selection && state.selection.selected < state.dataset.cases) {
    const left = state.dataset.cases - state.selection.selected;
    notes.push(`limit ${state.selection.selected} of ${state.dataset.cases} cases: ${left} are never tuned against`);
  }
  if (config) {
    const { maxCostUsd, maxTokens } = config.budget;
    if (maxCostUsd !== null && state.usage.costUsd >= 0.8 * maxCostUsd) {
      const spent = state.usage.costUsd >= maxCostUsd ? 'spent' : 'nearly spent';
      notes.push(`budget ${spent}: $${state.usage.costUsd.toFixed(2)} of $${maxCostUsd.toFixed(2)}`);
    }
    if (maxTokens !== null && state.usage.tokens >= 0.8 * maxTokens) {
      const spent = state.usage.tokens >= maxTokens ? 'spent' : 'nearly spent';
      notes.push(`token budget ${spent}: ${state.usage.tokens} of ${maxTokens} tokens`);
    }
  }
  // Once a run is graded there is something to explain: from then on, until it is written.
  if (input.readmePlaceholder && [...state.runs.values()].some((r) => r.grade !== null)) {
    notes.push(`${readmePath(input.dir)} still has the placeholder in its hand-written part: write what is tuned and why, and the open problems (the next step commits it)`);
  }
  // An edit its half closed on (made between batches) is settled unconfirmed at once: say so until a run starts with it.
  const lastStart = Math.max(-1, ...[...state.runs.values()].map((r) => r.startIndex));
  for (const e of state.edits) {
    if (!e.untried || e.status !== 'unconfirmed' || e.index < lastStart) continue;
    const oid = e.oid.slice(0, 7);
    notes.push(`edit ${oid} came after ${closedHalf(state, e.batch, e.half) ?? `${e.run}'s half closed`}: no run of batch ${e.batch}'s ${e.half === 'mem' ? 'with-memory' : 'no-memory'} half will try it, so it is unconfirmed; the next grade reverts it unless kept (git tune grade --keep ${oid} --why "…"), and the final check does not start while it stands (undo it now: git tune revert ${oid})`);
  }
  // A held-out set without its baseline: the final check could not tell overfitting (docs/held-out.md).
  const finalGraded = state.final.some((r) => r.grade !== null);
  if (state.heldOut && !finalGraded && (state.baseline === null || state.baseline.heldOutRev !== state.heldOut.rev)) {
    notes.push(`the held-out set (${state.heldOut.cases} cases) has ${state.baseline ? 'changed since its baseline' : 'no baseline yet'}: without one the final check cannot compare it (git tune baseline)`);
  }
  for (const r of state.rewritten.slice(1)) notes.push(describeRewritten(r));
  if (state.warnings.length > 0) notes.push(`history has ${state.warnings.length} step(s) that did not fit: git tune status`);
  return notes;
}

type Draft = Omit<NextStep, 'notes' | 'batch' | 'half' | 'run'> & Partial<Pick<NextStep, 'batch' | 'half' | 'run'>>;

export function decideNext(input: NextInput): NextStep {
  const draft = decide(input);
  return { batch: null, half: null, run: null, ...draft, notes: notesFor(input) };
}

function where(run: RunState): Pick<NextStep, 'batch' | 'half' | 'run'> {
  return { batch: run.half === null ? null : run.batch, half: run.half, run: run.name };
}

function voidStep(run: RunState, config: Config, rerun: string): Draft {
  const c = run.concurrency;
  if (c <= VOID_FLOOR) {
    return {
      kind: 'void-floor',
      message: `${run.name} was VOID at concurrency ${c} (${run.void ?? 'graded VOID'}): this machine cannot run the batch. Stop here, or move to a bigger machine.`,
      command: null,
      ...where(run),
    };
  }
  const lower = Math.max(VOID_FLOOR, Math.floor(c / 2));
  const command = config.concurrency > lower
    ? `git tune config set concurrency ${lower} && ${rerun}`
    : `${rerun} --concurrency ${lower}`;
  return {
    kind: 'void-rerun',
    message: `${run.name} was VOID at concurrency ${c} (${run.void ?? 'graded VOID'}): run the same cases again at concurrency ${lower}`,
    command,
    ...where(run),
  };
}

function decide(input: NextInput): Draft {
  const { state, config, dir } = input;
  // A rewritten step comes first: every decision below would build on a history that lost it.
  if (state.rewritten.length > 0) return repairStep(state);
  if (!state.dataset) {
    return { kind: 'dataset', message: 'import the cases (JSON, JSONL or YAML)', command: 'git tune dataset import <file>' };
  }
  const missing = config ? missingConfig(config) : 'config';
  if (!config || missing) {
    const command = missing === 'prose'
      ? `git tune config set prose '["agents/**/*.md"]'`
      : `git tune config set runner.command '["node", "agent.js"]'`;
    const what = missing === 'config'
      ? `${configPath(dir)} is missing on the branch: write it again`
      : `set \`${missing}\` in ${configPath(dir)} (${missing === 'prose' ? 'the globs of the prose you tune' : 'the command that runs your agent once per case'})`;
    return { kind: 'config', message: what, command };
  }
  if (!state.selection || state.selection.selected === 0 || input.selection.length === 0) {
    return { kind: 'select', message: 'order the cases into the selection', command: 'git tune select' };
  }
  if (state.batches.length === 0) {
    return { kind: 'batch', message: 'plan batch 1', command: 'git tune batch', batch: 1 };
  }
  const finalRun = state.final[state.final.length - 1];
  if (finalRun) return decideFinal(finalRun, config);

  const batch = currentBatch(state)!;
  const latest = latestBatchRun(state);
  if (!latest || latest.batch < batch.plan.batch) {
    const name = runName(batch.plan.batch, 'nomem', 1);
    return {
      kind: 'run',
      message: `run batch ${batch.plan.batch} without memory (${batch.plan.new.length} new + ${batch.plan.recheck.length} recheck cases)`,
      command: 'git tune run', batch: batch.plan.batch, half: 'nomem', run: name,
    };
  }
  const planned = plannedRun(state, latest);
  if (planned) {
    return {
      kind: 'run', message: `run ${planned.name}: its cases are laid out, it has not run yet`,
      command: 'git tune run', batch: planned.batch, half: planned.half, run: planned.name,
    };
  }
  const run = latest;
  if (!run.finished) return resumeStep(run, config, 'git tune run');
  if (!run.grade && run.void === null) {
    return {
      kind: 'grade',
      message: `grade ${run.name}: git tune grade --draft, finish ${runFilePath(dir, run.name, RUN_FILES.findings)}, then record it`,
      command: 'git tune grade', ...where(run),
    };
  }
  if (isVoidRun(run)) return voidStep(run, config, 'git tune run');

  const half = run.half!;
  const pending = state.edits.filter((e) => e.batch === run.batch && e.half === half && e.status === 'pending');
  const nextNumber = nextRunNumber(state, run.batch, half);
  const confirm: Draft = {
    kind: 'confirm',
    message: `run the same cases again to confirm the pending edit${pending.length === 1 ? '' : 's'} (${pending.map((e) => e.oid.slice(0, 7)).join(', ')})`,
    command: 'git tune run', batch: run.batch, half, run: runName(run.batch, half, nextNumber),
  };
  const grade = run.grade!;
  if (grade.verdict === 'PASSED') {
    const breaks = passedRuleBreaks({ state, run, maxRuns: config.maxRuns, maxRetries: config.maxRetries });
    if (breaks.length > 0) {
      // A missing review refuses first, as the folder method's next.mjs does: re-running cannot add it.
      if (pending.length > 0 && breaks.some((b) => b.rule === 'pending') && !breaks.some((b) => b.rule === 'review')) return confirm;
      return {
        kind: 'refused',
        message: `PASSED of ${run.name} is refused: ${breaks.map((b) => b.message).join('; ')}`,
        command: `${breaks.map((b) => b.fix).join(' && ')}${breaks.some((b) => b.rule === 'review') ? '' : ` && git tune grade --verdict PASSED --run ${run.name}`}`,
        ...where(run),
      };
    }
    // No verdict on prose no run has seen: the half passes on a run of the prose the branch holds (src/core/basis.ts).
    const basis = basisRun(state, run);
    if (!basis) return rerunStep(state, run, pending.length > 0, nextNumber);
    if (half === 'nomem') {
      if (state.candidate?.run !== basis.name) {
        const from = basis === run ? '' : ` (the run of the prose the branch holds: ${reverts(state, run)} reverted after ${run.name})`;
        return { kind: 'candidate', message: `build the candidate memory: last good memory + what ${basis.name}'s cases wrote${from}`, command: 'git tune memory candidate', ...where(basis) };
      }
      return {
        kind: 'mem-run', message: `run batch ${run.batch} with the candidate memory`,
        command: 'git tune run', batch: run.batch, half: 'mem', run: runName(run.batch, 'mem', 1),
      };
    }
    if (!state.checkpoints.includes(run.batch)) {
      return { kind: 'checkpoint', message: `make the candidate the last good memory (batch ${run.batch} passed with memory)`, command: 'git tune memory checkpoint', ...where(run) };
    }
    const plan = planFor(input);
    if (plan) {
      return { kind: 'batch', message: `plan batch ${plan.batch}: ${plan.why}`, command: 'git tune batch', batch: plan.batch };
    }
    const standing = unconfirmedEdits(state);
    if (standing.length > 0) {
      const ids = standing.map((e) => e.oid.slice(0, 7));
      return {
        kind: 'final',
        message: `every selected case is used and no difficult case is open, but edit${ids.length === 1 ? '' : 's'} ${ids.join(', ')} ${ids.length === 1 ? 'is' : 'are'} unconfirmed and no run will confirm ${ids.length === 1 ? 'it' : 'them'}: revert ${ids.length === 1 ? 'it' : 'them'}, then run the final check (or keep one on purpose: git tune grade --keep <commit> --why "…")`,
        command: [...ids.map((id) => `git tune revert ${id}`), 'git tune final'].join(' && '),
        run: FINAL_RUN,
      };
    }
    return { kind: 'final', message: 'every selected case is used and no difficult case is open: run the final check', command: 'git tune final', run: FINAL_RUN };
  }

  const counted = countedRuns(halfRuns(state, run.batch, half));
  if (counted >= config.maxRuns) {
    // After the reverts the branch holds the prose of this run's grade: the half passes on a run of it, or runs it first.
    const basis = basisRun(state, run);
    if (!basis) return rerunStep(state, run, pending.length > 0, nextNumber);
    const onList = new Set(viewDifficult(state, config.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id));
    const adds = basis.grade!.wrong.filter((id) => !onList.has(id)).map((id) => `git tune difficult add ${id} --why wrong`);
    const on = basis === run ? '' : `; it passes on ${basis.name}, the run of the prose the branch holds (${reverts(state, run)} reverted after ${run.name}), so what is wrong there goes on the list`;
    return {
      kind: 'stop-batch',
      message: `${run.name} is the half's run ${counted} of ${config.maxRuns} and did not pass: revert unconfirmed and pending edits, list what is still wrong as difficult, write PASSED${on}`,
      command: ['git tune revert', ...adds, `git tune grade --verdict PASSED --run ${run.name}`].join(' && '),
      ...where(run),
    };
  }
  if (pending.length > 0) return confirm;
  const scope = half === 'mem' ? 'memory-policy files' : 'prose';
  return {
    kind: 'edit',
    message: `${run.name} is ${grade.verdict}: edit the ${scope} and write ${runFilePath(dir, run.name, RUN_FILES.changes)}, then record the edit`,
    command: 'git tune edit', ...where(run),
  };
}

/** `a1b2c3d, e4f5a6b`: the edits of `run`'s half reverted after it tried them. */
function reverts(state: TuningState, run: RunState): string {
  const ids = revertedAfter(state, run).map((e) => e.oid.slice(0, 7));
  return ids.length === 0 ? 'its prose' : `edit${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
}

/**
 * The half would end (PASSED, or stopped at `maxRuns`) but no run of it has
 * seen the prose the branch holds: a grade reverted what its run tried, and
 * the prose left is one no run ran (docs/method.md#noise). The same cases run
 * again on it first (pending edits reverted, as the half's end would), even
 * past `maxRuns`: that run is the one the half can pass on.
 */
function rerunStep(state: TuningState, run: RunState, pending: boolean, number: number): Draft {
  return {
    kind: 'rerun',
    message: `${run.name} is ${run.grade!.verdict}, but ${reverts(state, run)} ${revertedAfter(state, run).length === 1 ? 'was' : 'were'} reverted after it and no run of the half has seen the prose the branch holds: ${pending ? 'revert the pending edits and ' : ''}run the same cases on it before the half can pass`,
    command: pending ? 'git tune revert && git tune run' : 'git tune run',
    batch: run.batch, half: run.half, run: runName(run.batch, run.half!, number),
  };
}

/**
 * A step was rewritten (an amend, a reword, a squash: src/core/rewritten.ts):
 * go back to the last good step. The command here needs no reflog; where
 * the original commits are still in it, the app puts the command that
 * restores them first (src/app/rewritten.ts).
 */
export function repairStep(state: TuningState): Draft {
  const first = state.rewritten[0]!;
  const n = state.commits - first.index;
  return {
    kind: 'repair',
    message: `${describeRewritten(first)}${state.rewritten.length > 1 ? ` (and ${state.rewritten.length - 1} more)` : ''}: no step goes on from a rewritten one; undo the ${n} commit${n === 1 ? '' : 's'} from it on (back to the last good step), or put the original step back from the reflog`,
    command: undoCommand(state.commits, first),
  };
}

/**
 * Edits that stand unconfirmed: neither reverted nor kept. A grade reverts
 * the ones it finds out, so these are edits made after the last batch's
 * last grade (or in a history written before grades reverted); the final
 * check does not start while any stands, so at `done` none is left.
 */
export function unconfirmedEdits(state: TuningState): EditState[] {
  return state.edits.filter((e) => e.status === 'unconfirmed');
}

/** A started run without its run commit: crashed, stopped for the budget, or its sandbox went down. */
function resumeStep(run: RunState, config: Config, command: string): Draft {
  const base = { kind: 'resume' as const, ...where(run) };
  if (stoppedForBudget(run.stopped)) {
    const { maxCostUsd, maxTokens } = config.budget;
    const raise = maxCostUsd !== null
      ? `git tune config set budget.maxCostUsd ${Number((maxCostUsd * 2).toFixed(2))}`
      : `git tune config set budget.maxTokens ${(maxTokens ?? 0) * 2}`;
    return { ...base, message: `${run.name} stopped: ${run.stopped}. Raise the budget, then carry on with the cases that have no result`, command: `${raise} && ${command}` };
  }
  if (run.stopped) {
    return { ...base, message: `${run.name} stopped: ${run.stopped}. Fix the runner's sandbox, then carry on with the cases that have no result`, command };
  }
  return { ...base, message: `${run.name} started but did not finish: carry on with the cases that have no result`, command };
}

function decideFinal(run: RunState, config: Config): Draft {
  if (!run.finished) return resumeStep(run, config, 'git tune final');
  if (!run.grade && run.void === null) return { kind: 'grade', message: 'grade the final check', command: 'git tune grade', run: run.name };
  if (isVoidRun(run)) return voidStep(run, config, 'git tune final');
  if (run.grade!.verdict === 'VERIFIED') return { kind: 'done', message: 'the final check is VERIFIED: the tuning is done', command: null, run: run.name };
  return { kind: 'final-failed', message: `the final check is ${run.grade!.verdict}: see its findings; the tool does not re-open the tuning`, command: null, run: run.name };
}
