import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, TuneError } from '../../src/errors.js';
import { spaceError } from '../../src/faults/enospc.js';
import { diskFullError, isSpaceError, mountPointOf } from '../../src/git/disk-full.js';

/** What a full disk looks like from each place it can come from, and the one error it becomes. */
describe('a full disk, however it is reported, is disk-full (exit 7)', () => {
  const tmp = os.tmpdir();
  const mount = execFileSync('df', ['--output=target', tmp], { encoding: 'utf8' }).trim().split('\n').pop()!.trim();

  it('names the mount point df names, the file, the space left, and the command to run after freeing space', () => {
    const err = diskFullError(spaceError(path.join(tmp, 'repo/.tune/desk/README.md.tmp-12-345-0badf00d')))!;
    expect(err).toBeInstanceOf(TuneError);
    expect(err.code).toBe('disk-full');
    expect(err.exitCode).toBe(EXIT.space);
    expect(EXIT.space).toBe(7);
    expect(err.message).toMatch(new RegExp(`^no space left on ${mount} \\([\\d.]+ [KMGT]?B free of [\\d.]+ [KMGT]?B\\): could not write ${path.join(tmp, 'repo/.tune/desk/README.md')}$`));
    expect(err.hint).toBe(`free space on ${mount}, then: git tune next`);
    expect(mountPointOf(path.join(tmp, 'no/such/dir'))).toBe(mount);
  });

  it('an exceeded quota (EDQUOT) says so', () => {
    expect(diskFullError(spaceError('/x/y', true), tmp)!.message).toMatch(/^the disk quota on \/\S* is exceeded/);
  });

  it('finds it inside causes and grouped errors (isomorphic-git), and in a git child\'s stderr', () => {
    const wrapped = new Error('write failed', { cause: spaceError(path.join(tmp, 'a')) });
    expect(isSpaceError(wrapped)).toBe(true);
    expect(isSpaceError(new AggregateError([new Error('other'), spaceError('/b')]))).toBe(true);
    const git = new TuneError('git-failed', 'git unpack-objects failed (exit 128): error: unable to write loose object file: No space left on device', { exitCode: EXIT.unexpected });
    expect(diskFullError(git, tmp)!.message).toBe(`${diskFullError(spaceError(tmp), tmp)!.message.replace(/: could not write .*$/, '')}: a write in ${tmp} failed`);
    expect(diskFullError(new Error("error: unable to create temporary file '/r/.git/objects/ab/tmp_obj_1': No space left on device"))!.message).toContain('could not write /r/.git/objects/ab/tmp_obj_1');
    expect(diskFullError(new Error('spawn sh ENOSPC'))).not.toBeNull();
  });

  it('leaves every other error alone, and a refusal that only quotes the words', () => {
    expect(diskFullError(new Error('EACCES: permission denied'))).toBeNull();
    expect(diskFullError(Object.assign(new Error('x'), { code: 'EIO' }))).toBeNull();
    expect(diskFullError(new TuneError('bad-findings', 'findings.md says "No space left on device"'))).toBeNull();
  });
});
