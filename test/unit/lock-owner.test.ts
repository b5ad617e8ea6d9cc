import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitLockHolder, noteLockOwner } from '../../src/git/lock-owner.js';

/**
 * The note git-tune keeps beside a git lock file it holds (who holds it), as
 * another command reads it while the lock is contended.
 */
describe('lock owner notes', () => {
  let gitdir: string;
  afterEach(() => rmSync(gitdir, { recursive: true, force: true }));

  const lockAt = () => {
    gitdir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-locknote-'));
    mkdirSync(path.join(gitdir, 'refs', 'heads', 'tune'), { recursive: true });
    const lock = path.join(gitdir, 'refs', 'heads', 'tune', 'desk.lock');
    writeFileSync(lock, '');
    return lock;
  };

  it('names this process as the holder of a lock it noted, and leaves no temp file', async () => {
    const lock = lockAt();
    await noteLockOwner(gitdir, lock, 'git tune grade');
    const seen = await gitLockHolder(gitdir, lock);
    expect(seen.state).toBe('alive');
    expect(seen.holder).toMatchObject({ pid: process.pid, command: 'git tune grade' });
    expect(readdirSync(path.join(gitdir, 'tune', '.locks'))).toEqual(['refs%heads%tune%desk.lock.owner']);
  });

  it('reads a note cut short (another command writing it) as no note: the holder is unknown, not an error', async () => {
    const lock = lockAt();
    mkdirSync(path.join(gitdir, 'tune', '.locks'), { recursive: true });
    for (const text of ['', '{"pid": 12', 'null']) {
      writeFileSync(path.join(gitdir, 'tune', '.locks', 'refs%heads%tune%desk.lock.owner'), text);
      await expect(gitLockHolder(gitdir, lock)).resolves.toEqual({ state: 'unknown', holder: null });
    }
  });
});
