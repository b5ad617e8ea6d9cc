import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startProcess } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { exampleRepo } from '../helpers/tuning.js';

/**
 * Issue 22, item 1, on a real full file system: the example agent's
 * repository on a small tmpfs, filled so that `git tune auto` runs out of
 * space a few steps in. auto ends with exit 7 naming the tmpfs; git is
 * consistent, no temporary file is left, the tree is clean; once space is
 * freed, `git tune auto` carries on.
 *
 * The tmpfs is mounted in a mount namespace of its own (`unshare --mount`:
 * as root, as CI runs; otherwise in a user namespace with
 * `--user --map-root-user`), which every command of the test enters with
 * nsenter: nothing is mounted on the host, and the mount goes with the
 * namespace. The test fails, never skips, where neither works.
 */
const asRoot = process.getuid?.() === 0;
const nsFlags = asRoot ? ['-m'] : ['-U', '-m', '--preserve-credentials'];

let holder: ChildProcess;
let mnt: string;
let template: TempRepo;

/** Runs `command args` inside the namespace, in `cwd`. */
function inNs(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return startProcess('nsenter', ['-t', String(holder.pid), ...nsFlags, '--', 'sh', '-c', 'cd "$0" && exec "$@"', cwd, command, ...args], os.tmpdir(), env).done;
}

async function nsOk(cwd: string, command: string, ...args: string[]): Promise<string> {
  const r = await inNs(cwd, command, args);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

beforeAll(async () => {
  template = exampleRepo({ demo: { limit: '10', minBatch: '5', concurrency: '5', maxRetries: '1' } }, 'git-tune-df-');
  mnt = mkdtempSync(path.join(os.tmpdir(), 'git-tune-tmpfs-'));
  holder = spawn('unshare', [...(asRoot ? [] : ['--user', '--map-root-user']), '--mount', '--propagation', 'private', 'sleep', '600'], { stdio: 'ignore' });
  // unshare makes the namespace, then becomes `sleep`: wait for that before entering it.
  const own = readlinkSync('/proc/self/ns/mnt');
  for (let i = 0; i < 200; i++) {
    try {
      if (readFileSync(`/proc/${holder.pid}/comm`, 'utf8').trim() === 'sleep' && readlinkSync(`/proc/${holder.pid}/ns/mnt`) !== own) break;
    } catch {
      // not there yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await nsOk('/', 'mount', '-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', mnt);
}, 60_000);

afterAll(async () => {
  if (holder?.pid) {
    await inNs('/', 'umount', [mnt]).catch(() => undefined);
    holder.kill('SIGKILL');
  }
  rmSync(mnt, { recursive: true, force: true });
  template?.cleanup();
});

describe('a real full disk (tmpfs)', () => {
  it('auto stops with exit 7 naming the file system, leaves nothing half-written, and carries on once space is freed', async () => {
    const repo = path.join(mnt, 'repo');
    const env = { ...process.env, ...template.env };
    const git = (...args: string[]) => nsOk(repo, 'git', ...args);
    const tune = (...args: string[]) => inNs(repo, process.execPath, [CLI, ...args], env);
    await nsOk('/', 'cp', '-a', `${template.dir}/.`, repo);
    // The df of the tmpfs as this namespace sees it: it is not the host's /tmp.
    expect((await nsOk('/', 'df', '--output=target', repo)).trim().split('\n').pop()).toBe(mnt);

    // About two steps' worth of room.
    const avail = Number((await nsOk('/', 'df', '--output=avail', '-B1', mnt)).trim().split('\n').pop());
    await nsOk('/', 'sh', '-c', `head -c ${avail - 160 * 1024} /dev/zero > ${mnt}/filler`);
    const stepsBefore = (await git('rev-list', '--count', 'tune/demo')).trim();

    const full = await tune('auto');
    const said = `${full.stdout}\n${full.stderr}`;
    expect(full.code, said).toBe(7);
    expect(said).toContain(`no space left on ${mnt}`);
    expect(said).toContain(`free space on ${mnt}, then: git tune next`);
    expect(said).not.toContain('--debug');
    // Mid-loop: some steps landed before the disk was full.
    expect(Number((await git('rev-list', '--count', 'tune/demo')).trim())).toBeGreaterThan(Number(stepsBefore) + 1);

    expect(await git('fsck', '--strict', '--no-dangling', '--no-progress')).not.toMatch(/error|missing|broken|bad/i);
    expect((await nsOk(repo, 'find', '.', '-name', '*.tmp-*')).trim()).toBe('');
    expect((await git('status', '--porcelain', '--untracked-files=all')).trim()).toBe('');

    // Space is back: auto carries on from the step that failed (a token ceiling stops it a few steps on; the first run's wrong answers are re-run, so it needs more than one run's worth).
    await nsOk('/', 'rm', `${mnt}/filler`);
    const stuck = Number((await git('rev-list', '--count', 'tune/demo')).trim());
    const again = await tune('auto', '--max-tokens', '12000');
    expect([0, 3], `${again.stdout}\n${again.stderr}`).toContain(again.code);
    expect(again.stdout).not.toContain('failed (exit');
    expect(Number((await git('rev-list', '--count', 'tune/demo')).trim())).toBeGreaterThan(stuck + 1);
    expect(await git('fsck', '--strict', '--no-dangling', '--no-progress')).not.toMatch(/error|missing|broken|bad/i);
    expect((await git('status', '--porcelain', '--untracked-files=all')).trim()).toBe('');
  }, 120_000);
});
