import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../contracts/config.js';
import type { Case } from '../contracts/dataset.js';
import type { JudgeFile } from '../contracts/judge.js';
import { majorityOfAsks } from '../core/judge-majority.js';
import { repeatKey } from '../core/noise.js';
import { classifyJudgeAttempt, nextJudgeTry, type JudgeAttempt } from '../core/judge-retry.js';
import type { CaseResult } from '../contracts/result.js';
import type { CaseStory } from '../core/case-story.js';
import { redactJson, secretsOf } from '../core/redact.js';
import { runPool } from '../run/pool.js';
import { interruptedError, readCapped, runProcess } from '../run/process.js';
import { resolveCommand, type PresetScope } from '../run/presets/index.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import type { Env } from '../git/identity.js';
import { undoOutside, worktreeBaseline } from './worktree-guard.js';

/**
 * Runs the configured judge once per case of a run (docs/contracts.md#judge), with
 * the case and the runner's result; its output is validated. A judge that
 * fails is called again as core/judge-retry says, and a case whose judge
 * still fails gets the error (the case is VOID for the judge), never a
 * crash of the grading. What a judge changed in the repository is put back
 * and named on the case it was judging (`undone`).
 */
export interface JudgeRunOptions {
  env: Env;
  concurrency: number;
  run: string;
  /** The prose a judge preset may read. */
  scope: PresetScope;
  /** The case's story before this run, written to TUNE_HISTORY (docs/contracts.md#judge); none: TUNE_HISTORY is not set. */
  historyOf?: (caseId: string) => CaseStory;
  /** Each case's transcript as the logs ref keeps it (TUNE_TRANSCRIPT for the judge), when the runner wrote one. */
  transcripts?: ReadonlyMap<string, string | null>;
  /** Waits between retries; tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function tail(file: string): Promise<string> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.slice(-2000);
}

/** What every answer of one judging shares: the judge, its command, the options, and the repository's state before it. */
export interface JudgeSession {
  root: string;
  judge: CommandSpec;
  command: ReturnType<typeof resolveCommand>;
  opts: JudgeRunOptions;
  sleep: (ms: number) => Promise<void>;
  baseline: Awaited<ReturnType<typeof worktreeBaseline>> | null;
  /** Set when a judge was killed on the user's request: no other judge starts, and judging ends with this error. */
  stopped: { error: Error | null };
}

/** One answer to judge: the case, the runner's result (and its raw result.json and transcript), and a scratch folder of its own. */
export interface JudgeAnswer {
  item: Case;
  result: CaseResult;
  raw: string | null;
  transcript: string | null | undefined;
  dir: string;
}

/** Where judging starts: the judge's command resolved, and the repository's state kept so what a judge changes is put back. */
export async function judgeSession(root: string, judge: CommandSpec, opts: JudgeRunOptions): Promise<JudgeSession> {
  const command = resolveCommand(judge, 'judge', opts.scope);
  // Not a work tree native git can read (or git is busy): the judges run unguarded rather than not at all.
  const baseline = await worktreeBaseline(root, opts.env).catch(() => null);
  return { root, judge, command, opts, sleep: opts.sleep ?? realSleep, baseline, stopped: { error: null } };
}

/**
 * Asks the judge once about one answer: called again as core/judge-retry
 * says; its output, or the error that replaced it.
 */
async function askJudge(session: JudgeSession, answer: JudgeAnswer, ask: number): Promise<JudgeFile[string]> {
  const { root, judge, command, opts, sleep, baseline } = session;
  const { item, dir, transcript } = answer;
  const caseFile = path.join(dir, 'case.json');
  const resultFile = path.join(dir, 'result.json');
  const outputFile = path.join(dir, 'judge.json');
  const historyFile = path.join(dir, 'history.json');
  const transcriptFile = path.join(dir, 'transcript.jsonl');
  const attempts: JudgeAttempt[] = [];
  for (;;) {
    await fs.rm(outputFile, { force: true });
    const n = `${ask > 1 ? `${ask}.` : ''}${attempts.length + 1}`;
    const outcome = await runProcess({
      command: command.command, shell: command.shell, cwd: root,
      env: { ...opts.env, ...judge.env, ...command.env, TUNE_ROOT: root, TUNE_CASE: caseFile, TUNE_RESULT: resultFile, TUNE_OUTPUT: outputFile, TUNE_RUN: opts.run, TUNE_CASE_ID: item.id, ...(opts.historyOf ? { TUNE_HISTORY: historyFile } : {}), ...(transcript ? { TUNE_TRANSCRIPT: transcriptFile } : {}) },
      timeoutMs: judge.timeoutSec * 1000,
      stdoutFile: path.join(dir, `stdout.${n}`), stderrFile: path.join(dir, `stderr.${n}`),
    });
    if (outcome.requested || session.stopped.error) {
      session.stopped.error ??= interruptedError(`the judge on ${item.id}`);
      throw session.stopped.error;
    }
    const read = await readCapped(outputFile, 4 * 1024 * 1024);
    attempts.push(classifyJudgeAttempt({
      ...outcome,
      output: read.tooBig ? `(more than 4 MiB: ${read.size} bytes)` : read.text,
      printed: `${await tail(path.join(dir, `stdout.${n}`))}\n${await tail(path.join(dir, `stderr.${n}`))}`,
      timeoutSec: judge.timeoutSec,
    }));
    const next = nextJudgeTry(attempts);
    if (!next.again) break;
    if (next.afterMs > 0) await sleep(next.afterMs);
  }
  const last = attempts[attempts.length - 1]!;
  const undone = baseline ? await undoOutside(root, opts.env, baseline, () => false).catch(() => []) : [];
  const tries = attempts.length;
  return last.kind === 'ok'
    ? { ...last.output, ...(undone.length ? { undone } : {}) }
    : { error: `${last.error}${tries > 1 ? ` (${tries} tries)` : ''}`, tries, ...(undone.length ? { undone } : {}) };
}

/**
 * Judges one answer: the judge is asked `judge.repeats` times (default 1)
 * about the same answer, and the majority verdict stands, with every ask
 * recorded next to it (core/judge-majority.ts). Used for a case's answer,
 * and for each repeat of a case re-run on the same prose.
 */
export async function judgeAnswer(session: JudgeSession, answer: JudgeAnswer): Promise<JudgeFile[string]> {
  const { item, result, raw, transcript, dir } = answer;
  const { opts } = session;
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'case.json'), JSON.stringify(item, null, 2));
  await fs.writeFile(path.join(dir, 'result.json'), raw ?? JSON.stringify({ answer: result.answer ?? null, usage: result.usage, error: result.error }));
  if (opts.historyOf) await fs.writeFile(path.join(dir, 'history.json'), JSON.stringify(opts.historyOf(item.id), null, 2));
  if (transcript) await fs.writeFile(path.join(dir, 'transcript.jsonl'), transcript);
  const asks: Array<JudgeFile[string]> = [];
  for (let ask = 1; ask <= Math.max(1, session.judge.repeats ?? 1); ask++) asks.push(await askJudge(session, answer, ask));
  return majorityOfAsks(asks);
}

export async function judgeRun(
  root: string, judge: CommandSpec, cases: readonly Case[], results: readonly CaseResult[], rawResults: Map<string, string | null>,
  opts: JudgeRunOptions,
): Promise<JudgeFile> {
  const scratch = await makeScratch('judge');
  const out: JudgeFile = {};
  const byId = new Map(results.map((r) => [r.id, r]));
  const session = await judgeSession(root, judge, opts);
  const { command } = session;
  try {
    await runPool(cases.filter((c) => byId.get(c.id)?.status !== 'void'), opts.concurrency, async (item) => {
      try {
        out[item.id] = await judgeAnswer(session, {
          item, result: byId.get(item.id)!, raw: rawResults.get(item.id) ?? null, transcript: opts.transcripts?.get(item.id), dir: path.join(scratch, item.id),
        });
      } catch (e) {
        // A judge killed on the user's request: no other judge starts, and the running ones end before the scratch dir goes.
        if (e !== session.stopped.error) throw e;
      }
    }, () => session.stopped.error !== null);
  } finally {
    await removeScratch(scratch);
  }
  if (session.stopped.error) throw session.stopped.error;
  const sorted: JudgeFile = {};
  for (const c of cases) if (out[c.id]) sorted[c.id] = out[c.id]!;
  // What the judge says is stored (judge.json, findings): never a secret it saw in its environment (docs/contracts.md#secrets).
  return redactJson(sorted, secretsOf(opts.env, judge.env, command.env));
}

/**
 * Judges every answer of a run: the first answers, then its repeats a round
 * at a time (docs/method.md#noise), a repeat under `<case>/repeat-<n>` in the
 * judge file, so the majority of a case's answers decides. `logOf` reads an
 * answer's kept result.json or transcript (`n` 1: the first answer).
 */
export async function judgeAnswers(
  root: string, judge: CommandSpec, cases: ReadonlyMap<string, Case>, results: readonly CaseResult[],
  logOf: (id: string, n: number, file: 'result.json' | 'transcript.jsonl') => Promise<string | null>, opts: JudgeRunOptions,
): Promise<JudgeFile> {
  const judged: JudgeFile = {};
  const rounds = [1, ...new Set(results.flatMap((r) => (r.repeats ?? []).map((x) => x.n)))].sort((a, b) => a - b);
  for (const n of rounds) {
    const answers = n === 1 ? results : results.flatMap((r) => r.repeats?.filter((x) => x.n === n).map((x) => ({ ...x, id: r.id, rev: r.rev })) ?? []);
    const raw = new Map<string, string | null>();
    const transcripts = new Map<string, string | null>();
    for (const r of answers) {
      raw.set(r.id, await logOf(r.id, n, 'result.json'));
      transcripts.set(r.id, await logOf(r.id, n, 'transcript.jsonl'));
    }
    const verdicts = await judgeRun(root, judge, answers.map((r) => cases.get(r.id)!).filter(Boolean), answers, raw, { ...opts, transcripts });
    for (const [id, v] of Object.entries(verdicts)) judged[repeatKey(id, n)] = v;
  }
  return judged;
}
