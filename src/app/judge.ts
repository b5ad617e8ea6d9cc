import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../contracts/config.js';
import type { Case } from '../contracts/dataset.js';
import type { JudgeFile } from '../contracts/judge.js';
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

export async function judgeRun(
  root: string, judge: CommandSpec, cases: readonly Case[], results: readonly CaseResult[], rawResults: Map<string, string | null>,
  opts: JudgeRunOptions,
): Promise<JudgeFile> {
  const scratch = await makeScratch('judge');
  const out: JudgeFile = {};
  const byId = new Map(results.map((r) => [r.id, r]));
  const command = resolveCommand(judge, 'judge', opts.scope);
  const sleep = opts.sleep ?? realSleep;
  // Not a work tree native git can read (or git is busy): the judges run unguarded rather than not at all.
  const baseline = await worktreeBaseline(root, opts.env).catch(() => null);
  // A judge killed on the user's request: no other judge starts, and the running ones end before the scratch dir goes.
  let stopped: Error | null = null;
  try {
    await runPool(cases.filter((c) => byId.get(c.id)?.status !== 'void'), opts.concurrency, async (item) => {
      const dir = path.join(scratch, item.id);
      await fs.mkdir(dir, { recursive: true });
      const caseFile = path.join(dir, 'case.json');
      const resultFile = path.join(dir, 'result.json');
      const outputFile = path.join(dir, 'judge.json');
      await fs.writeFile(caseFile, JSON.stringify(item, null, 2));
      const result = byId.get(item.id)!;
      await fs.writeFile(resultFile, rawResults.get(item.id) ?? JSON.stringify({ answer: result.answer ?? null, usage: result.usage, error: result.error }));
      const historyFile = path.join(dir, 'history.json');
      if (opts.historyOf) await fs.writeFile(historyFile, JSON.stringify(opts.historyOf(item.id), null, 2));
      const transcript = opts.transcripts?.get(item.id);
      const transcriptFile = path.join(dir, 'transcript.jsonl');
      if (transcript) await fs.writeFile(transcriptFile, transcript);
      const attempts: JudgeAttempt[] = [];
      for (;;) {
        await fs.rm(outputFile, { force: true });
        const n = attempts.length + 1;
        const outcome = await runProcess({
          command: command.command, shell: command.shell, cwd: root,
          env: { ...opts.env, ...judge.env, ...command.env, TUNE_ROOT: root, TUNE_CASE: caseFile, TUNE_RESULT: resultFile, TUNE_OUTPUT: outputFile, TUNE_RUN: opts.run, TUNE_CASE_ID: item.id, ...(opts.historyOf ? { TUNE_HISTORY: historyFile } : {}), ...(transcript ? { TUNE_TRANSCRIPT: transcriptFile } : {}) },
          timeoutMs: judge.timeoutSec * 1000,
          stdoutFile: path.join(dir, `stdout.${n}`), stderrFile: path.join(dir, `stderr.${n}`),
        });
        if (outcome.requested || stopped) {
          stopped ??= interruptedError(`the judge on ${item.id}`);
          return;
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
      out[item.id] = last.kind === 'ok'
        ? { ...last.output, ...(undone.length ? { undone } : {}) }
        : { error: `${last.error}${tries > 1 ? ` (${tries} tries)` : ''}`, tries, ...(undone.length ? { undone } : {}) };
    }, () => stopped !== null);
  } finally {
    await removeScratch(scratch);
  }
  if (stopped) throw stopped;
  const sorted: JudgeFile = {};
  for (const c of cases) if (out[c.id]) sorted[c.id] = out[c.id]!;
  // What the judge says is stored (judge.json, findings): never a secret it saw in its environment (docs/contracts.md#secrets).
  return redactJson(sorted, secretsOf(opts.env, judge.env, command.env));
}
