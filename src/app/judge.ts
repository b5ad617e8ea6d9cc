import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../contracts/config.js';
import type { Case } from '../contracts/dataset.js';
import { judgeOutputSchema, type JudgeFile } from '../contracts/judge.js';
import type { CaseResult } from '../contracts/result.js';
import { redactJson, secretsOf } from '../core/redact.js';
import { runPool } from '../run/pool.js';
import { readCapped, runProcess } from '../run/process.js';
import { resolveCommand } from '../run/presets/index.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import type { Env } from '../git/identity.js';

/**
 * Runs the configured judge once per case of a run (SPEC section 6), with
 * the case and the runner's result; its output is validated, and a judge
 * that fails gets a per-case error, never a crash of the grading.
 */
export async function judgeRun(
  root: string, judge: CommandSpec, cases: readonly Case[], results: readonly CaseResult[], rawResults: Map<string, string | null>,
  opts: { env: Env; concurrency: number; run: string },
): Promise<JudgeFile> {
  const scratch = await makeScratch('judge');
  const out: JudgeFile = {};
  const byId = new Map(results.map((r) => [r.id, r]));
  const command = resolveCommand(judge);
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
      const outcome = await runProcess({
        command: command.command, shell: command.shell, cwd: root,
        env: { ...opts.env, ...judge.env, ...command.env, TUNE_ROOT: root, TUNE_CASE: caseFile, TUNE_RESULT: resultFile, TUNE_OUTPUT: outputFile, TUNE_RUN: opts.run, TUNE_CASE_ID: item.id },
        timeoutMs: judge.timeoutSec * 1000,
        stdoutFile: path.join(dir, 'stdout'), stderrFile: path.join(dir, 'stderr'),
      });
      const read = await readCapped(outputFile, 4 * 1024 * 1024);
      if (outcome.timedOut) out[item.id] = { error: `the judge timed out after ${judge.timeoutSec}s` };
      else if (read.text === null) out[item.id] = { error: `the judge wrote no output (exit ${outcome.exitCode ?? outcome.signal ?? outcome.spawnError})` };
      else {
        try {
          const parsed = judgeOutputSchema.safeParse(JSON.parse(read.text));
          out[item.id] = parsed.success
            ? parsed.data
            : { error: `the judge output does not match the contract: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'output'}: ${i.message}`).join('; ')}` };
        } catch (err) {
          out[item.id] = { error: `the judge output is not JSON (${(err as Error).message})` };
        }
      }
    }, () => false);
  } finally {
    await removeScratch(scratch);
  }
  const sorted: JudgeFile = {};
  for (const c of cases) if (out[c.id]) sorted[c.id] = out[c.id]!;
  // What the judge says is stored (judge.json, findings): never a secret it saw in its environment (SPEC 6).
  return redactJson(sorted, secretsOf(opts.env, judge.env, command.env));
}
