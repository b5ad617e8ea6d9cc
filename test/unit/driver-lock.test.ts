import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TuneError } from '../../src/errors.js';
import { howLong, otherDriver, refuseWhileDriven, tryToolLock, withDriverLock, withToolLock } from '../../src/git/lock-owner.js';

/**
 * The driver lock `.git/tune/<name>/driver` (src/git/lock-owner.ts): what a
 * second driver or a writer is told while another process drives, that the
 * driver's own steps pass, and that a dead driver is taken over. In this
 * process on a bare folder: the CLI's story is test/e2e/one-driver.test.ts.
 */
describe('the driver lock', () => {
  let gitdir = '';
  afterEach(() => {
    if (gitdir) rmSync(gitdir, { recursive: true, force: true });
    gitdir = '';
  });

  const fresh = () => (gitdir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-driver-')));
  const driverFile = (tuning = 'desk') => path.join(gitdir, 'tune', tuning, 'driver');
  /** A driver record as another process wrote it. */
  const driveAs = (pid: number, start: string | null, minutesAgo: number, command = 'git tune auto', tuning = 'desk') => {
    mkdirSync(path.dirname(driverFile(tuning)), { recursive: true });
    writeFileSync(driverFile(tuning), JSON.stringify({ pid, start, host: os.hostname(), command, since: new Date(Date.now() - minutesAgo * 60_000).toISOString() }));
  };
  /** A live process that is not this one: the test runner's parent. */
  const live = process.ppid;
  /** The pid of a process that has exited (its start time cannot match either). */
  const dead = () => spawnSync(process.execPath, ['-e', '0']).pid!;

  const refusal = async (p: Promise<unknown>): Promise<TuneError> => {
    const err = await p.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(TuneError);
    return err as TuneError;
  };

  it('says how long as a person does', () => {
    expect([0, 12_400, 60_000, 3 * 60_000 + 59_000, 60 * 60_000, 125 * 60_000].map(howLong)).toEqual(['0 s', '12 s', '1 min', '3 min', '1 h', '2 h 5 min']);
  });

  it('refuses a writer and a second driver at once while another live process drives: its pid, for how long, git tune stop', async () => {
    fresh();
    driveAs(live, null, 3);
    const started = Date.now();
    // Each attempt's refusal is caught as it starts (all three run at once): one that fails first is no unhandled rejection.
    for (const attempt of [
      refusal(refuseWhileDriven(gitdir, 'desk', false)),
      refusal(withToolLock(gitdir, 'desk', 'git tune grade', async () => 'wrote')),
      refusal(withDriverLock(gitdir, ['desk'], 'git tune auto', async () => 'drove', false)),
    ]) {
      const err = await attempt;
      expect(err.code).toBe('driver-running');
      expect(err.exitCode).toBe(4);
      expect(err.message).toBe(`auto is already driving tuning desk: git tune auto (pid ${live}, for 3 min) writes its steps until it ends`);
      expect(err.hint).toMatch(/^git tune stop( --tuning desk)?   # it stops at the next safe point; or wait for it to end$/);
    }
    // At once: the tool lock's wait (3 s) is not waited out.
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await refusal(refuseWhileDriven(gitdir, 'desk', false))).hint).toMatch(/^git tune stop {3}#/);
    expect((await refusal(refuseWhileDriven(gitdir, 'desk', true))).hint).toMatch(/^git tune stop --tuning desk {3}#/);
    // The tool lock was never taken; a reader finishing an interrupted step leaves it to the driver.
    expect(existsSync(path.join(gitdir, 'tune', 'desk', 'lock'))).toBe(false);
    await expect(tryToolLock(gitdir, 'desk', 'git tune (finishing an interrupted step)', async () => 'finished')).resolves.toBeNull();
    // Another tuning is not driven.
    await expect(withToolLock(gitdir, 'shop', 'git tune grade', async () => 'wrote')).resolves.toBe('wrote');
  });

  it('names the fleet to stop when a fleet drives the tuning', async () => {
    fresh();
    driveAs(live, null, 0.2, 'git tune auto --fleet shop', 'shop@small');
    const err = await refusal(withToolLock(gitdir, 'shop@small', 'git tune run', async () => undefined));
    expect(err.message).toContain(`git tune auto --fleet shop (pid ${live}, for 12 s)`);
    expect(err.hint).toMatch(/^git tune stop --fleet shop {3}#/);
  });

  it('passes the driver\'s own steps, holds every tuning it drives until its end, and leaves nothing behind', async () => {
    fresh();
    const seen = await withDriverLock(gitdir, ['shop@a', 'shop@b'], 'git tune auto --fleet shop', async () => {
      const record = JSON.parse(readFileSync(driverFile('shop@a'), 'utf8'));
      expect(record).toMatchObject({ pid: process.pid, host: os.hostname(), command: 'git tune auto --fleet shop' });
      expect(Date.now() - Date.parse(record.since)).toBeLessThan(5000);
      // Each target's driver takes it again (re-entrant), and its steps take the tool lock.
      const inner = await withDriverLock(gitdir, ['shop@a'], 'git tune auto', () =>
        withToolLock(gitdir, 'shop@a', 'git tune grade', async () => otherDriver(gitdir, 'shop@a')));
      expect(inner).toBeNull();
      return existsSync(driverFile('shop@a')) && existsSync(driverFile('shop@b'));
    });
    expect(seen).toBe(true);
    expect(readdirSync(path.join(gitdir, 'tune', 'shop@a'))).toEqual([]);
    expect(readdirSync(path.join(gitdir, 'tune', 'shop@b'))).toEqual([]);
  });

  it('takes all or none: a live driver of the second tuning frees the first', async () => {
    fresh();
    driveAs(live, null, 1, 'git tune auto', 'b');
    const err = await refusal(withDriverLock(gitdir, ['a', 'b'], 'git tune auto --all', async () => 'drove'));
    expect(err.code).toBe('driver-running');
    expect(existsSync(driverFile('a'))).toBe(false);
    expect(JSON.parse(readFileSync(driverFile('b'), 'utf8')).pid).toBe(live);
  });

  it('takes over a driver that died (kill -9), a reused pid, and a record cut short', async () => {
    fresh();
    const pid = dead();
    for (const [holder, start] of [[pid, '1'], [live, '1'], [pid, null]] as Array<[number, string | null]>) {
      driveAs(holder, start, 10);
      await expect(otherDriver(gitdir, 'desk')).resolves.toBeNull();
      await expect(withToolLock(gitdir, 'desk', 'git tune grade', async () => 'wrote')).resolves.toBe('wrote');
      const drove = await withDriverLock(gitdir, ['desk'], 'git tune auto', async () => JSON.parse(readFileSync(driverFile(), 'utf8')).pid);
      expect(drove).toBe(process.pid);
      expect(existsSync(driverFile())).toBe(false);
    }
    writeFileSync(driverFile(), '{"pid": 12');
    await expect(withDriverLock(gitdir, ['desk'], 'git tune auto', async () => 'drove')).resolves.toBe('drove');
    expect(readdirSync(path.join(gitdir, 'tune', 'desk'))).toEqual([]);
    // A tool lock cut short as an older git-tune created it (empty, then killed): taken over, not waited on and refused.
    const toolLock = path.join(gitdir, 'tune', 'desk', 'lock');
    for (const text of ['', '{"pid": 12']) {
      writeFileSync(toolLock, text);
      await expect(withToolLock(gitdir, 'desk', 'git tune grade', async () => JSON.parse(readFileSync(toolLock, 'utf8')).pid)).resolves.toBe(process.pid);
      expect(existsSync(toolLock)).toBe(false);
    }
    // Something that is no lock in its place: reported with the rm, not looped on.
    mkdirSync(driverFile());
    const err = await refusal(withDriverLock(gitdir, ['desk'], 'git tune auto', async () => 'drove'));
    expect([err.code, err.exitCode, err.hint]).toEqual(['ref-locked', 4, `rm -r '${driverFile()}'   # when no git tune auto runs here`]);
  });
});
