import { createHash } from 'node:crypto';
import { promises as fs, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diskFullPoint } from '../faults/enospc.js';

/**
 * Scratch directories in the system temp dir (a run's case workspaces, the
 * judge's files, the memory merge, auto's editor). Each command removes its
 * own when it ends; one that is killed (SIGKILL, a power cut) cannot, so the
 * next command that makes one sweeps the leftovers of dead processes.
 *
 * The owner is in the name, written atomically with the directory itself:
 * `git-tune-scratch-<space>-<pid>-<start>-<kind>-XXXXXX`, where `<space>`
 * tells which processes the pid belongs to (the Linux pid namespace, or the
 * host elsewhere) and `<start>` is the process's start time (clock ticks
 * since boot from /proc, `0` where unknown). A directory is removed only when
 * it has that form, is a real directory of this user, comes from our pid
 * space, and its owner is gone: no such process, a zombie, or a process with
 * another start time (the pid was reused). A live owner, or one we cannot
 * judge, keeps its directory.
 */
export const SCRATCH_PREFIX = 'git-tune-scratch-';

const NAME = /^git-tune-scratch-([0-9a-z]+)-(\d+)-(\d+)-/;

export interface ScratchOwner {
  space: string;
  pid: number;
  /** Start time of the process (clock ticks since boot), 0 when unknown. */
  start: number;
}

/** State and start time of a process from /proc (Linux), or null. */
function procStat(pid: number): { state: string; start: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ...`: comm may hold spaces and parentheses, so fields count from the last `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return { state: fields[0] ?? '', start: Number.isSafeInteger(start) ? start : 0 };
  } catch {
    return null;
  }
}

let ownSpace: string | undefined;

/** Which processes a pid refers to: the pid namespace on Linux, else this host. */
export function pidSpace(): string {
  if (ownSpace === undefined) {
    let ns: string | null = null;
    try {
      ns = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
    } catch {
      // not Linux, or /proc not mounted
    }
    ownSpace = ns ?? `h${createHash('sha256').update(os.hostname()).digest('hex').slice(0, 12)}`;
  }
  return ownSpace;
}

/** The owner a scratch directory of process `pid` names (this pid space). */
export function ownerOf(pid: number): ScratchOwner {
  return { space: pidSpace(), pid, start: procStat(pid)?.start ?? 0 };
}

export function scratchName(owner: ScratchOwner, kind: string): string {
  const safeKind = kind.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 40) || 'tmp';
  return `${SCRATCH_PREFIX}${owner.space}-${owner.pid}-${owner.start}-${safeKind}-`;
}

/** The owner a directory name records, or null for a name that is not one of ours. */
export function parseScratchName(name: string): ScratchOwner | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const pid = Number(m[2]);
  const start = Number(m[3]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !Number.isSafeInteger(start)) return null;
  return { space: m[1]!, pid, start };
}

/** Whether the process that made a scratch directory is certainly gone. */
export function ownerIsGone(owner: ScratchOwner): boolean {
  if (owner.space !== pidSpace()) return false; // another container's pids: not ours to judge
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // ESRCH: no such process. EPERM: it exists (another user's).
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const now = procStat(owner.pid);
  if (now === null) return false;
  if (now.state === 'Z' || now.state === 'X') return true; // exited, not yet reaped
  return owner.start !== 0 && now.start !== 0 && now.start !== owner.start;
}

/**
 * Removes the scratch directories in `tmp` whose owner is gone; returns
 * their paths. Anything else there (other names, files, symbolic links,
 * other users' directories, live owners') is left alone.
 */
export async function sweepScratch(tmp: string = os.tmpdir()): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(tmp);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const removed: string[] = [];
  for (const name of names) {
    const owner = parseScratchName(name);
    if (!owner || !ownerIsGone(owner)) continue;
    const dir = path.join(tmp, name);
    const stat = await fs.lstat(dir).catch(() => null);
    if (!stat || !stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
    try {
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // best effort: the next command tries again
    }
  }
  return removed;
}

const swept = new Map<string, Promise<string[]>>();

/**
 * A new scratch directory of this process in `tmp` (the system temp dir),
 * after sweeping, once per process, what dead ones left there.
 */
export async function makeScratch(kind: string, tmp: string = os.tmpdir()): Promise<string> {
  let sweep = swept.get(tmp);
  if (!sweep) swept.set(tmp, (sweep = sweepScratch(tmp)));
  await sweep;
  diskFullPoint('scratch', tmp);
  return fs.mkdtemp(path.join(tmp, scratchName(ownerOf(process.pid), kind)));
}

/** Removes a scratch directory (a command's own, when it ends). */
export async function removeScratch(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
}
