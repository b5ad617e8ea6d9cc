import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Test helpers: real git repositories in temp dirs, the real built CLI, and
 * native git to check what we wrote. Dates and identities are pinned so
 * commit ids are deterministic.
 */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/bin/git-tune.js');

export const PINNED_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Tune Tester',
  GIT_AUTHOR_EMAIL: 'tester@example.com',
  GIT_COMMITTER_NAME: 'Tune Tester',
  GIT_COMMITTER_EMAIL: 'tester@example.com',
  GIT_AUTHOR_DATE: '@1767225600 +0000',
  GIT_COMMITTER_DATE: '@1767225600 +0000',
  GIT_CONFIG_NOSYSTEM: '1',
  NO_COLOR: '1',
};

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class TempRepo {
  readonly dir: string;

  constructor(prefix = 'git-tune-test-') {
    this.dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    this.env = { ...PINNED_ENV, HOME: this.dir, GIT_CONFIG_GLOBAL: path.join(this.dir, '.no-global-gitconfig') };
  }

  env: Record<string, string>;

  /** `git init` with one commit holding `files`. */
  static create(files: Record<string, string> = { 'agents/prompt.md': 'Answer politely.\n' }): TempRepo {
    const repo = new TempRepo();
    repo.git('init', '-q', '-b', 'main');
    repo.write(files);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'project');
    return repo;
  }

  path(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  write(files: Record<string, string>): void {
    for (const [file, content] of Object.entries(files)) {
      const full = this.path(file);
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }

  git(...args: string[]): string {
    return execFileSync('git', args, {
      cwd: this.dir,
      env: { ...process.env, ...this.env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  /** Runs the real CLI; never throws on a non-zero exit. */
  tune(args: string[], extraEnv: Record<string, string> = {}): CliResult {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      cwd: this.dir,
      env: { ...process.env, ...this.env, ...extraEnv },
      encoding: 'utf8',
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  /** Runs the CLI and parses its --json output, failing loudly on a non-zero exit. */
  tuneJson<T = any>(args: string[], extraEnv: Record<string, string> = {}): T {
    const r = this.tune([...args, '--json'], extraEnv);
    if (r.code !== 0) throw new Error(`git tune ${args.join(' ')} exited ${r.code}\n${r.stderr}\n${r.stdout}`);
    return JSON.parse(r.stdout) as T;
  }

  fsck(): string {
    return this.git('fsck', '--strict', '--no-dangling');
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The real CLI, asynchronously, in `repo` with its pinned env: independent tests run side by side. */
export function runCliAsync(repo: TempRepo, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: repo.dir, env: { ...process.env, ...repo.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
