import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../contracts/config.js';
import type { Case } from '../contracts/dataset.js';
import { costOf, runnerResultSchema, tokensOf, type CaseResult, type CheckOutcome, type MemoryWrite, type RunnerResult } from '../contracts/result.js';
import { runCheck } from '../core/checks.js';
import { matcher } from '../core/glob.js';
import { memoryShortage } from '../core/memory-fault.js';
import { redactJson, redactText, secretsOf, type Secret } from '../core/redact.js';
import { diffMemory, snapshotMemory, summarizeWrites, writeMemory, type MemoryFile } from './memory.js';
import { cutMarker, MAX_LOG_BYTES, readCapped, readHead, runProcess } from './process.js';
import { oomCounts, oomDelta } from './oom.js';
import { resolveCommand, type PresetScope } from './presets/index.js';
import { isSpaceError, spaceFault } from '../git/disk-full.js';
import { filesUnder } from './files.js';

/**
 * One case of a run, start to end: private dirs, the runner process, its
 * result validated, the checks, and what it wrote to its memory copy.
 * Never throws for anything the runner does; every failure is a case result.
 */
export interface CaseContext {
  root: string;
  run: string;
  runner: CommandSpec;
  /** The prose a runner preset offers the model. */
  scope: PresetScope;
  target: { name: string; env: Record<string, string> } | null;
  memory: readonly MemoryFile[];
  /** Private dirs for this case go under here (outside the repository). */
  scratch: string;
  /** Where stdout/stderr logs are kept for the logs ref. */
  logDir: string;
  env: Record<string, string | undefined>;
  now: () => Date;
}

export interface CaseOutcome {
  result: CaseResult;
  writes: MemoryWrite[];
  stdoutFile: string;
  stderrFile: string;
  /** The runner's whole result file, as written (for the logs ref). */
  rawResult: string | null;
  /**
   * The runner failed because a file system is full (ENOSPC or EDQUOT in its
   * stderr or its spawn error): the machine's fault, not the prose's. Such a
   * case is not kept; the run stops as on a downed sandbox, with exit 7.
   */
  diskFull?: Error;
  /**
   * git-tune killed the runner on the user's request (a second Ctrl-C, `git
   * tune stop --now`): the case has no result (never a VOID for memory); it
   * is not kept and runs again when the run resumes.
   */
  interrupted?: true;
}

/** Largest result file read: a runner that writes more gets a clear case error. */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;
/** Bytes of a transcript (and of each kept workspace file) kept in the logs ref: the same cap as stdout and stderr. */
export const MAX_TRANSCRIPT_BYTES = MAX_LOG_BYTES;

/** A failed runner's full disk: its spawn error or the end of its stderr says ENOSPC or EDQUOT. */
async function runnerDiskFull(spawnError: string | null, stderrFile: string, dir: string): Promise<Error | undefined> {
  const tail = (await fs.readFile(stderrFile, 'utf8').catch(() => '')).slice(-4096);
  const said = [spawnError ?? '', ...tail.split('\n')].find((line) => isSpaceError(new Error(line)));
  if (!said) return undefined;
  const fault = spaceFault(new Error(said));
  return Object.assign(new Error(`the runner ran out of disk space: ${said.trim().slice(0, 300)}`), {
    code: fault?.quota ? 'EDQUOT' : 'ENOSPC',
    path: fault?.file ?? dir,
  });
}

const safeName = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_');

function describeZod(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || 'result'}: ${i.message}`).join('; ');
}

async function runCommandCheck(
  ctx: CaseContext, check: { command: string[] }, caseFile: string, resultFile: string, dir: string, index: number,
): Promise<CheckOutcome | 'interrupted'> {
  const outcome = await runProcess({
    command: check.command, shell: false, cwd: ctx.root,
    env: { ...ctx.env, TUNE_CASE: caseFile, TUNE_RESULT: resultFile, TUNE_ROOT: ctx.root, TUNE_RUN: ctx.run },
    timeoutMs: 60_000,
    stdoutFile: path.join(dir, `check-${index}.stdout`), stderrFile: path.join(dir, `check-${index}.stderr`),
    maxLogBytes: 64 * 1024,
  });
  if (outcome.requested) return 'interrupted';
  const pass = outcome.exitCode === 0;
  let detail: string | undefined;
  if (!pass) {
    const err = (await fs.readFile(path.join(dir, `check-${index}.stderr`), 'utf8').catch(() => '')).trim().split('\n').slice(-1)[0];
    detail = outcome.timedOut ? 'check command timed out' : outcome.spawnError ?? `exit ${outcome.exitCode}${err ? `: ${err}` : ''}`;
  }
  return { type: 'command', pass, ...(detail ? { detail } : {}) };
}

/**
 * Keeps a file the runner wrote for the logs ref: its first MAX_TRANSCRIPT_BYTES
 * (cut at the last whole line, so JSONL stays lines), redacted, and a marker
 * line where it was cut saying how much more there was. No file: none kept.
 */
export async function keepCapped(from: string, to: string, secrets: readonly Secret[]): Promise<boolean> {
  await fs.rm(to, { force: true });
  const head = await readHead(from, MAX_TRANSCRIPT_BYTES);
  if (!head || head.size === 0) return false;
  let kept = head.bytes;
  if (head.size > kept.length) {
    const lastLine = kept.lastIndexOf(0x0a);
    if (lastLine > 0) kept = kept.subarray(0, lastLine + 1);
  }
  const text = redactText(kept.toString('utf8'), secrets);
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.writeFile(to, head.size > kept.length ? `${text}${text.endsWith('\n') ? '' : '\n'}${cutMarker(kept.length, head.size - kept.length)}` : text);
  return true;
}

/** Most files kept from one case's workspace (a glob such as `**` must not take in a whole dependency tree). */
export const MAX_KEPT_FILES = 100;

/** Where the workspace files kept of a case wait for the logs ref. */
export const keptWorkspaceDir = (logDir: string, id: string) => path.join(logDir, `${safeName(id)}.workspace`);

/** The workspace files `runner.keep` names, copied for the logs ref as transcripts are (capped, redacted). */
async function keepWorkspace(workspace: string, to: string, globs: readonly string[], secrets: readonly Secret[]): Promise<void> {
  await fs.rm(to, { recursive: true, force: true });
  if (globs.length === 0) return;
  const kept = matcher(globs);
  const files = (await filesUnder(workspace)).filter(kept).slice(0, MAX_KEPT_FILES);
  for (const file of files) await keepCapped(path.join(workspace, file), path.join(to, file), secrets);
}

export async function runCase(ctx: CaseContext, item: Case): Promise<CaseOutcome> {
  const dir = path.join(ctx.scratch, safeName(item.id));
  await fs.rm(dir, { recursive: true, force: true });
  const memoryDir = path.join(dir, 'memory');
  const workspace = path.join(dir, 'workspace');
  const caseFile = path.join(dir, 'case.json');
  const outputFile = path.join(dir, 'result.json');
  const transcriptFile = path.join(dir, 'transcript.jsonl');
  await fs.mkdir(workspace, { recursive: true });
  await writeMemory(memoryDir, ctx.memory);
  await fs.writeFile(caseFile, `${JSON.stringify(item, null, 2)}\n`);
  await fs.mkdir(ctx.logDir, { recursive: true });
  const stdoutFile = path.join(ctx.logDir, `${safeName(item.id)}.stdout`);
  const stderrFile = path.join(ctx.logDir, `${safeName(item.id)}.stderr`);
  const before = await snapshotMemory(memoryDir);
  const startedAt = ctx.now().toISOString();

  const runner = resolveCommand(ctx.runner, 'runner', ctx.scope);
  const env = {
    ...ctx.env,
    ...ctx.runner.env,
    ...runner.env,
    ...(ctx.target?.env ?? {}),
    TUNE_ROOT: ctx.root,
    TUNE_CASE: caseFile,
    TUNE_MEMORY: memoryDir,
    TUNE_WORKSPACE: workspace,
    TUNE_OUTPUT: outputFile,
    TUNE_TRANSCRIPT: transcriptFile,
    TUNE_RUN: ctx.run,
    TUNE_CASE_ID: item.id,
    ...(ctx.target ? { TUNE_TARGET: ctx.target.name } : {}),
  };
  // The runner's output lands in its scratch dir (outside the repository) and is
  // kept with the values of secret-named variables redacted (docs/contracts.md#secrets).
  const secrets = secretsOf(env);
  const oomBefore = await oomCounts();
  const outcome = await runProcess({
    command: runner.command, shell: runner.shell, cwd: ctx.root, env,
    timeoutMs: ctx.runner.timeoutSec * 1000,
    stdoutFile: path.join(dir, 'stdout'),
    stderrFile: path.join(dir, 'stderr'),
  });
  for (const [from, to] of [[path.join(dir, 'stdout'), stdoutFile], [path.join(dir, 'stderr'), stderrFile]] as const) {
    if (secrets.length === 0) await fs.copyFile(from, to).catch(() => fs.writeFile(to, ''));
    else await fs.writeFile(to, redactText(await fs.readFile(from, 'utf8').catch(() => ''), secrets));
  }
  // What the runner says it did (messages, tool calls), if it wrote it: kept in the logs ref, redacted, capped.
  await keepCapped(transcriptFile, path.join(ctx.logDir, `${safeName(item.id)}.transcript.jsonl`), secrets);
  await keepWorkspace(workspace, keptWorkspaceDir(ctx.logDir, item.id), ctx.runner.keep ?? [], secrets);

  // Killed for memory, out of memory, or no memory to start in: VOID, never an error that blames the prose.
  // A runner git-tune itself killed (a timeout, the user's Ctrl-C) was not short of memory, whatever its signal says.
  const shortOfMemory = outcome.timedOut || outcome.requested ? null : memoryShortage({ ...outcome, oomKills: oomDelta(oomBefore, await oomCounts()) });
  const after = await snapshotMemory(memoryDir);
  const writes = await diffMemory(memoryDir, before, after);
  const read = await readCapped(outputFile, MAX_RESULT_BYTES);

  let parsed: RunnerResult | null = null;
  let error: string | undefined;
  let voidReason: string | undefined;
  if (outcome.timedOut) voidReason = `timeout after ${ctx.runner.timeoutSec}s`;
  else if (shortOfMemory) voidReason = shortOfMemory;
  else if (outcome.spawnError) error = `the runner could not start: ${outcome.spawnError}`;
  else if (read.tooBig) error = `the result file is ${(read.size / 1024 / 1024).toFixed(1)} MB; at most ${MAX_RESULT_BYTES / 1024 / 1024} MB is read`;
  else if (read.text === null) {
    error = outcome.exitCode === 0 ? 'the runner wrote no result to TUNE_OUTPUT' : `the runner exited ${outcome.exitCode ?? outcome.signal} without a result`;
  } else {
    let json: unknown;
    try {
      json = JSON.parse(read.text);
    } catch (err) {
      error = `the result in TUNE_OUTPUT is not JSON (${(err as Error).message})`;
    }
    if (error === undefined) {
      const checked = runnerResultSchema.safeParse(json);
      if (!checked.success) error = `the result does not match the runner contract: ${describeZod(checked.error)}`;
      else parsed = checked.data;
    }
  }
  if (parsed?.void) voidReason = parsed.void;
  if (parsed?.error) error = parsed.error;
  else if (parsed && !voidReason && outcome.exitCode !== 0) error = `the runner exited ${outcome.exitCode ?? outcome.signal}`;

  const status: CaseResult['status'] = voidReason ? 'void' : error ? 'error' : 'ok';
  const checks: CheckOutcome[] = [];
  let checkKilled = false;
  if (status === 'ok' && parsed) {
    for (const [i, check] of (item.checks ?? []).entries()) {
      const checked = check.type === 'command' ? await runCommandCheck(ctx, check, caseFile, outputFile, dir, i) : runCheck(check, parsed.answer);
      if (checked === 'interrupted') {
        checkKilled = true;
        break;
      }
      checks.push(checked);
    }
  }
  const right = status === 'void' ? null : status === 'error' ? false : checks.length > 0 ? checks.every((c) => c.pass) : null;
  const usage = parsed?.usage ?? [];
  const result: CaseResult = {
    id: item.id,
    rev: item.rev,
    status,
    ...(parsed ? { answer: parsed.answer } : {}),
    right,
    checks,
    usage,
    tokens: tokensOf(usage),
    costUsd: costOf(usage),
    llmCalls: parsed?.llmCalls ?? 0,
    toolCalls: parsed?.toolCalls ?? 0,
    memoryReads: parsed?.memoryReads ?? 0,
    memoryWrites: summarizeWrites(writes, after.refused),
    durationMs: parsed?.durationMs ?? outcome.durationMs,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    ...(error ? { error } : {}),
    ...(voidReason ? { void: voidReason } : {}),
    ...(parsed?.sandboxDown ? { sandboxDown: parsed.sandboxDown } : {}),
    startedAt,
  };
  const diskFull = status === 'error' ? await runnerDiskFull(outcome.spawnError ?? null, stderrFile, dir) : undefined;
  await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
  return {
    result: redactJson(result, secrets), writes: redactJson(writes, secrets), stdoutFile, stderrFile,
    rawResult: read.text === null ? null : redactText(read.text, secrets),
    ...(diskFull ? { diskFull } : {}),
    ...(outcome.requested || checkKilled ? { interrupted: true as const } : {}),
  };
}
