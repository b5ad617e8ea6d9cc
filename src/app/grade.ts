import { promises as fs } from 'node:fs';
import path from 'node:path';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import type { CaseResult } from '../contracts/result.js';
import { stuckEntries, viewDifficult } from '../core/difficult.js';
import { draftFindings, setVerdict, type Draft } from '../core/findings.js';
import { basisRun, passingNomemRun } from '../core/basis.js';
import { finalLine, type FinalRule } from '../core/final-rate.js';
import { batchNumbered, isVoidRun, type EditState, type RunState, type TuningState } from '../core/fold.js';
import { decideGrade, gradeRun, gradeStep, keepOptionsRefusal, parseVerdictOption, settleReason } from '../core/grade.js';
import type { DifficultChange, Keep, Score, Verdict } from '../core/steps.js';
import { usageError } from '../errors.js';
import { resolveIdentity, type Env } from '../git/identity.js';
import { readCaseLog } from '../run/logs.js';
import { landSteps, targetOf, type StepCommit, type WriteContext } from './commit.js';
import { Plan, type DryRunnable } from './plan.js';
import { difficultFileAfter } from './difficult.js';
import { requireWriter } from './guards.js';
import { casesById, heldOutInput } from './held-out.js';
import { renderSideBySidePlain, sideBySide } from '../core/held-out.js';
import { judgeAnswers } from './judge.js';
import { observationsOf, repeatKey } from '../core/noise.js';
import { conditionOf, historyObservations, noiseOf } from './noise.js';
import { judgeHistory } from './blame.js';
import { orRefuse, refuseIf } from './refuse.js';
import { readRunResults } from './results.js';
import { proseDigest } from './prose.js';
import { planRevert } from './revert.js';
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

/** `git tune grade [--verdict X]`: validate the findings and record the grade commit. */
export async function recordGrade(tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<WriteContext>): Promise<GradeOutcome>;
export async function recordGrade(tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<DryRunnable<WriteContext>>): Promise<GradeOutcome | Plan>;
export async function recordGrade(
  tuning: Tuning, runName: string | undefined, opts: RecordGradeOptions<DryRunnable<WriteContext>>,
): Promise<GradeOutcome | Plan> {
  await requireWriter(tuning);
  const config = tuning.config!;
  const run = runToGrade(tuning, runName);
  const forced = orRefuse(parseVerdictOption(opts.verdict));
  const keep = opts.keep ?? [];
  refuseIf(keepOptionsRefusal(keep, opts.why));
  const file = findingsPath(tuning, run.name);
  let text = await worktreeText(tuning, file);
  let judge: JudgeFile | null = null;
  let heldOut: Score | undefined;
  let heldLines: string[] | undefined;
  let finalRule: FinalRule | undefined;
  if (text === null || run.half === null) {
    // The final check grades itself from checks and the judge; a --verdict starts from the draft.
    if (text === null && run.half !== null && forced === undefined) {
      throw usageError('no-findings', `${file} does not exist yet`, `git tune grade --draft   # then finish it and run: git tune grade`);
    }
    if (text === null || run.half === null) {
      const made = await draftFor(tuning, run, opts.ctx.env, false, opts.ctx.dryRun);
      if (made instanceof Plan) return made;
      text = text ?? made.draft.markdown;
      judge = made.judge;
      heldOut = made.draft.heldOut?.heldOut;
      finalRule = made.draft.final?.rule;
      const held = made.draft.heldOut;
      if (held) {
        const input = await heldOutInput(tuning);
        heldLines = [...renderSideBySidePlain(sideBySide(held, input?.baseline ?? null)), held.judgement.line];
      }
    }
  }
  if (forced) text = setVerdict(text, forced);
  const findings = { state: tuning.state, run, file, text, keep, maxRuns: config.maxRuns, maxRetries: config.maxRetries };
  let decision = orRefuse(decideGrade(findings));
  const { settlement } = decision;
  const reverts = await planSettlingReverts(tuning, run, settlement.revert);
  // The prose the branch holds once the reverts land: a half passes on a run of it (src/core/basis.ts), so PASSED is checked against that run.
  const prose = run.half === null ? undefined
    : await proseDigest(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy], reverts.commits.flatMap((c) => [...c.changes]));
  if (prose !== undefined && decision.verdict === 'PASSED') decision = orRefuse(decideGrade({ ...findings, prose }));
  const changes = new Map<string, { content: string }>([[file, { content: text }]]);
  const fromWorktree = new Set([file]);
  const judgeFile = judgePath(tuning, run.name);
  const judgeText = judge && Object.keys(judge).length > 0 ? `${JSON.stringify(judge, null, 2)}\n` : await worktreeText(tuning, judgeFile);
  if (judgeText !== null) {
    changes.set(judgeFile, { content: judgeText });
    fromWorktree.add(judgeFile);
  }
  if (decision.difficult.length > 0) {
    const after = await difficultFileAfter(tuning, decision.difficult, decision.notes);
    changes.set(after.path, { content: after.content });
  }
  let keepStep: Keep | undefined;
  if (settlement.keep.length > 0) {
    const { author } = await resolveIdentity(tuning.repo.gitdir, opts.ctx.env, opts.ctx.now);
    keepStep = { edits: settlement.keep.map((e) => e.oid), why: opts.why!.trim(), by: `${author.name} <${author.email}>` };
  }
  const grade: StepCommit = { ...gradeStep(tuning.name, run, decision, keepStep, heldOut, prose), changes, fromWorktree };
  // One chain, one compare-and-swap: the reverts and the grade land together or not at all.
  const oids = await landSteps(targetOf(tuning), [...reverts.commits, grade], opts.ctx);
  if (oids instanceof Plan) return oids;
  const { verdict, wrong, difficult } = decision;
  const basis = verdict === 'PASSED' && prose !== undefined ? basisRun(tuning.state, run, prose) : run;
  return {
    run: run.name, verdict, wrong, difficult, commit: oids[oids.length - 1]!,
    reverted: reverts.edits.map((e, i) => ({ edit: e.oid, commit: oids[i]!, files: reverts.files[i]!, why: settleReason(e, run) })),
    kept: settlement.keep.map((e) => ({ edit: e.oid, by: keepStep!.by, why: keepStep!.why })),
    ...(heldLines ? { heldOut: heldLines } : {}),
    ...(basis !== run ? { passesOn: { run: basis?.name ?? null, wrong: basis ? [...basis.grade!.wrong] : [] } } : {}),
    ...(finalRule ? {
      final: finalLine({
        verdict, right: finalRule.right.length, total: finalRule.total,
        wrong: finalRule.wrong, stuck: finalRule.stuck, why: verdict === 'VERIFIED' ? [] : finalRule.why,
      }),
    } : {}),
  };
}

/**
 * The revert commits a grade writes before its own (`git tune revert`'s, with
 * the grade's reason). A hunk that no longer applies (a later edit changed
 * the same lines) stops the grade with nothing written, naming the file and
 * hunk, and how to go on.
 */
async function planSettlingReverts(tuning: Tuning, run: RunState, edits: readonly EditState[]) {
  if (edits.length === 0) return { commits: [], files: [], edits: [] };
  return planRevert(tuning, edits, {
    reason: (e) => settleReason(e, run),
    conflict: (e, file) => ({
      context: `the grade of ${run.name} is not recorded: it reverts the edits its run left unconfirmed, and `,
      hint: `git tune grade --run ${run.name} --keep ${e.oid.slice(0, 7)} --why "…"   # keep it on purpose; or: git revert ${e.oid.slice(0, 7)}, resolve ${file}, commit, then git tune grade`,
    }),
  });
}
