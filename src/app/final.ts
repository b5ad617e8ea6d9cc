import { makeWayForRun, viewOf } from './abandon.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import type { CaseResult, MemoryWrite } from '../contracts/result.js';
import { RESULT_SET_FORMAT, type ResultSetManifest } from '../contracts/shard.js';
import { stuckEntries, viewDifficult } from '../core/difficult.js';
import { draftFindings } from '../core/findings.js';
import { finalLine, type FinalCase } from '../core/final-rate.js';
import { isVoidRun } from '../core/fold.js';
import { branchName, FINAL_RUN, tagRef } from '../core/names.js';
import { repeatKey } from '../core/noise.js';
import { budgetRefusal, spentBeforeRun } from '../core/run-due.js';
import { interruptedStop, type RunStop } from '../core/run-stop.js';
import { runStopError } from './run-stop.js';
import {
  bestReceipt, formatShard, selectionHash, shardCases, shardFolder,
  WHOLE, type Receipt, type Shard,
} from '../core/shard.js';
import { historyError, type TuneError, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { withToolLock } from '../git/lock-owner.js';
import type { CaseLogs } from '../run/logs.js';
import { keptWorkspaceDir } from '../run/case.js';
import { RunStore } from '../run/store.js';
import { nextFor } from './decide.js';
import { findingsPath, judgePath, recordGrade, rightInBatch } from './grade.js';
import { casesById, heldOutInput } from './held-out.js';
import { BASELINE_HINT, sideBySide, type SideBySideRow } from '../core/held-out.js';
import { requireWriter } from './guards.js';
import { judgeAnswers } from './judge.js';
import { judgeHistory } from './blame.js';
import { refuseIf } from './refuse.js';
import { readRunResults } from './results.js';
import { preflightRun, recordRun, requireNoUnconfirmedEdits, runCasePool, runDue, runRepeats, startRun, type RunContext } from './run.js';
import { keptUsage, repeatStore } from './repeats.js';
import { Plan, type DryRunnable } from './plan.js';
import { loadTuning, openTuning, readText, type Tuning } from './tuning.js';
import { logKeys, machine, readResultSet, safeSegment, SET_FILES, writeResultSet, type FinalMode, type ResultSet, type SetLogs } from './result-set.js';

/**
 * The final check beyond `git tune final` itself (docs/method.md#final-check, docs/ci.md): a run of the
 * selection (or one shard of it) that writes a result set (src/app/result-set.ts) instead of a
 * commit; the merge of shard result sets recorded as the run commit `executeRun` would write
 * when asked; one check per target model; and the grade of each from checks and the judge.
 */


/**
 * Whether a run that records nothing may run now. `final`: `next` says the
 * final check is due. `recheck`: the final check is already in history
 * (recorded, graded, or started): the selection runs again, compared with
 * what is recorded, and nothing is written to the branch. Otherwise the
 * batches are not done, and no final check says anything yet.
 */
export function finalMode(tuning: Tuning): FinalMode {
  const step = nextFor(tuning);
  if (step.kind === 'final') return 'final';
  if (tuning.state.final.length > 0) return 'recheck';
  throw historyError('final-not-due', `the final check is not due: ${step.message}`, step.command ?? undefined);
}

function runnerOf(tuning: Tuning): string[] {
  const runner = tuning.config!.runner!;
  return runner.command ?? [`preset:${runner.preset}`];
}


function unfinished(stopped: RunStop | null, rerun: string): TuneError {
  return runStopError(stopped ?? interruptedStop(), 'the final check', `${rerun}   # finished cases are kept; the rest run`);
}

/**
 * Runs the cases of one shard of the selection (the whole selection for 1/1)
 * with the last good memory, nothing changed, and writes them as a result
 * set: no commit, no moved ref. Finished cases are kept under
 * `.git/tune/<name>/runs/` until the set is written, so the same command
 * resumes after Ctrl-C.
 */
export async function runResultSet(
  tuning: Tuning,
  opts: { shard: Shard; target?: string; concurrency?: number; out: string; rerun: string },
  ctx: RunContext,
): Promise<ResultSet> {
  const mode = finalMode(tuning);
  const preflight = await preflightRun(tuning, FINAL_RUN, { concurrency: opts.concurrency, target: opts.target });
  const { config, dataset } = preflight;
  const selection = preflight.ids;
  const ids = shardCases(selection, opts.shard);
  const target = preflight.target?.name ?? null;
  // Keyed by tip and target: results of another commit or model are never resumed into this one.
  const storeName = `${FINAL_RUN}.${tuning.tip.slice(0, 12)}.${safeSegment(target ?? '-')}.${shardFolder(opts.shard)}`;
  const store = new RunStore(tuning.repo.gitdir, tuning.name, storeName);
  const stored = await store.load(ids);
  // Spent: the history's, and what this set's stores keep (first answers and repeats of a stopped one).
  const usedBefore = spentBeforeRun(tuning.state, storeName, await keptUsage(tuning, storeName));
  refuseIf(budgetRefusal('the final check', config.budget, usedBefore));
  const startedAt = ctx.clock().toISOString();
  const todo = ids.filter((id) => !stored.has(id)).map((id) => dataset.get(id)!);
  const { stopped } = await runCasePool(tuning, { name: FINAL_RUN, cases: todo, preflight, store, stored, usedBefore, total: ids.length }, ctx);
  if (ids.some((id) => !stored.has(id))) throw unfinished(stopped, opts.rerun);

  // A case wrong here is re-run before the set is written, as in `git tune final` (docs/method.md#noise): the majority of its answers counts.
  const firsts = ids.map((id) => stored.get(id)!.result);
  const repeated = await runRepeats(tuning, FINAL_RUN, firsts, { preflight, before: tuning.state.usage, dataset, store: storeName }, ctx);
  if (!repeated.finished) throw unfinished(repeated.stopped, opts.rerun);
  const results = repeated.results;
  const writes: Record<string, MemoryWrite[]> = {};
  for (const id of ids) if (stored.get(id)!.writes.length > 0) writes[id] = stored.get(id)!.writes;
  // Answer n's store and what it kept: the first answers' (n 1), or a repeat's.
  const storeOf = (n: number) => (n === 1 ? store : repeatStore(tuning, storeName, n));
  const keptOf = (n: number) => (n === 1 ? stored : repeated.stores.get(n));
  const judge: JudgeFile = config.judge
    ? await judgeAnswers(tuning.repo.dir, config.judge, dataset, results, (id, n, file) => (file === 'result.json'
      ? Promise.resolve(keptOf(n)?.get(id)?.rawResult ?? null)
      : storeOf(n).readLog(id, 'transcript.jsonl')),
    { env: ctx.env, concurrency: config.concurrency, run: FINAL_RUN, scope: config, historyOf: await judgeHistory(tuning, FINAL_RUN) })
    : {};
  const manifest: ResultSetManifest = {
    format: RESULT_SET_FORMAT, tuning: tuning.name, branch: branchName(tuning.name), tip: tuning.tip, run: FINAL_RUN, mode,
    seed: config.seed, selection: { hash: selectionHash(selection), cases: selection.length },
    shard: opts.shard, cases: ids, runner: runnerOf(tuning), target, concurrency: preflight.concurrency,
    machine: machine(), startedAt: [startedAt, ...results.map((r) => r.startedAt)].sort()[0]!, finishedAt: ctx.clock().toISOString(),
    judged: config.judge !== null,
  };
  const logsIn = (dir: string, id: string, result: string | null): SetLogs => ({
    stdout: path.join(dir, `${id}.stdout`), stderr: path.join(dir, `${id}.stderr`), result,
    transcript: path.join(dir, `${id}.transcript.jsonl`), workspace: keptWorkspaceDir(dir, id),
  });
  // Each case's logs under logs/<case>/, a repeat's under logs/<case>/repeat-<n>/, as the logs ref keeps them.
  const logs = new Map(logKeys(results).map(({ id, key, n }) => [key, logsIn(storeOf(n).logDir, id, keptOf(n)?.get(id)?.rawResult ?? null)]));
  await writeResultSet(opts.out, { manifest, results, writes, judge }, logs);
  await store.remove();
  for (const n of repeated.stores.keys()) await repeatStore(tuning, storeName, n).remove();
  return readResultSet(opts.out);
}


/** One class of the selection in a report. */
export interface ClassRow {
  class: string;
  cases: number;
  right: number;
  wrong: number;
  stuck: number;
  tokens: number;
  costUsd: number;
}

/** A graded final check (or one shard of it): what the summary, the outputs and --json say. */
export interface FinalReport extends Receipt {
  tuning: string;
  tip: string;
  mode: FinalMode | 'recorded';
  shard: Shard;
  wrong: string[];
  regressed: string[];
  stuck: string[];
  voids: string[];
  /** casesRight / casesTotal (by the majority of each case's answers) and its 95% Wilson interval (docs/method.md#noise). */
  rate: { value: number; low: number; high: number };
  /** Stuck cases as a share of the selection, and the most a VERIFIED check allows (maxStuckShare). */
  stuckShare: number;
  maxStuckShare: number;
  /** Why it is not VERIFIED, one phrase each (empty when it is, or when a person graded it). */
  why: string[];
  /** Each case of the selection: its majority over its answers (the first and its repeats) and its right-rate. */
  cases: FinalCase[];
  classes: ClassRow[];
  /** The result set folder, when one was written. */
  out: string | null;
  /** The run commit, when this check was recorded. */
  commit: string | null;
  /** For a re-check: the final check already in history. */
  recorded: { verdict: string | null; tokens: number; costUsd: number; commit: string | null } | null;
  findings: string;
  /**
   * With a held-out set (docs/held-out.md): the side-by-side rows (tuned vs
   * baseline, selection and held-out), the held-out rule's outcome, and the
   * held-out cases not right. `casesRight`/`casesTotal` then count the selection.
   */
  heldOut: {
    rows: SideBySideRow[];
    checked: boolean;
    drop: number;
    maxDrop: number;
    failed: boolean;
    line: string;
    wrong: string[];
    hint: string | null;
  } | null;
}

/** The judge of a set: its own judge.json when its shards judged, else the configured judge now. */
async function judgeOfSet(tuning: Tuning, set: ResultSet, env: Env): Promise<JudgeFile> {
  const config = tuning.config!;
  if (!config.judge || set.manifest.judged) return set.judge;
  // Every answer, the repeats' too, each read from the set's logs/<case>[/repeat-<n>]/.
  const judge = await judgeAnswers(tuning.repo.dir, config.judge, await casesById(tuning), set.results,
    (id, n, file) => fs.readFile(path.join(set.logSource.get(id) ?? set.dir, 'logs', repeatKey(id, n), file), 'utf8').catch(() => null),
    { env, concurrency: config.concurrency, run: FINAL_RUN, scope: config, historyOf: await judgeHistory(tuning, FINAL_RUN) });
  await fs.writeFile(path.join(set.dir, SET_FILES.judge), `${JSON.stringify(judge, null, 2)}\n`);
  set.manifest.judged = true;
  await fs.writeFile(path.join(set.dir, SET_FILES.manifest), `${JSON.stringify(set.manifest, null, 2)}\n`);
  set.judge = judge;
  return judge;
}

/** The final check's grade from checks and the judge (docs/method.md#final-check), as `git tune grade` drafts it, with the numbers a report needs. */
export async function reportOf(
  tuning: Tuning,
  input: { results: readonly CaseResult[]; judge: JudgeFile; target: string | null; mode: FinalReport['mode']; shard: Shard; out: string | null; commit: string | null },
): Promise<FinalReport> {
  const config = tuning.config!;
  const state = tuning.state;
  const stuck = stuckEntries(viewDifficult(state, config.maxRetries)).map((e) => e.id);
  const inBatch = rightInBatch(state);
  const held = await heldOutInput(tuning);
  const draft = draftFindings({
    run: { name: FINAL_RUN, batch: 0, half: null, number: 1 },
    results: input.results, judge: input.judge, previous: null, passingNomem: null, recheck: [],
    difficult: { onList: viewDifficult(state, config.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id), open: [] },
    aimedSince: [],
    final: { stuck, rightInBatch: inBatch, maxStuckShare: config.maxStuckShare, ...(held ? { heldOut: held } : {}) },
  });
  const rule = draft.final!.rule;
  const heldIds = new Set(held?.ids ?? []);
  const all = input.results.map((r) => r.id);
  // The selection's numbers; the held-out cases have their own (the side-by-side).
  const ids = all.filter((id) => !heldIds.has(id));
  // By the majority of each case's answers (docs/method.md#noise): not right and not stuck is wrong; stuck is reported apart.
  const rightIds = new Set(rule.right);
  const wrong = rule.wrong;
  // docs/method.md#final-check: regressed = wrong now, right in the last graded run of its batch.
  const regressed = rule.regressed;
  const stuckHere = rule.stuck;
  const classOf = new Map((await tuning.loadDataset()).map((c) => [c.id, c.class]));
  const classes: ClassRow[] = [];
  for (const r of input.results.filter((x) => !heldIds.has(x.id))) {
    const name = classOf.get(r.id) ?? '(unknown)';
    let row = classes.find((c) => c.class === name);
    if (!row) classes.push((row = { class: name, cases: 0, right: 0, wrong: 0, stuck: 0, tokens: 0, costUsd: 0 }));
    row.cases++;
    if (rightIds.has(r.id)) row.right++;
    else if (wrong.includes(r.id)) row.wrong++;
    if (stuckHere.includes(r.id)) row.stuck++;
    row.tokens += r.tokens;
    row.costUsd += r.costUsd;
  }
  classes.sort((a, b) => (a.class < b.class ? -1 : a.class > b.class ? 1 : 0));
  const last = state.final[state.final.length - 1];
  return {
    tuning: tuning.name, tip: tuning.tip, mode: input.mode, shard: input.shard, target: input.target,
    verdict: draft.verdict,
    casesRight: rule.right.length,
    casesTotal: ids.length,
    rate: { value: rule.rate, low: rule.interval.low, high: rule.interval.high },
    stuckShare: rule.stuckShare,
    maxStuckShare: config.maxStuckShare,
    why: rule.why,
    cases: draft.final!.cases,
    tokens: input.results.reduce((s, r) => s + r.tokens, 0),
    costUsd: input.results.reduce((s, r) => s + r.costUsd, 0),
    wrong, regressed, stuck: stuckHere, voids: all.filter((id) => draft.verdicts.get(id) === 'VOID'),
    classes, out: input.out, commit: input.commit,
    heldOut: draft.heldOut && held ? {
      rows: sideBySide(draft.heldOut, held.baseline), checked: draft.heldOut.judgement.checked, drop: draft.heldOut.judgement.drop,
      maxDrop: held.maxDrop, failed: draft.heldOut.judgement.failed, line: draft.heldOut.judgement.line,
      wrong: held.ids.filter((id) => draft.verdicts.get(id) !== 'right'),
      hint: draft.heldOut.judgement.checked ? null : BASELINE_HINT,
    } : null,
    recorded: input.mode === 'recheck' && last
      ? { verdict: last.grade?.verdict ?? (last.finished ? null : 'unfinished'), tokens: last.tokens, costUsd: last.costUsd, commit: last.runOid }
      : null,
    findings: draft.markdown,
  };
}

export async function reportOfSet(tuning: Tuning, set: ResultSet, env: Env): Promise<FinalReport> {
  const judge = await judgeOfSet(tuning, set, env);
  return reportOf(tuning, {
    results: set.results, judge, target: set.manifest.target, mode: set.manifest.mode, shard: set.manifest.shard, out: set.dir, commit: null,
  });
}

/**
 * Records a collected result set as the final check: the run-start and run
 * commits (and tag, and logs) `git tune final` would have written for the
 * same results, then the automatic grade. Only when the final check is due
 * and the branch is where the shards ran.
 */
export async function recordResultSet(loaded: Tuning, set: ResultSet, ctx: RunContext): Promise<{ report: FinalReport; grade: string }> {
  // Held from the checks to the grade, as `git tune final` holds it: no other step lands between the run's commits.
  await requireWriter(loaded);
  return withToolLock(loaded.repo.gitdir, loaded.name, 'git tune final --collect --commit', async () => {
    const tuning = await loadTuning(loaded.repo, loaded.name);
    return recordResultSetLocked(tuning, set, ctx);
  });
}

async function recordResultSetLocked(tuning: Tuning, set: ResultSet, ctx: RunContext): Promise<{ report: FinalReport; grade: string }> {
  await requireWriter(tuning);
  const step = nextFor(tuning);
  if (step.kind !== 'final') {
    throw historyError('final-not-due', `the final check cannot be recorded now: ${step.message}`,
      tuning.state.final.length > 0 ? `git tune final --collect ${set.dir}   # without --commit: compare it with the one recorded` : step.command ?? undefined);
  }
  requireNoUnconfirmedEdits(tuning, step);
  if (set.manifest.tip !== tuning.tip) {
    throw historyError('shards-stale', `the result set ran at ${set.manifest.tip.slice(0, 12)}, but ${branchName(tuning.name)} is at ${tuning.tip.slice(0, 12)}`, 'git tune final --ci   # run it again at this commit');
  }
  if (set.manifest.shard.count !== 1) {
    throw usageError('shard-not-whole', `${set.dir} is shard ${formatShard(set.manifest.shard)}: only the whole final check is recorded`, `git tune final --collect <every shard's dir> --commit`);
  }
  await makeWayForRun(viewOf(tuning), FINAL_RUN, { env: ctx.env, now: ctx.clock() });
  const preflight = await preflightRun(tuning, FINAL_RUN, { target: set.manifest.target ?? undefined, concurrency: set.manifest.concurrency });
  const ids = preflight.ids;
  const concurrency = set.manifest.concurrency;
  const started = await startRun(tuning, FINAL_RUN, { concurrency, resume: false, toRun: ids.length, total: ids.length }, ctx);
  const logs: CaseLogs[] = [];
  for (const { id, key } of logKeys(set.results)) {
    const src = path.join(set.logSource.get(id) ?? set.dir, 'logs', key);
    logs.push({
      id: key, stdoutFile: path.join(src, 'stdout'), stderrFile: path.join(src, 'stderr'), rawResult: await fs.readFile(path.join(src, 'result.json'), 'utf8').catch(() => null),
      transcriptFile: path.join(src, 'transcript.jsonl'), workspaceDir: path.join(src, 'workspace'),
    });
  }
  const { commit } = await recordRun(started, {
    name: FINAL_RUN, ids, results: set.results, writes: set.writes, logs, concurrency, target: set.manifest.target,
    startedAt: set.manifest.startedAt, touched: [],
    meta: { shards: set.manifest.from ?? [{ shard: set.manifest.shard, concurrency, machine: set.manifest.machine, startedAt: set.manifest.startedAt, finishedAt: set.manifest.finishedAt }] },
  }, ctx);
  const grade = await gradeRecordedFinal(await loadTuning(tuning.repo, tuning.name), set.manifest.judged ? set.judge : null, ctx);
  return { report: { ...grade.report, out: set.dir, commit }, grade: grade.commit };
}

/**
 * The automatic grade of the recorded final check (`git tune grade` does the
 * same): with the shards' judge verdicts when they judged, put where the
 * grade reads them, so the judge does not run twice.
 */
async function gradeRecordedFinal(tuning: Tuning, judge: JudgeFile | null, ctx: RunContext): Promise<{ report: FinalReport; commit: string }>;
async function gradeRecordedFinal(tuning: Tuning, judge: JudgeFile | null, ctx: DryRunnable<RunContext>): Promise<{ report: FinalReport; commit: string } | Plan>;
async function gradeRecordedFinal(tuning: Tuning, judge: JudgeFile | null, ctx: DryRunnable<RunContext>): Promise<{ report: FinalReport; commit: string } | Plan> {
  // The latest final check: a VOID one's re-run is `final-check-run2`, ….
  const name = tuning.state.final[tuning.state.final.length - 1]?.name ?? FINAL_RUN;
  const judgeFile = path.join(tuning.repo.dir, judgePath(tuning, name));
  const placed = judge !== null && (await fs.access(judgeFile).then(() => false, () => true));
  if (placed) {
    await fs.mkdir(path.dirname(judgeFile), { recursive: true });
    await fs.writeFile(judgeFile, `${JSON.stringify(judge, null, 2)}\n`);
  }
  try {
    const outcome = await recordGrade(tuning, name, { ctx: ctx.dryRun ? { env: ctx.env, now: ctx.clock(), dryRun: true } : { env: ctx.env, now: ctx.clock() } });
    if (outcome instanceof Plan) {
      if (placed) await fs.rm(judgeFile, { force: true });
      return outcome;
    }
    const after = await loadTuning(tuning.repo, tuning.name);
    return { report: await reportOfRecorded(after), commit: outcome.commit };
  } catch (err) {
    if (placed) await fs.rm(judgeFile, { force: true });
    throw err;
  }
}

/** The report of the final check as history records it (its results and the judge.json its grade wrote). */
export async function reportOfRecorded(tuning: Tuning): Promise<FinalReport> {
  const run = tuning.state.final[tuning.state.final.length - 1]!;
  const { results, meta } = await readRunResults(tuning, run.name);
  const at = (await tuning.repo.resolveRef(tagRef(tuning.name, run.name))) ?? run.runOid!;
  const judgeText = await readText(tuning.repo, tuning.tip, judgePath(tuning, run.name)) ?? await readText(tuning.repo, at, judgePath(tuning, run.name));
  const report = await reportOf(tuning, {
    results, judge: judgeText ? judgeFileSchema.parse(JSON.parse(judgeText)) : {}, target: meta?.target ?? null,
    mode: 'recorded', shard: WHOLE, out: null, commit: run.runOid,
  });
  // The recorded grade is the verdict (a person may have graded it by hand).
  if (run.grade) report.verdict = run.grade.verdict;
  if (report.verdict === 'VERIFIED') report.why = [];
  const findings = await readText(tuning.repo, tuning.tip, findingsPath(tuning, run.name));
  if (findings) report.findings = findings;
  return report;
}

/**
 * `git tune final --ci --commit`: the final check as `git tune final` runs
 * it (run-start and run commits, tag, logs), then graded automatically. A
 * final check that finished but was not graded is only graded.
 */
export async function runAndRecordFinal(cwd: string, opts: { concurrency?: number; target?: string }, ctx: DryRunnable<RunContext>): Promise<FinalReport | Plan> {
  const opened = await openTuning(cwd);
  await requireWriter(opened);
  return withToolLock(opened.repo.gitdir, opened.name, 'git tune final --ci --commit', () => runAndRecordFinalLocked(opened, opts, ctx));
}

async function runAndRecordFinalLocked(opened: Tuning, opts: { concurrency?: number; target?: string }, ctx: DryRunnable<RunContext>): Promise<FinalReport | Plan> {
  let tuning = await loadTuning(opened.repo, opened.name);
  const last = tuning.state.final[tuning.state.final.length - 1];
  // A VOID final check said nothing: it runs again (a new run of the final check), as `git tune final` runs it.
  const voided = last !== undefined && isVoidRun(last);
  if (last?.grade && !voided) {
    throw historyError('final-recorded', `the final check is already recorded (${last.grade.verdict}); --commit would write a second one`, 'git tune final --ci   # without --commit: run it again and compare');
  }
  if (!last?.finished || voided) {
    const outcome = await runDue(tuning, { final: true, concurrency: opts.concurrency, target: opts.target }, ctx);
    if (outcome instanceof Plan) return outcome.followedBy('start the runner on each case, then record the run (a tagged commit) and its grade');
    if (!outcome.finished) throw unfinished(outcome.stopped, 'git tune final --ci --commit');
    tuning = await loadTuning(tuning.repo, tuning.name);
  }
  // A final check that finished but was not graded: a dry run plans its grade (and starts no judge).
  const graded = await gradeRecordedFinal(tuning, null, ctx);
  return graded instanceof Plan ? graded : graded.report;
}

/** The line every final report shows next to its verdict: right / wrong / stuck with counts and ids, the rate and its interval. */
export function reportLine(r: Pick<FinalReport, 'verdict' | 'casesRight' | 'casesTotal' | 'wrong' | 'stuck' | 'why'>): string {
  return finalLine({ verdict: r.verdict, right: r.casesRight, total: r.casesTotal, wrong: r.wrong, stuck: r.stuck, why: r.why });
}

/** That line for the final check history records (the latest one), or null when there is none graded. */
export async function recordedFinalLine(tuning: Tuning): Promise<string | null> {
  const run = tuning.state.final[tuning.state.final.length - 1];
  if (!run?.grade || !run.finished) return null;
  return reportLine(await reportOfRecorded(tuning));
}

/** The receipts of several targets and the one to prefer. */
export function pickBest(reports: readonly FinalReport[]): FinalReport | null {
  return reports.length > 1 ? bestReceipt(reports) : null;
}
