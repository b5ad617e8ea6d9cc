import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real CLI, as a user runs it: the built bundle (dist/bin/git-tune.js,
 * which `npm test` builds first) in a child process. Every test that runs
 * `git tune` goes through these; tests that call the app in-process import
 * src/ instead.
 */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/bin/git-tune.js');

/**
 * `git-tune` on the repository's PATH (a link to the built CLI in its .git),
 * as an install puts it there: git's hooks run `git-tune hook …` from PATH.
 */
export function withCliOnPath(repo: { path: (...parts: string[]) => string; env: Record<string, string> }): void {
  const bin = repo.path('.git', 'test-bin');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(path.join(bin, 'git-tune'))) symlinkSync(CLI, path.join(bin, 'git-tune'));
  repo.env.PATH = [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);
}

export interface CliResult {
  /** The exit code; -1 when a signal ended it. */
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Where a command runs: a folder and the variables set over the test's own environment (a TempRepo is one). */
export interface At {
  dir: string;
  env: Record<string, string>;
}

const envOf = (at: At, extra: Record<string, string>) => ({ ...process.env, ...at.env, ...extra });

const failed = (args: readonly string[], r: CliResult) =>
  new Error(`git tune ${args.join(' ')} exited ${r.signal ?? r.code}\n${r.stderr}\n${r.stdout}`);

/** Runs the CLI and waits; never throws on a non-zero exit. */
export function tuneSync(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: at.dir, env: envOf(at, extraEnv), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status ?? -1, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** The same, failing loudly unless it exits 0. */
export function tuneOkSync(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): CliResult {
  const r = tuneSync(at, args, extraEnv);
  if (r.code !== 0) throw failed(args, r);
  return r;
}

/**
 * Starts `command args` without waiting: the child (to signal) and its end.
 * `env` is the child's whole environment.
 */
export function startProcess(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Starts the CLI without waiting, so a test can signal it or race it with another. */
export function startTune(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): { child: ChildProcess; done: Promise<CliResult> } {
  return startProcess(process.execPath, [CLI, ...args], at.dir, envOf(at, extraEnv));
}

/** Runs the CLI asynchronously (independent tests run side by side); never throws on a non-zero exit. */
export function tuneAsync(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return startTune(at, args, extraEnv).done;
}

/** The same, failing loudly unless it exits 0. */
export async function tuneOk(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  const r = await tuneAsync(at, args, extraEnv);
  if (r.code !== 0) throw failed(args, r);
  return r;
}
