import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  makeScratch, ownerIsGone, ownerOf, parseScratchName, pidSpace, scratchName, sweepScratch, type ScratchOwner,
} from '../../src/run/scratch.js';

/**
 * Scratch directories name their owner process; a sweep removes those of
 * dead owners only. Each test works in its own temp root, never the shared one.
 */
let tmp: string;
let live: ChildProcess;

/** A process that is alive until the tests end. */
beforeAll(async () => {
  live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  await new Promise((resolve) => live.once('spawn', resolve));
});
afterAll(() => {
  live.kill('SIGKILL');
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const newRoot = () => (tmp = mkdtempSync(path.join(os.tmpdir(), 'scratch-sweep-')));

/** A pid that belonged to a process which has exited and been reaped. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  expect(r.status).toBe(0);
  return r.pid;
}

/** A scratch directory as `owner` would have made it (plus one file in it). */
function scratchOf(owner: ScratchOwner, kind: string): string {
  const dir = path.join(tmp, `${scratchName(owner, kind)}abc123`);
  mkdirSync(path.join(dir, 'case-a'), { recursive: true });
  writeFileSync(path.join(dir, 'case-a', 'result.json'), '{}');
  return dir;
}

describe('scratch directories', () => {
  it('makeScratch names this process as the owner, and the name parses back', async () => {
    newRoot();
    const dir = await makeScratch('batch01-nomem-run1', tmp);
    expect(path.dirname(dir)).toBe(tmp);
    const owner = parseScratchName(path.basename(dir));
    expect(owner).toEqual({ space: pidSpace(), pid: process.pid, start: ownerOf(process.pid).start });
    expect(path.basename(dir)).toMatch(new RegExp(`^git-tune-scratch-${pidSpace()}-${process.pid}-\\d+-batch01-nomem-run1-.{6}$`));
    expect(parseScratchName('git-tune-judge-abc123')).toBeNull();
    expect(parseScratchName('git-tune-test-abc123')).toBeNull();
  });

  it('a sweep removes the directory of a dead process', async () => {
    newRoot();
    const pid = deadPid();
    const dead = scratchOf({ space: pidSpace(), pid, start: 12345 }, 'judge');
    expect(ownerIsGone(parseScratchName(path.basename(dead))!)).toBe(true);
    expect(await sweepScratch(tmp)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
  });

  it('a live process\'s directory is kept, and so is this process\'s own', async () => {
    newRoot();
    const theirs = scratchOf(ownerOf(live.pid!), 'batch01-nomem-run1');
    const mine = await makeScratch('merge', tmp);
    expect(await sweepScratch(tmp)).toEqual([]);
    expect(existsSync(path.join(theirs, 'case-a', 'result.json'))).toBe(true);
    expect(existsSync(mine)).toBe(true);
  });

  it.runIf(process.platform === 'linux')('a live pid with another start time is a reused pid: its old directory goes', async () => {
    newRoot();
    const real = ownerOf(live.pid!);
    expect(real.start).toBeGreaterThan(0);
    const reused = scratchOf({ ...real, start: real.start + 1 }, 'editor');
    const kept = scratchOf(real, 'editor');
    expect(await sweepScratch(tmp)).toEqual([reused]);
    expect(existsSync(kept)).toBe(true);
  });

  it('leaves alone what is not a scratch directory of ours, even with a dead pid', async () => {
    newRoot();
    const pid = deadPid();
    const otherSpace = scratchOf({ space: 'x999', pid, start: 1 }, 'run');
    const oldStyle = path.join(tmp, 'git-tune-judge-abc123');
    const testRepo = path.join(tmp, 'git-tune-test-abc123');
    const demo = path.join(tmp, 'git-tune-demo-abc123');
    for (const d of [oldStyle, testRepo, demo]) mkdirSync(d);
    const file = path.join(tmp, `${scratchName({ space: pidSpace(), pid, start: 1 }, 'file')}abc123`);
    writeFileSync(file, 'not a directory');
    const target = path.join(tmp, 'elsewhere');
    mkdirSync(target);
    writeFileSync(path.join(target, 'keep.txt'), 'mine');
    const link = path.join(tmp, `${scratchName({ space: pidSpace(), pid, start: 1 }, 'link')}abc123`);
    symlinkSync(target, link);
    const before = readdirSync(tmp).sort();
    expect(await sweepScratch(tmp)).toEqual([]);
    expect(readdirSync(tmp).sort()).toEqual(before);
    expect(existsSync(path.join(target, 'keep.txt'))).toBe(true);
    expect(existsSync(otherSpace)).toBe(true);
  });

  it('makeScratch sweeps before it makes its own directory', async () => {
    newRoot();
    const dead = scratchOf({ space: pidSpace(), pid: deadPid(), start: 7 }, 'batch01-nomem-run1');
    const mine = await makeScratch('judge', tmp);
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(tmp)).toEqual([path.basename(mine)]);
  });
});
