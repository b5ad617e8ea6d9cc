import { promises as fs } from 'node:fs';
import path from 'node:path';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import type { DifficultReason } from '../contracts/files.js';
import { shellQuote } from '../core/argv.js';
import { viewDifficult } from '../core/difficult.js';
import { mergeProposals } from '../core/findings.js';
import { basisRun, passingNomemRun, revertedAfter } from '../core/basis.js';
import type { RunState } from '../core/fold.js';
import { caseOnlyCases, EDITOR_IDLE_WHY, halfEndsSinceLastEdit, idleHalvesBefore, passedRefusalFix, shortCases, type ShortCase } from '../core/half-end.js';
import { VOID_FLOOR, type NextStep } from '../core/next.js';
import { passedRuleBreaks, type RuleBreak } from '../core/rules.js';
import { EXIT, TuneError, type ExitCode } from '../errors.js';
import { interruptedStop } from '../core/run-stop.js';
import { runSummary } from '../core/run-summary.js';
import type { Env } from '../git/identity.js';
import { diskFullError } from '../git/disk-full.js';
import type { CaseEvent } from '../run/progress.js';
import { planNextBatch, writePlan } from './batch.js';
import type { WriteContext } from './commit.js';
import { setConfig } from './config-set.js';
import { recordDifficult } from './difficult.js';
import { changesPath, parseAims, recordEdit } from './edit.js';
import { editableGlobs, runEditor, undoOutsideHalf } from './editor.js';
import { findingsPath, judgePath, recordGrade, writeDraft, type GradeOutcome } from './grade.js';
import { buildCandidate, makeCheckpoint, type MemoryOutcome } from './memory.js';
import { proseDigest, uncommittedProse } from './prose.js';
import { readRunResults } from './results.js';
import { revertEdits } from './revert.js';
import { runDue } from './run.js';
import { computeSelection, writeSelection } from './select.js';
import { loadTuning, readText, type Tuning } from './tuning.js';

/**
 * One step of `git tune auto`, done through the use cases the commands call
 * (never through the CLI's output), with a typed outcome. Each step is one or
 * more commits, so a killed auto carries on from history. The narration says
 * each step as the command a person would type (`$ git tune run`), and what
 * it did under it.
 */
export type StepOutcome =
  /** The step was done (one commit or more). */
  | { kind: 'done' }
  /** A person must act: why, and the command to run after. */
  | { kind: 'stuck'; reason: string; command: string | null; code?: 'editor-idle' }
  /** The run ended VOID: the next step re-runs it. */
  | { kind: 'void'; run: string; reason: string }
  | { kind: 'sandbox-down'; run: string; reason: string }
  | { kind: 'budget'; reason: string }
  /** A run stopped launching cases (Ctrl-C, a stop request, the ceiling of this auto). */
  | { kind: 'interrupted'; run: string }
  | { kind: 'error'; message: string; exitCode: ExitCode; hint: string | null };

export interface StepContext {
  env: Env;
  clock: () => Date;
  /** Auto's own narration: the command each part of the step stands for. */
  say: (line: string) => void;
  /** What a part of the step did, shown under its command. */
  detail: (text: string) => void;
  /** Set by a signal handler: no new case starts. */
  interrupted: { value: boolean };
  /** Asked before each case starts (a stop request, the ceiling). */
  stop: () => boolean;
  onCase?: (event: CaseEvent) => void;
}

const write = (ctx: StepContext): WriteContext => ({ env: ctx.env, now: ctx.clock() });
const reload = (tuning: Tuning) => loadTuning(tuning.repo, tuning.name);
const command = (ctx: StepContext, args: string[]) => ctx.say(`$ git tune ${args.map(shellQuote).join(' ')}`);

/** Does `step` (one `next` said) and says how it went; a TuneError becomes an outcome, anything else is a bug and throws. */
export async function performStep(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  try {
    return await dispatch(tuning, step, ctx);
  } catch (err) {
    const full = diskFullError(err, tuning.repo.dir);
    if (full) return { kind: 'error', message: full.message, exitCode: full.exitCode, hint: full.hint ?? null };
    if (!(err instanceof TuneError)) throw err;
    if (err.code === 'budget-spent') return { kind: 'budget', reason: err.message };
    return { kind: 'error', message: err.message, exitCode: err.exitCode, hint: err.hint ?? null };
  }
}

async function dispatch(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  switch (step.kind) {
    case 'select': {
      command(ctx, ['select']);
      const selection = await computeSelection(tuning);
      await writeSelection(tuning, selection, write(ctx));
      ctx.detail(`selection: ${selection.limit} of ${selection.total} cases`);
      return { kind: 'done' };
    }
    case 'batch': {
      command(ctx, ['batch']);
      const plan = planNextBatch(tuning);
      if (!plan) return { kind: 'error', message: `no batch to plan: ${step.message}`, exitCode: EXIT.history, hint: null };
      await writePlan(tuning, plan, write(ctx));
      ctx.detail(`batch ${plan.batch}: ${plan.new.length} ${plan.kind} + ${plan.recheck.length} recheck\n  why: ${plan.why}`);
      return { kind: 'done' };
    }
    case 'run': case 'resume': case 'confirm': case 'mem-run':
      return runStep(tuning, isFinalStep(tuning, step), undefined, ctx);
    case 'rerun':
      // No run of the half has seen the prose the branch holds: its pending edits go (as at the half's end), then it runs.
      if (step.command?.startsWith('git tune revert')) tuning = await revert(tuning, ctx);
      return runStep(tuning, false, undefined, ctx);
    case 'final':
      return finalStep(tuning, ctx);
    case 'void-rerun':
      return voidRerun(tuning, step, ctx);
    case 'grade':
      return gradeStep(tuning, step, ctx);
    case 'candidate':
      command(ctx, ['memory', 'candidate']);
      ctx.detail(memoryLine(await buildCandidate(tuning, write(ctx))));
      return { kind: 'done' };
    case 'checkpoint':
      command(ctx, ['memory', 'checkpoint']);
      ctx.detail(memoryLine(await makeCheckpoint(tuning, write(ctx))));
      return { kind: 'done' };
    case 'edit':
      return editStep(tuning, step, ctx);
    case 'stop-batch':
      return endHalf(tuning, step.run!, `${step.run} is the half's run ${tuning.config!.maxRuns} of ${tuning.config!.maxRuns} and did not pass`, ctx);
    case 'refused':
      return refusedStep(tuning, step, ctx);
    case 'dataset': case 'config': case 'repair':
      return { kind: 'stuck', reason: `a person must do this step: ${step.message}`, command: step.command };
    case 'done': case 'final-failed': case 'void-floor':
      return { kind: 'error', message: `${step.kind} is not a step to do`, exitCode: EXIT.unexpected, hint: null };
  }
}

function memoryLine(outcome: MemoryOutcome): string {
  const { diff } = outcome;
  const head = outcome.step === 'candidate' ? `candidate memory from ${outcome.run}` : `checkpoint: batch ${outcome.batch}'s candidate is the last good memory`;
  return `${head}: ${diff.files} file${diff.files === 1 ? '' : 's'} (${diff.added.length} added, ${diff.changed.length} changed, ${diff.deleted.length} deleted)`;
}

/** A step of the final check (its first run, a re-run, a resume, its grade): the run it names has no half. */
export const isFinalStep = (tuning: Tuning, step: NextStep) =>
  step.kind === 'final' || (step.run !== null && tuning.state.runs.get(step.run)?.half === null);

/**
 * The final check. At `done` no edit is unconfirmed: one that no run will
 * confirm (made after the last batch's last grade) is reverted first, as the
 * command `next` gives does.
 */
async function finalStep(tuning: Tuning, ctx: StepContext): Promise<StepOutcome> {
  for (const edit of tuning.state.edits.filter((e) => e.status === 'unconfirmed')) {
    command(ctx, ['revert', edit.oid.slice(0, 7)]);
    const outcome = await revertEdits(tuning, edit.oid, write(ctx));
    ctx.detail(`reverted ${edit.oid.slice(0, 7)} with ${outcome.commits[0]!.slice(0, 7)}: ${outcome.reverted[0]?.files.join(', ') || 'no prose file'}`);
    tuning = await reload(tuning);
  }
  return runStep(tuning, true, undefined, ctx);
}

async function runStep(tuning: Tuning, final: boolean, concurrency: number | undefined, ctx: StepContext): Promise<StepOutcome> {
  command(ctx, [final ? 'final' : 'run', ...(concurrency ? ['--concurrency', String(concurrency)] : [])]);
  const outcome = await runDue(tuning, { final, concurrency }, {
    env: ctx.env, now: ctx.clock(), clock: ctx.clock, err: ctx.detail, isTTY: false,
    interrupted: ctx.interrupted, stop: ctx.stop, onCase: ctx.onCase,
  });
  ctx.detail(runSummary(outcome));
  if (outcome.finished) return outcome.void ? { kind: 'void', run: outcome.run, reason: outcome.void } : { kind: 'done' };
  const stopped = outcome.stopped ?? interruptedStop();
  switch (stopped.kind) {
    case 'sandbox': return { kind: 'sandbox-down', run: outcome.run, reason: `${outcome.run} did not finish: ${stopped.text}` };
    case 'budget': return { kind: 'budget', reason: `${outcome.run} did not finish: ${stopped.text}` };
    case 'interrupted': return { kind: 'interrupted', run: outcome.run };
  }
}

/** A VOID run again at half its concurrency (at least VOID_FLOOR), the configured one lowered when it is higher (docs/method.md#next). */
async function voidRerun(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  const run = tuning.state.runs.get(step.run!)!;
  const lower = Math.max(VOID_FLOOR, Math.floor(run.concurrency / 2));
  const final = run.half === null;
  if (tuning.config!.concurrency > lower) {
    command(ctx, ['config', 'set', 'concurrency', String(lower)]);
    await setConfig(tuning, 'concurrency', lower, write(ctx));
    return runStep(await reload(tuning), final, undefined, ctx);
  }
  return runStep(tuning, final, lower, ctx);
}

async function judgeOf(tuning: Tuning, run: string, fromWorktree: boolean): Promise<JudgeFile> {
  const text = fromWorktree
    ? await fs.readFile(path.join(tuning.repo.dir, judgePath(tuning, run)), 'utf8').catch(() => null)
    : await readText(tuning.repo, tuning.tip, judgePath(tuning, run));
  return text ? judgeFileSchema.parse(JSON.parse(text)) : {};
}

/** Cases on the difficult list and not fixed. */
function notFixed(tuning: Tuning): Set<string> {
  return new Set(viewDifficult(tuning.state, tuning.config!.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id));
}

const CASE_ONLY_NOTE = 'the judge says the fault is in the case (caseOnly): another edit would learn nothing';

async function addDifficult(tuning: Tuning, id: string, reason: DifficultReason, note: string | undefined, ctx: StepContext): Promise<Tuning> {
  command(ctx, ['difficult', 'add', id, '--why', reason, ...(note ? ['--note', note] : [])]);
  await recordDifficult(tuning, { op: 'add', id, reason }, note, write(ctx));
  ctx.detail(`added ${id} to the difficult list (${reason})`);
  return reload(tuning);
}

function gradeLine(outcome: GradeOutcome): string {
  return [
    // Edits settle at grading: what the run did not confirm is reverted before the grade commit.
    ...outcome.reverted.map((r) => `reverted ${r.edit.slice(0, 7)} with ${r.commit.slice(0, 7)} (${r.why}): ${r.files.join(', ') || 'no prose file'}`),
    ...outcome.kept.map((k) => `kept ${k.edit.slice(0, 7)} (unconfirmed) on purpose: ${k.why} (${k.by})`),
    `${outcome.run}: ${outcome.verdict}${outcome.wrong.length ? ` (wrong: ${outcome.wrong.join(', ')})` : ''}`,
    ...(outcome.passesOn ? [outcome.passesOn.run
      ? `  the half passes on ${outcome.passesOn.run}, the run of the prose the branch holds (wrong there: ${outcome.passesOn.wrong.join(', ') || 'none'})`
      : '  no run of the half has seen the prose the branch holds: it runs before the half passes'] : []),
    ...outcome.difficult.map((d) => `  difficult ${d.op} ${d.id}${d.op === 'add' ? ` (${d.reason})` : ''}`),
  ].join('\n');
}

async function record(tuning: Tuning, run: string | undefined, verdict: string | undefined, ctx: StepContext): Promise<GradeOutcome> {
  command(ctx, ['grade', ...(verdict ? ['--verdict', verdict] : []), ...(run && verdict ? ['--run', run] : [])]);
  const outcome = await recordGrade(tuning, run, { verdict, ctx: write(ctx) });
  ctx.detail(gradeLine(outcome));
  return outcome;
}

/**
 * The grade step as a grader would do it: the draft (with the judge's
 * verdicts) recorded as drafted; a wrong case whose judge says `caseOnly` (the
 * fault is in the case) is put on the difficult list first, so the draft
 * counts it there. A PASSED the rules refuse is resolved where the tool
 * knows how (a revert, a difficult entry), or a person is asked.
 */
async function gradeStep(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  if (isFinalStep(tuning, step)) {
    await record(tuning, undefined, undefined, ctx);
    return { kind: 'done' };
  }
  command(ctx, ['grade', '--draft', '--force']);
  let drafted = await writeDraft(tuning, undefined, { env: ctx.env, force: true });
  ctx.detail(`wrote ${drafted.file}: proposed verdict ${drafted.draft.verdict}`);
  const wrong = [...drafted.draft.verdicts].filter(([, v]) => v === 'wrong').map(([id]) => id);
  const caseOnly = caseOnlyCases(wrong, await judgeOf(tuning, drafted.run.name, true), notFixed(tuning));
  for (const id of caseOnly) tuning = await addDifficult(tuning, id, 'wrong', CASE_ONLY_NOTE, ctx);
  if (caseOnly.length > 0) {
    // Drafted again with them on the list (the judge's verdicts are kept in judge.json, not asked again).
    await fs.rm(path.join(tuning.repo.dir, drafted.file), { force: true });
    command(ctx, ['grade', '--draft']);
    drafted = await writeDraft(tuning, undefined, { env: ctx.env, force: false });
    ctx.detail(`wrote ${drafted.file}: proposed verdict ${drafted.draft.verdict}`);
  }
  try {
    await record(tuning, undefined, undefined, ctx);
  } catch (err) {
    if (!(err instanceof TuneError) || err.code !== 'passed-refused') throw err;
    ctx.detail(`refused: ${err.message}${err.details?.length ? `\n  ${err.details.join('\n  ')}` : ''}`);
    const run = tuning.state.runs.get(drafted.run.name)!;
    const draftedWrong = [...drafted.draft.verdicts].filter(([, v]) => v === 'wrong').map(([id]) => id);
    return resolveRefusal(tuning, run, passedRuleBreaks({
      state: tuning.state, run, maxRuns: tuning.config!.maxRuns, maxRetries: tuning.config!.maxRetries, review: true, wrong: draftedWrong,
    }), draftedWrong, ctx);
  }
  return { kind: 'done' };
}

/**
 * A PASSED the rules refuse (docs/method.md#grading), made right where the fix is the
 * tool's to make (src/core/half-end.ts): unconfirmed and pending edits
 * reverted, wrong cases put on the difficult list; then PASSED recorded.
 * Any other rule needs a person.
 */
async function resolveRefusal(tuning: Tuning, run: RunState, breaks: readonly RuleBreak[], wrong: readonly string[], ctx: StepContext): Promise<StepOutcome> {
  const fix = passedRefusalFix(run, breaks);
  if (fix.kind === 'person') return { kind: 'stuck', reason: fix.reason, command: fix.command };
  if (fix.revert) tuning = await revert(tuning, ctx);
  const listed = notFixed(tuning);
  // What the half leaves wrong: rule (c) names its basis's cases when what this run tried was reverted (src/core/basis.ts).
  // Read against the prose the branch holds now (as the grade reads it), not the run's own: a run not yet graded has
  // none recorded, and an edit reverted by hand (native `git revert`) or by the revert above moved the basis.
  const config = tuning.config!;
  const held = run.half === null ? undefined : await proseDigest(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  const named = [
    ...(breaks.find((b) => b.rule === 'wrong-not-difficult')?.ids ?? []),
    ...(held === undefined ? [] : passedRuleBreaks({ state: tuning.state, run, maxRuns: config.maxRuns, maxRetries: config.maxRetries, review: true, wrong, prose: held })
      .find((b) => b.rule === 'wrong-not-difficult')?.ids ?? []),
  ];
  for (const id of new Set([...wrong, ...named])) if (!listed.has(id)) tuning = await addDifficult(tuning, id, 'wrong', `still wrong when ${run.name} passed${wrong.includes(id) ? '' : ' (wrong in the run of the prose the branch holds)'}`, ctx);
  await record(tuning, run.name, 'PASSED', ctx);
  return { kind: 'done' };
}

async function refusedStep(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  const run = tuning.state.runs.get(step.run!)!;
  const breaks = passedRuleBreaks({ state: tuning.state, run, maxRuns: tuning.config!.maxRuns, maxRetries: tuning.config!.maxRetries });
  return resolveRefusal(tuning, run, breaks, run.grade?.wrong ?? [], ctx);
}

async function revert(tuning: Tuning, ctx: StepContext): Promise<Tuning> {
  command(ctx, ['revert']);
  const outcome = await revertEdits(tuning, undefined, write(ctx));
  if (outcome.reverted.length === 0) ctx.detail('nothing to revert: no unconfirmed or pending edit in this half');
  outcome.reverted.forEach((r, i) => ctx.detail(`reverted ${r.edit.oid.slice(0, 7)} with ${outcome.commits[i]!.slice(0, 7)} (${r.edit.status === 'pending' ? 'pending' : `unconfirmed by ${r.edit.settledBy}`}): ${r.files.join(', ') || 'no prose file'}`));
  for (const k of outcome.kept) ctx.detail(`kept ${k.edit.oid.slice(0, 7)}: ${k.why}`);
  return reload(tuning);
}

/**
 * The edit step (docs/contracts.md#editor): case-only cases to the difficult list, then
 * the editor for whatever the findings show short (wrong cases, the judge's
 * proposals, cost left to cut, memory saved twice or saving too little). An
 * editor that changes nothing has nothing to offer: the half ends as at
 * `maxRuns`. Without an editor, a person edits.
 */
async function editStep(tuning: Tuning, step: NextStep, ctx: StepContext): Promise<StepOutcome> {
  const config = tuning.config!;
  let run = tuning.state.runs.get(step.run!)!;
  const judge = await judgeOf(tuning, run.name, false);
  for (const id of caseOnlyCases(run.grade!.wrong, judge, notFixed(tuning))) tuning = await addDifficult(tuning, id, 'wrong', CASE_ONLY_NOTE, ctx);
  run = tuning.state.runs.get(run.name)!;
  const changesFile = changesPath(tuning, run.name);
  if (run.half === 'mem' && config.memoryPolicy.length === 0) {
    // Nothing the half may change: said as it is, not as an editor that "changed nothing" (it is not asked).
    return endHalf(tuning, run.name, `no memory-policy files are configured (memoryPolicy is empty), so a with-memory half has nothing to edit after ${run.name} (${run.grade!.verdict}); to name one: git tune config set memoryPolicy agents/memory-policy.md`, ctx);
  }
  if (!config.editor) {
    return {
      kind: 'stuck',
      reason: `${run.name} is ${run.grade!.verdict} and no editor is configured: a person must edit the ${run.half === 'mem' ? 'memory-policy files' : 'prose'} and write ${changesFile}, then record the edit`,
      command: 'git tune edit',
    };
  }

  // An editor that finished before a kill left prose and changes.md behind: record them, do not edit twice.
  const changes = await fs.readFile(path.join(tuning.repo.dir, changesFile), 'utf8').catch(() => null);
  const editorDone = changes !== null && changes !== (await readText(tuning.repo, tuning.tip, changesFile))
    && (await uncommittedProse(tuning.repo, tuning.tip, editableGlobs(tuning, run))).length > 0;
  let undone: string[];
  let changed: string[];
  let asked: { proposals: number; log: string; said: string } | null = null;
  if (editorDone) {
    undone = await undoOutsideHalf(tuning, run);
    changed = await uncommittedProse(tuning.repo, tuning.tip, editableGlobs(tuning, run));
  } else {
    const proposals = mergeProposals(judge, run.cases).length;
    ctx.say(`editor: ${proposals} proposal${proposals === 1 ? '' : 's'} for ${run.name} (${run.grade!.verdict}${run.grade!.wrong.length ? `; wrong: ${run.grade!.wrong.join(', ')}` : ''})`);
    const outcome = await runEditor(tuning, run, judge, ctx.env);
    ({ changed, undone } = outcome);
    asked = outcome;
  }
  if (undone.length > 0) ctx.detail(`warning: the editor changed files it may not (${run.half === 'mem' ? 'a with-memory half edits memory-policy files only' : 'an edit changes prose only'}); put back: ${undone.join(', ')}`);
  if (changed.length === 0) {
    // A changes.md for no change says nothing the history needs: put back as it was.
    const committed = await readText(tuning.repo, tuning.tip, changesFile);
    if (committed === null) await fs.rm(path.join(tuning.repo.dir, changesFile), { force: true });
    else await fs.writeFile(path.join(tuning.repo.dir, changesFile), committed);
    const idle = asked ? await editorIdle(tuning, run, asked) : null;
    if (idle) return idle;
    return endHalf(tuning, run.name, `${EDITOR_IDLE_WHY} ${run.name} (${run.grade!.verdict})${undone.length ? ` but files it may not (${undone.join(', ')}), put back` : ''}`, ctx);
  }
  await noteChanges(tuning, run, undone);
  command(ctx, ['edit']);
  const outcome = await recordEdit(await reload(tuning), [], write(ctx));
  for (const w of outcome.warnings) ctx.detail(`warning: this edit ${w}: it tunes to the test`);
  ctx.detail(`edit of ${outcome.run} recorded (${outcome.commit.slice(0, 7)}): ${outcome.files.join(', ')}; aims ${outcome.aims.join(', ') || 'none'}`);
  return { kind: 'done' };
}

/**
 * An editor that changed nothing `maxEditorIdle` halves in a row (this one
 * included) has nothing to offer: auto stops for a person (`editor-idle`)
 * instead of ending half after half and listing their cases difficult one
 * by one. What it was given, what it answered and where its log is are said.
 */
async function editorIdle(tuning: Tuning, run: RunState, asked: { proposals: number; log: string; said: string }): Promise<StepOutcome | null> {
  const config = tuning.config!;
  const ended = new Set<string>();
  for (const r of halfEndsSinceLastEdit(tuning.state)) {
    const findings = await readText(tuning.repo, tuning.tip, findingsPath(tuning, r.name));
    if (findings?.includes(`${HALF_END_NOTE}: ${EDITOR_IDLE_WHY} ${r.name}`)) ended.add(r.name);
  }
  const before = idleHalvesBefore(tuning.state, ended);
  if (before.length + 1 < config.maxEditorIdle) return null;
  // A half whose every short case is already on the difficult list (a recheck of a stuck case) lists nothing new
  // when it ends: that is not an editor leaving cases to be marked stuck one by one, so the half ends as before.
  const short = await shortOf(tuning, run);
  const listed = notFixed(tuning);
  if (short.length > 0 && short.every((c) => listed.has(c.id))) return null;
  const editor = config.editor!.command?.join(' ') ?? `preset ${config.editor!.preset}`;
  const halves = [...before, run.name];
  const wrong = run.grade!.wrong;
  return {
    kind: 'stuck',
    code: 'editor-idle',
    reason: `editor-idle: the editor (${editor}) changed nothing ${halves.length} halves in a row (after ${halves.join(', ')}; maxEditorIdle ${config.maxEditorIdle}). `
      + `It was given ${findingsPath(tuning, run.name)} (${run.grade!.verdict}${wrong.length ? `; wrong: ${wrong.join(', ')}` : ''}) and ${asked.proposals} proposal${asked.proposals === 1 ? '' : 's'}, `
      + `and answered with no change${asked.said ? ` ("${asked.said}")` : ''}; its log: ${path.relative(tuning.repo.dir, asked.log) || asked.log}/ (proposals.json, stdout, stderr). `
      + 'A person decides: fix the editor and run git tune auto again, or edit by hand',
    command: 'git tune edit',
  };
}

/** changes.md says what the editor did: written by it, or a line for it when it wrote none; what was put back is added. */
async function noteChanges(tuning: Tuning, run: RunState, undone: readonly string[]): Promise<void> {
  const file = path.join(tuning.repo.dir, changesPath(tuning, run.name));
  const committed = await readText(tuning.repo, tuning.tip, changesPath(tuning, run.name));
  let text = await fs.readFile(file, 'utf8').catch(() => null);
  if (text === null || !text.trim() || text === committed) {
    text = `${committed ?? '# Changes\n'}\nThe editor (${tuning.config!.editor!.command?.join(' ') ?? tuning.config!.editor!.preset}) changed the prose after ${run.name} (${run.grade!.verdict}) and wrote no changes.md.\n`;
  }
  // Without an `Aims:` line an edit aims at every wrong case, listed ones too; auto says what it asked the editor for:
  // the wrong cases not on the difficult list, or, with none, the whole run (memory saved twice, too little saving, cost).
  const fresh = committed !== null && text.startsWith(committed) ? text.slice(committed.length) : text;
  if (parseAims(fresh) === null) {
    const listed = notFixed(tuning);
    const open = run.grade!.wrong.filter((id) => !listed.has(id));
    text = `${text.trimEnd()}\n\nAims: ${(open.length > 0 ? open : run.cases).join(', ')}\n`;
  }
  if (undone.length > 0) {
    text = `${text.trimEnd()}\n\nPut back by git-tune: the editor also changed ${undone.join(', ')}, which ${run.half === 'mem' ? 'a with-memory half may not edit (memory-policy files only)' : 'is not prose of this tuning'}.\n`;
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
}

/** What is still short in a run whose half ends without passing (src/core/half-end.ts), from its results and the passing no-memory run's. */
async function shortOf(tuning: Tuning, run: RunState): Promise<ShortCase[]> {
  const { results } = await readRunResults(tuning, run.name);
  const passing = run.half === 'mem' ? passingNomemRun(tuning.state, run.batch) : null;
  return shortCases(run, results, passing ? { run: passing, results: (await readRunResults(tuning, passing.name)).results } : null);
}

/** The line a half's findings get where auto ends it (read back by `editorIdle`). */
const HALF_END_NOTE = 'The half ends here, as at maxRuns';

/**
 * The half ends without passing (docs/method.md#halves, step 5; also when the editor has
 * nothing to offer): its unconfirmed and pending edits reverted, what is
 * still short put on the difficult list, and PASSED written.
 */
async function endHalf(tuning: Tuning, runName: string, why: string, ctx: StepContext): Promise<StepOutcome> {
  ctx.say(`the half ends: ${why}`);
  tuning = await revert(tuning, ctx);
  const run = tuning.state.runs.get(runName)!;
  // The half passes on a run of the prose the branch holds (src/core/basis.ts); with none, PASSED is written and `next` runs that prose first.
  const basis = basisRun(tuning.state, run);
  const on = basis ?? run;
  const listed = notFixed(tuning);
  const short = await shortOf(tuning, on);
  for (const s of short) {
    if (!listed.has(s.id)) tuning = await addDifficult(tuning, s.id, s.reason, s.note, ctx);
  }
  if (basis !== run) {
    const ids = revertedAfter(tuning.state, run).map((e) => e.oid.slice(0, 7)).join(', ') || 'its prose';
    ctx.detail(basis
      ? `passes on ${basis.name}: the run of the prose the branch holds (${ids} reverted after ${run.name}); wrong there: ${basis.grade!.wrong.join(', ') || 'none'}`
      : `no run of the half has seen the prose the branch holds (${ids} reverted after ${run.name}): it runs before the half passes`);
  }
  // The findings say why the half ends here, and on which run.
  const file = path.join(tuning.repo.dir, findingsPath(tuning, runName));
  const text = await fs.readFile(file, 'utf8').catch(() => null);
  const note = HALF_END_NOTE;
  if (text !== null && !text.includes(note)) {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^##\s+\S/.test(l) && !l.startsWith('###'));
    const passesOn = basis === run ? []
      : basis ? [`It passes on ${basis.name}, the run of the prose the branch holds (the edits ${run.name} tried were reverted); wrong there: ${basis.grade!.wrong.join(', ') || 'none'}. The candidate memory comes from ${basis.name}.`]
        : [`No run of the half has seen the prose the branch holds (the edits ${run.name} tried were reverted): the same cases run on it before the half passes.`];
    lines.splice(at + 1, 0, '', `${note}: ${why}. Its unconfirmed and pending edits are reverted, and what is still short is on the difficult list.`, ...passesOn.flatMap((l) => ['', l]));
    await fs.writeFile(file, lines.join('\n'));
  }
  await record(tuning, runName, 'PASSED', ctx);
  return { kind: 'done' };
}
