import { promises as fs } from 'node:fs';
import path from 'node:path';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import type { CaseResult } from '../contracts/result.js';
import { stuckEntries, viewDifficult } from '../core/difficult.js';
import { draftFindings, type Draft } from '../core/findings.js';
import { passingNomemRun } from '../core/basis.js';
import { batchNumbered, gradeCandidates, isVoidRun, type RunState, type TuningState } from '../core/fold.js';
import { findingsDifficultLines, gradeRun, keepOptionsRefusal, parseVerdictOption, planGrade, type GradeEvidence } from '../core/grade.js';
import type { DifficultChange, Verdict } from '../core/steps.js';
import { usageError } from '../errors.js';
import { resolveIdentity, type Env } from '../git/identity.js';
import { readCaseLog } from '../run/logs.js';
import { landSteps, targetOf, type WriteContext } from './commit.js';
import { difficultInput } from './difficult.js';
import { Plan, type DryRunnable } from './plan.js';
import { requireWriter } from './guards.js';
import { casesById, heldOutInput } from './held-out.js';
import { renderSideBySidePlain, sideBySide } from '../core/held-out.js';
import { judgeAnswers } from './judge.js';
import { observationsOf, repeatKey } from '../core/noise.js';
import { conditionOf, historyObservations, noiseOf } from './noise.js';
import { judgeHistory } from './blame.js';
import { orRefuse, refuseIf } from './refuse.js';
import { readRunResults } from './results.js';
import { proseFiles } from './prose.js';
import { readForRevert } from './revert.js';
import { readText, type Tuning } from './tuning.js';
import { RUN_FILES, runFilePath } from '../core/paths.js';

/**
 * `git tune grade`: draft the findings of a run (docs/method.md#grading), then validate and
 * record the finished findings as the run's grade commit.
 */
export const findingsPath = (tuning: Tuning, run: string) => runFilePath(tuning.dir, run, RUN_FILES.findings);
export const judgePath = (tuning: Tuning, run: string) => runFilePath(tuning.dir, run, RUN_FILES.judge);

/** The run to grade: the one named, or the latest run (the final check once it exists). */
export function runToGrade(tuning: Tuning, name?: string): RunState {
  return orRefuse(gradeRun(tuning.state, name));
}

async function worktreeText(tuning: Tuning, file: string): Promise<string | null> {
  return fs.readFile(path.join(tuning.repo.dir, file), 'utf8').catch(() => null);
}

function previousRun(state: TuningState, run: RunState): RunState | null {
  if (run.half === null) return null;
  const batch = batchNumbered(state, run.batch);
  const earlier = (batch?.runs ?? []).filter((r) => r.half === run.half && r.number < run.number && r.grade && !isVoidRun(r));
  return earlier[earlier.length - 1] ?? null;
}

async function judgeFor(tuning: Tuning, run: RunState, results: CaseResult[], env: Env, rejudge: boolean, dryRun: boolean): Promise<JudgeFile | Plan> {
  const config = tuning.config!;
  if (!config.judge) return {};
  const existing = (await worktreeText(tuning, judgePath(tuning, run.name))) ?? (await readText(tuning.repo, tuning.tip, judgePath(tuning, run.name)));
  if (existing && !rejudge) return judgeFileSchema.parse(JSON.parse(existing));
  // A dry run stops before the judge starts (src/app/plan.ts).
  if (dryRun) return new Plan([], `run the judge (${config.judge.command?.join(' ') ?? `preset ${config.judge.preset}`}) on ${run.name}'s ${results.length} cases, then record the grade`);
  // Every answer, the repeats' too (docs/method.md#noise): the majority of a case's answers decides.
  return judgeAnswers(tuning.repo.dir, config.judge, await casesById(tuning), results,
    (id, n, file) => readCaseLog(tuning.repo, tuning.name, run.name, repeatKey(id, n), file),
    { env, concurrency: config.concurrency, run: run.name, scope: config, historyOf: await judgeHistory(tuning, run.name) });
}

async function gradedResults(tuning: Tuning, run: RunState | null): Promise<{ name: string; results: CaseResult[]; wrong: string[] } | null> {
  if (!run?.grade) return null;
  return { name: run.name, results: (await readRunResults(tuning, run.name)).results, wrong: run.grade.wrong };
}

/** Whether each case was right in the last graded run of its own batch (for the final check). */
export function rightInBatch(state: TuningState): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const b of state.batches) {
    const graded = b.runs.filter((r) => r.grade && !isVoidRun(r));
    const last = graded[graded.length - 1];
    if (!last) continue;
    for (const id of last.cases) out.set(id, !last.grade!.wrong.includes(id));
  }
  return out;
}

export async function draftFor(tuning: Tuning, run: RunState, env: Env, rejudge?: boolean, dryRun?: false): Promise<{ draft: Draft; judge: JudgeFile }>;
export async function draftFor(tuning: Tuning, run: RunState, env: Env, rejudge: boolean, dryRun: boolean | undefined): Promise<{ draft: Draft; judge: JudgeFile } | Plan>;
export async function draftFor(tuning: Tuning, run: RunState, env: Env, rejudge = false, dryRun = false): Promise<{ draft: Draft; judge: JudgeFile } | Plan> {
  const state = tuning.state;
  const config = tuning.config!;
  const { results } = await readRunResults(tuning, run.name);
  const judge = await judgeFor(tuning, run, results, env, rejudge, dryRun);
  if (judge instanceof Plan) return judge;
  const previous = previousRun(state, run);
  const view = viewDifficult(state, config.maxRetries);
  const batch = batchNumbered(state, run.batch);
  const passing = run.half === 'mem' ? passingNomemRun(state, run.batch) : null;
  const passingResults = await gradedResults(tuning, passing);
  const aimedSince = state.edits
    .filter((e) => e.batch === run.batch && e.half === run.half && e.index < run.startIndex && (!previous || e.index > previous.startIndex))
    .flatMap((e) => e.aims);
  // Repeats from the history (docs/method.md#noise): this run's answers with those of earlier runs on the same prose and memory.
  const history = await historyObservations(tuning, { until: run, exclude: run.name });
  const condition = await conditionOf(tuning, run);
  for (const r of results) history.observations.set(r.id, [...(history.observations.get(r.id) ?? []), ...observationsOf(run.name, condition, r, judge)]);
  const draft = draftFindings({
    run: { name: run.name, batch: run.batch, half: run.half, number: run.number },
    results,
    judge,
    previous: await gradedResults(tuning, previous),
    passingNomem: passingResults ? { ...passingResults, tokens: passing!.tokens } : null,
    recheck: batch?.plan.recheck ?? [],
    difficult: {
      onList: view.filter((e) => e.status !== 'fixed').map((e) => e.id), open: view.filter((e) => e.status === 'open').map((e) => e.id),
      memory: view.filter((e) => e.status !== 'fixed' && e.reason === 'memory').map((e) => e.id),
    },
    aimedSince,
    noise: noiseOf(history.observations, condition),
    ...(passing && history.conditions.has(passing.name) ? { passingNoise: noiseOf(history.observations, history.conditions.get(passing.name)) } : {}),
    ...(run.half === null ? { final: { stuck: stuckEntries(view).map((e) => e.id), rightInBatch: rightInBatch(state), heldOut: await heldOutInput(tuning), maxStuckShare: config.maxStuckShare } } : {}),
  });
  return { draft, judge };
}

async function writeWorktree(tuning: Tuning, file: string, content: string): Promise<void> {
  const full = path.join(tuning.repo.dir, file);
  await fs.mkdir(path.dirname(full), { recursive: true });
  await fs.writeFile(full, content);
}

/** `git tune grade --draft`: findings.md (and judge.json) in the working tree, for a person to finish. */
export async function writeDraft(tuning: Tuning, runName: string | undefined, opts: { env: Env; force: boolean }): Promise<{ run: RunState; draft: Draft; file: string }> {
  await requireWriter(tuning);
  const run = runToGrade(tuning, runName);
  const file = findingsPath(tuning, run.name);
  const onDisk = await worktreeText(tuning, file);
  const committed = await readText(tuning.repo, tuning.tip, file);
  if (onDisk !== null && onDisk !== committed && !opts.force) {
    throw usageError('findings-edited', `${file} has uncommitted edits; a new draft would overwrite them`, `git tune grade --draft --force   # or record them: git tune grade`);
  }
  const { draft, judge } = await draftFor(tuning, run, opts.env, opts.force);
  await writeWorktree(tuning, file, draft.markdown);
  if (Object.keys(judge).length > 0) await writeWorktree(tuning, judgePath(tuning, run.name), `${JSON.stringify(judge, null, 2)}\n`);
  return { run, draft, file };
}

export interface GradeOutcome {
  run: string;
  verdict: Verdict;
  wrong: string[];
  difficult: DifficultChange[];
  commit: string;
  /** Edits this grade reverted (each with its own revert commit, before the grade commit). */
  reverted: Array<{ edit: string; commit: string; files: string[]; why: string }>;
  /** Unconfirmed edits this grade kept on purpose. */
  kept: Array<{ edit: string; by: string; why: string }>;
  /** A final check with a held-out set: its lines, the side by side and the drop rule's outcome (docs/held-out.md). */
  heldOut?: string[];
  /**
   * A PASSED whose run's tried edits were reverted: the run of the prose the
   * branch holds that the half passes on, with its wrong cases (the candidate
   * memory comes from it), or `run: null` when no run of the half has seen
   * that prose (`next` then runs it: `rerun`). Absent when the half passes
   * on the graded run itself.
   */
  passesOn?: { run: string | null; wrong: string[] };
  /** The final check: right / wrong / stuck with counts and ids, the rate and its interval, next to the verdict recorded. */
  final?: string;
}

interface RecordGradeOptions<C> { verdict?: string; keep?: readonly string[]; why?: string; ctx: C }

/** `git tune grade [--verdict X]`: gather what the grade reads, decide it in core (`planGrade`), write its chain once. */
export async function recordGrade(tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<WriteContext>): Promise<GradeOutcome>;
export async function recordGrade(tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<DryRunnable<WriteContext>>): Promise<GradeOutcome | Plan>;
export async function recordGrade(
  tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<DryRunnable<WriteContext>>,
): Promise<GradeOutcome | Plan> {
  await requireWriter(tuning);
  const run = runToGrade(tuning, runName);
  const forced = orRefuse(parseVerdictOption(opts.verdict));
  const keep = opts.keep ?? [];
  refuseIf(keepOptionsRefusal(keep, opts.why));
  const evidence = await gradeEvidence(tuning, run, { forced, keep, why: opts.why, ctx: opts.ctx });
  if (evidence instanceof Plan) return evidence;
  const plan = orRefuse(planGrade(evidence));
  // One chain, one compare-and-swap: the reverts and the grade land together or not at all.
  const oids = await landSteps(targetOf(tuning), plan.commits, opts.ctx);
  if (oids instanceof Plan) return oids;
  const { verdict, wrong, difficult } = plan.decision;
  return {
    run: run.name, verdict, wrong, difficult, commit: oids[oids.length - 1]!,
    reverted: plan.reverted.map((r, i) => ({ edit: r.edit.oid, commit: oids[i]!, files: r.files, why: r.why })),
    kept: plan.keep ? plan.keep.edits.map((edit) => ({ edit, by: plan.keep!.by, why: plan.keep!.why })) : [],
    ...(evidence.final?.heldLines ? { heldOut: evidence.final.heldLines } : {}),
    ...(plan.basis !== run ? { passesOn: { run: plan.basis?.name ?? null, wrong: plan.basis ? [...plan.basis.grade!.wrong] : [] } } : {}),
    ...(plan.finalLine ? { final: plan.finalLine } : {}),
  };
}

/**
 * Everything a grade of `run` reads, before anything is decided: the
 * findings (a batch run's from the working tree; the final check drafts its
 * own, running the judge), judge.json, the edits it may revert and the files
 * they touch, the prose files at the tip, the difficult list's file (and the
 * dataset, when the findings change the list), and who keeps an edit.
 */
async function gradeEvidence(
  tuning: Tuning, run: RunState, opts: { forced: Verdict | undefined; keep: readonly string[]; why: string | undefined; ctx: DryRunnable<WriteContext> },
): Promise<GradeEvidence | Plan> {
  const config = tuning.config!;
  const file = findingsPath(tuning, run.name);
  let text = await worktreeText(tuning, file);
  let judge: JudgeFile | null = null;
  let final: GradeEvidence['final'];
  if (text === null || run.half === null) {
    // The final check grades itself from checks and the judge; a --verdict starts from the draft.
    if (text === null && run.half !== null && opts.forced === undefined) {
      throw usageError('no-findings', `${file} does not exist yet`, `git tune grade --draft   # then finish it and run: git tune grade`);
    }
    const made = await draftFor(tuning, run, opts.ctx.env, false, opts.ctx.dryRun);
    // A dry run stops before the judge starts.
    if (made instanceof Plan) return made;
    text = text ?? made.draft.markdown;
    judge = made.judge;
    const held = made.draft.heldOut;
    final = {
      ...(held ? { heldOut: held.heldOut, heldLines: [...renderSideBySidePlain(sideBySide(held, (await heldOutInput(tuning))?.baseline ?? null)), held.judgement.line] } : {}),
      ...(made.draft.final ? { rule: made.draft.final.rule } : {}),
    };
  }
  const judgeFile = judgePath(tuning, run.name);
  const judgeText = judge && Object.keys(judge).length > 0 ? `${JSON.stringify(judge, null, 2)}\n` : await worktreeText(tuning, judgeFile);
  const keeper = opts.keep.length > 0 ? { by: await keeperOf(tuning, opts.ctx), why: opts.why!.trim() } : undefined;
  const globs = [...config.prose, ...config.memoryPolicy];
  return {
    state: tuning.state, run, findings: { path: file, text }, judge: { path: judgeFile, text: judgeText },
    ...(opts.forced ? { forced: opts.forced } : {}), keep: opts.keep, ...(keeper ? { keeper } : {}),
    maxRuns: config.maxRuns, maxRetries: config.maxRetries, ...(final ? { final } : {}),
    // The list's file and the dataset are read only when the findings change the list.
    difficult: findingsDifficultLines(run, text).changes.length > 0 ? await difficultInput(tuning) : null,
    edits: await readForRevert(tuning, gradeCandidates(tuning.state, run)),
    prose: run.half === null ? null : { files: await proseFiles(tuning.repo, tuning.tip, globs), globs },
  };
}

async function keeperOf(tuning: Tuning, ctx: { env: Env; now: Date }): Promise<string> {
  const { author } = await resolveIdentity(tuning.repo.gitdir, ctx.env, ctx.now);
  return `${author.name} <${author.email}>`;
}
