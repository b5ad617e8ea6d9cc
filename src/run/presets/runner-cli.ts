import { cliOptionsSchema } from '../../contracts/presets.js';
import { caseHome, defaultBin, failureKind, jsonLines, lastLines, readClaude, readCodex, runCli, runnerArgs, type AgentCli, type CaseHome } from './agent-cli.js';
import { writeFileSync } from 'node:fs';
import { oomLine } from '../../core/memory-fault.js';
import { env, inputText, readCase, writeResult } from './common.js';

/**
 * Runner presets `claude-code` and `codex`: the agent CLI run once per case
 * in the repository root (TUNE_ROOT), where it finds the prose itself
 * (CLAUDE.md, AGENTS.md, skills, rules), with the case's input as its
 * prompt. docs/presets.md has the options and what is counted. Config:
 *
 *   runner:
 *     preset: claude-code          # or codex
 *     options:
 *       bin: claude                # the CLI (default claude / codex)
 *       args: [--max-turns, "8"]   # extra arguments (codex: [-m, gpt-5-codex])
 *       prices: {gpt-5-codex: {inputPerMTok: 1.25, outputPerMTok: 10}}   # codex prints no cost
 *
 * Memory (the with-memory half): the CLI is told where the case's memory
 * copy is (TUNE_MEMORY), that the files there are what earlier cases saved,
 * and that it may save a fact there as a file; the folder is added to what
 * it may touch (claude `--add-dir` plus write permission for that folder
 * alone; codex `--add-dir` under `--sandbox workspace-write`). git-tune
 * counts the writes itself (it compares the memory copy before and after).
 * Reads are counted from the tool calls the output shows: claude's
 * Read/Glob/Grep/LS (and Bash) calls that name the folder; codex's shell
 * commands that name it. Neither CLI reports a read it made otherwise.
 *
 * Transcript: the CLI's JSON events, one per line, go to TUNE_TRANSCRIPT.
 *
 * Hermetic: each case runs the CLI in a throwaway home (caseHome), its input
 * after `--` (or on stdin), and a failure the CLI reports is read as the
 * runner contract says: a refused key sandbox-down, a rate limit that
 * outlasted the CLI's bounded retries VOID, anything else the case's error.
 */

function main(): void {
  const cli = (process.env.TUNE_PRESET ?? 'claude-code') as AgentCli;
  const parsed = cliOptionsSchema().safeParse(JSON.parse(process.env.TUNE_PRESET_OPTIONS ?? '{}'));
  if (!parsed.success) {
    writeResult({ answer: null, sandboxDown: `the ${cli} preset's options are not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
    return;
  }
  const opts = parsed.data;
  const item = readCase();
  const memoryDir = process.env.TUNE_MEMORY || null;
  const bin = opts.bin ?? defaultBin(cli);
  const started = Date.now();
  let home: CaseHome;
  try {
    home = caseHome(cli, opts);
  } catch (err) {
    writeResult({ answer: null, sandboxDown: `the ${cli} preset could not make the case's home: ${(err as Error).message}` });
    return;
  }
  let child: ReturnType<typeof runCli>;
  try {
    child = runCli(bin, { ...runnerArgs(cli, inputText(item.input), memoryDir, opts.args), env: home.env }, env('TUNE_ROOT'));
  } finally {
    home.remove();
  }
  if (child.spawnError && /\b(ENOMEM|EAGAIN)\b/.test(child.spawnError)) {
    // No memory (or no process slot) to start it in: the machine's fault, not the prose's.
    writeResult({ answer: null, void: `out of memory: ${bin} could not start (${child.spawnError})` });
    return;
  }
  if (child.spawnError) {
    // Not installed (or not executable): every later case would fail the same way.
    writeResult({ answer: null, sandboxDown: `${bin} could not start: ${child.spawnError} (install it, or name it with options.bin)` });
    return;
  }
  // Killed for memory (or died of it, as a Node CLI does with its heap): the case is VOID, as git-tune sees it for any runner.
  if (child.status === 137 || child.signal === 'SIGKILL') process.exit(137);
  const oom = child.status !== 0 ? oomLine(child.stderr) : null;
  if (oom) {
    writeResult({ answer: null, void: `out of memory (${child.status === null ? child.signal : `exit ${child.status}`}): ${bin}: ${oom}` });
    return;
  }
  const events = jsonLines(child.stdout);
  // The CLI's own event stream (messages, tool calls, usage per turn) is the
  // case's transcript; git-tune caps and redacts it where it keeps it.
  if (process.env.TUNE_TRANSCRIPT && events !== null) {
    writeFileSync(process.env.TUNE_TRANSCRIPT, events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  }
  const run = events === null ? null : cli === 'claude-code' ? readClaude(events, memoryDir) : readCodex(events, memoryDir, opts);
  if (run === null || 'unreadable' in run) {
    const why = run === null ? 'printed no JSON' : `printed JSON without its answer: ${run.unreadable}`;
    const err = lastLines(child.stderr) || lastLines(child.stdout, 1).slice(0, 200);
    writeResult({ answer: null, error: `${bin} ${why} (exit ${child.status})${err ? `: ${err}` : ''}`, durationMs: Date.now() - started });
    return;
  }
  const kind = failureKind(run);
  if (kind === 'down') {
    // The key is refused: every later case would fail the same way (as for the API presets).
    writeResult({ answer: null, sandboxDown: `${bin}: the model API refused the key (HTTP ${run.apiStatus}): ${run.error}`, durationMs: Date.now() - started });
    return;
  }
  if (kind === 'void') {
    // A rate limit or an overloaded API that outlasted the CLI's own retries: not the prose's fault, run it again later.
    writeResult({ answer: null, void: `${bin}: the model API kept failing (HTTP ${run.apiStatus}) after the CLI's retries: ${run.error}`, durationMs: Date.now() - started });
    return;
  }
  writeResult({
    answer: run.answer,
    usage: run.usage,
    llmCalls: run.llmCalls,
    toolCalls: run.toolCalls,
    memoryReads: run.memoryReads,
    durationMs: Date.now() - started,
    ...(run.error !== undefined ? { error: run.error } : child.status !== 0 ? { error: `${bin} exited ${child.status}: ${lastLines(child.stderr)}` } : {}),
  });
}

main();
