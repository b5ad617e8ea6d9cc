import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tuneSync, type CliResult } from './cli.js';

/**
 * Test helpers: real git repositories in temp dirs, and native git to check
 * what we wrote. Dates and identities are pinned so commit ids are
 * deterministic (a copy of a repository holds the very commits a rebuild
 * would write).
 */
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

  /** A new repository holding a copy of `template`'s files and .git: a history built once, used by many tests. */
  static copyOf(template: TempRepo, prefix = 'git-tune-copy-'): TempRepo {
    const copy = new TempRepo(prefix);
    cpSync(template.dir, copy.dir, { recursive: true, verbatimSymlinks: true });
    return copy;
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

  /** Runs the real CLI and waits; never throws on a non-zero exit. */
  tune(args: string[], extraEnv: Record<string, string> = {}): CliResult {
    return tuneSync(this, args, extraEnv);
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

/** The commit `ref` names, or null when there is none. */
export function revOrNull(repo: TempRepo, ref: string): string | null {
  try {
    return repo.git('rev-parse', '--verify', '-q', ref).trim() || null;
  } catch {
    return null;
  }
}

/**
 * The commit a full ref name points at, read from the ref files as git
 * writes them (a lock, then a rename): for loops that watch a branch move
 * while a command runs, where a `git rev-parse` every few milliseconds
 * would cost more than the command watched.
 */
export function readRef(repo: TempRepo, ref: string): string | null {
  try {
    return readFileSync(repo.path('.git', ref), 'utf8').trim();
  } catch {
    const packed = existsSync(repo.path('.git', 'packed-refs')) ? readFileSync(repo.path('.git', 'packed-refs'), 'utf8') : '';
    return packed.split('\n').find((l) => l.endsWith(` ${ref}`))?.slice(0, 40) ?? null;
  }
}

/** `git fsck --strict` exits 0 and reports no error (dangling objects of a step that never landed are fine). */
export function fsckProblems(repo: TempRepo): string {
  try {
    const out = repo.git('fsck', '--strict', '--no-dangling', '--no-progress');
    return out.split('\n').filter((l) => /error|missing|broken|bad/i.test(l)).join('\n');
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
}

/** Lock files, journals and run caches a finished command must not leave. */
export function leftovers(repo: TempRepo): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, name.name);
      if (name.isDirectory()) walk(full);
      else if (name.name.endsWith('.lock')) out.push(path.relative(repo.dir, full));
    }
  };
  walk(repo.path('.git/refs'));
  if (existsSync(repo.path('.git/index.lock'))) out.push('.git/index.lock');
  const tune = repo.path('.git/tune');
  for (const name of existsSync(tune) ? readdirSync(tune) : []) {
    if (name === '.locks') {
      for (const note of readdirSync(path.join(tune, name))) out.push(`.git/tune/.locks/${note}`);
      continue;
    }
    for (const f of ['lock', 'pending-step.json']) if (existsSync(path.join(tune, name, f))) out.push(`.git/tune/${name}/${f}`);
    const runs = path.join(tune, name, 'runs');
    for (const run of existsSync(runs) ? readdirSync(runs) : []) out.push(`.git/tune/${name}/runs/${run}`);
  }
  return out;
}
