import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneAsync } from '../helpers/cli.js';
import { startGroup } from '../helpers/group.js';
import type { TempRepo } from '../helpers/repo.js';
import { exampleRepo } from '../helpers/tuning.js';

/**
 * A `git update-ref` killed with its git-tune (SIGKILL of the whole group)
 * leaves `refs/heads/tune/<name>.lock` with no note: git made it, not
 * git-tune. The command after is told whose it was by the dead git-tune's
 * tool lock, which it takes over. When that command is killed too before it
 * writes the ref (as in test/reliability/kill-anywhere.test.ts), the one after
 * it must still know: the lock is removed, saying so, with no manual step.
 * A lock that may be a live process's stays, with the `rm` that frees it.
 */
const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

const SETTINGS = { limit: '2', minBatch: '2', concurrency: '2', maxRetries: '1' };

/**
 * A git-tune auto killed inside `git update-ref` of its branch: its tool and
 * driver locks name it, and the locks it left are 10 s old: the branch's
 * (`which` ref), and HEAD's too with `HEAD` (git also locks HEAD when it is on
 * the branch), or HEAD's alone with `head`.
 */
async function killedInsideUpdateRef(repo: TempRepo, which: 'ref' | 'head' | 'ref+head' = 'ref'): Promise<{ lock: string; head: string; pid: number }> {
  const dead = startGroup(repo, ['--version']);
  await dead.done;
  const holder = JSON.stringify({ pid: dead.pgid, start: '1', host: os.hostname(), command: 'git tune auto', since: new Date(Date.now() - 20_000).toISOString() });
  mkdirSync(repo.path('.git', 'tune', 'demo'), { recursive: true });
  writeFileSync(repo.path('.git', 'tune', 'demo', 'lock'), holder);
  writeFileSync(repo.path('.git', 'tune', 'demo', 'driver'), holder);
  const lock = repo.path('.git', 'refs', 'heads', 'tune', 'demo.lock');
  const head = repo.path('.git', 'HEAD.lock');
  const tenSecondsAgo = new Date(Date.now() - 10_000);
  for (const file of which === 'ref' ? [lock] : which === 'head' ? [head] : [lock, head]) {
    writeFileSync(file, '');
    utimesSync(file, tenSecondsAgo, tenSecondsAgo);
  }
  return { lock, head, pid: dead.pgid };
}

/** The next auto takes over the dead tool and driver locks and is killed too, before it moves the branch. */
async function killedBeforeItsCommit(repo: TempRepo): Promise<void> {
  const r = await tuneAsync(repo, ['auto', '--plain'], { GIT_TUNE_CRASH_AT: 'select:begin' });
  expect(r.signal, r.stderr).toBe('SIGKILL');
}

function newRepo(): TempRepo {
  const repo = exampleRepo({ demo: SETTINGS }, 'git-tune-stale-lock-');
  cleanup.push(() => repo.cleanup());
  return repo;
}

describe.concurrent('a ref lock a killed git-tune left, two kills back', () => {
  it('is removed by the next command, which says whose it was, and goes on', async () => {
    const repo = newRepo();
    const { lock, pid } = await killedInsideUpdateRef(repo);
    await killedBeforeItsCommit(repo);
    expect(existsSync(lock)).toBe(true);
    const r = await tuneAsync(repo, ['select']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`git-tune: removed ${lock}: left by git tune auto (pid ${pid}), which was killed`);
    expect(existsSync(lock)).toBe(false);
  }, 120_000);

  it('HEAD.lock the same update-ref left (HEAD is on the branch) goes too, alone or beside the branch\'s', async () => {
    for (const which of ['head', 'ref+head'] as const) {
      const repo = newRepo();
      expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/tune/demo');
      const { lock, head, pid } = await killedInsideUpdateRef(repo, which);
      const r = await tuneAsync(repo, ['select']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`git-tune: removed ${head}: left by git tune auto (pid ${pid}), which was killed`);
      if (which === 'ref+head') expect(r.stderr).toContain(`git-tune: removed ${lock}: left by git tune auto (pid ${pid}), which was killed`);
      expect(existsSync(head) || existsSync(lock)).toBe(false);
      expect(repo.git('status', '--porcelain')).toBe('');
    }
  }, 120_000);

  it('stays while a git runs in the repository (the lock may be its own): refused, exit 4, with the rm', async () => {
    const repo = newRepo();
    const { lock } = await killedInsideUpdateRef(repo);
    await killedBeforeItsCommit(repo);
    const git = spawn('git', ['cat-file', '--batch'], { cwd: repo.dir, stdio: ['pipe', 'ignore', 'ignore'] });
    const ended = new Promise((resolve) => git.on('close', resolve));
    try {
      const r = await tuneAsync(repo, ['select']);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`rm '${lock}'`);
      expect(r.stderr).not.toContain('git-tune: removed');
      expect(existsSync(lock)).toBe(true);
    } finally {
      git.stdin!.end();
      await ended;
    }
  }, 120_000);
});
