import { randomBytes } from 'node:crypto';
import { readFileSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { singleQuoted } from '../core/argv.js';
import { TuneError, EXIT } from '../errors.js';
import { localPath, localRoot, LOCKS_DIR } from '../core/paths.js';

/**
 * Who holds a lock, so a lock left by a process that died (`kill -9`, a power
 * cut) does not block every later command, and a lock held by a live
 * git-tune is never removed.
 *
 * - git's own lock files (`index.lock`, `<ref>.lock`, `packed-refs.lock`)
 *   stay exactly as git makes them. When git-tune takes one, it writes a
 *   note beside it in `.git/tune/.locks/` (pid, process start time, host, the
 *   lock file's inode). A later command removes the lock only when the note
 *   still describes that very file and its process is gone; a lock without a
 *   note (native git's) is reported with the `rm` that frees it.
 * - The tool lock `.git/tune/<name>/lock` is git-tune's own: one command at a
 *   time writes steps of a tuning (`git tune run` holds it for the whole
 *   run). Its content is the holder; a dead holder's lock is taken over.
 * - The driver lock `.git/tune/<name>/driver`: `git tune auto` holds it for
 *   its whole life, so no other process writes steps of the tuning it drives
 *   (the tool lock alone is taken per step, and two autos would interleave).
 */
export interface LockHolder {
  pid: number;
  /** The process start time (Linux: /proc/<pid>/stat field 22), so a reused pid is not mistaken for the holder. */
  start: string | null;
  host: string;
  command: string;
  since: string;
  /**
   * The dead holders whose tool or driver locks this holder took over (and
   * those they had taken over), oldest first: a git lock one of them left is
   * still accounted for when this holder is killed too before it meets it.
   */
  tookOver?: LockHolder[];
}

/**
 * Start time of a process (Linux: /proc/<pid>/stat field 22, clock ticks
 * since boot), or null where /proc cannot say; 'zombie' for a process that
 * has exited. Read synchronously: one small file, and temporary file names
 * (src/git/temp-files.ts) need it where nothing awaits.
 */
export function processStart(pid: number): string | null {
  const stat = procStat(pid);
  if (stat === null) return null;
  return stat.zombie ? 'zombie' : stat.start;
}

/**
 * A process as /proc/<pid>/stat has it: exited (a zombie, not reaped yet),
 * its process group, its start time; null where /proc cannot say.
 */
export function procStat(pid: number | string): { zombie: boolean; pgrp: number; start: string | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so fields count from the last `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { zombie: fields[0] === 'Z' || fields[0] === 'X', pgrp: Number(fields[2]), start: fields[19] ?? null };
  } catch {
    return null;
  }
}

let ownStart: string | null | undefined;

export async function currentHolder(command: string): Promise<LockHolder> {
  if (ownStart === undefined) ownStart = processStart(process.pid);
  return { pid: process.pid, start: ownStart, host: os.hostname(), command, since: new Date().toISOString() };
}

/** Whether the holder may still be running. A holder on another host cannot be checked: it counts as alive. */
export async function holderAlive(holder: LockHolder): Promise<boolean> {
  if (holder.host !== os.hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = processStart(holder.pid);
  if (start === 'zombie') return false;
  return holder.start === null || start === null || start === holder.start;
}

/** A lock file's or note's JSON object, or null when it does not parse (cut short, being written, not ours). */
function parseRecord(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** One holder, without the holders it took over. */
function oneHolder(record: unknown): LockHolder | null {
  const v = (typeof record === 'object' && record !== null ? record : {}) as Partial<LockHolder>;
  return typeof v.pid === 'number' && typeof v.host === 'string'
    ? { pid: v.pid, start: v.start ?? null, host: v.host, command: v.command ?? 'git tune', since: v.since ?? '' }
    : null;
}

function holderOf(record: Record<string, unknown> | null): LockHolder | null {
  const holder = oneHolder(record);
  const tookOver = Array.isArray(record?.tookOver) ? record.tookOver.map(oneHolder).filter((h): h is LockHolder => h !== null) : [];
  return holder && tookOver.length > 0 ? { ...holder, tookOver } : holder;
}

const parseHolder = (text: string): LockHolder | null => holderOf(parseRecord(text));

const describe = (h: LockHolder) => `${h.command} (pid ${h.pid}${h.host !== os.hostname() ? ` on ${h.host}` : ''}${h.since ? `, since ${h.since.slice(11, 19)}` : ''})`;

// ---------------------------------------------------------------------------
// notes beside git's lock files

const noteFile = (gitdir: string, lockPath: string) =>
  path.join(localRoot(gitdir), LOCKS_DIR, `${path.relative(gitdir, lockPath).split(path.sep).join('%')}.owner`);

/** Records that this process holds `lockPath` (just created by it). */
export async function noteLockOwner(gitdir: string, lockPath: string, command = 'git tune'): Promise<void> {
  const st = await fs.stat(lockPath);
  const file = noteFile(gitdir, lockPath);
  await fs.mkdir(path.dirname(file), { recursive: true });
  // Renamed into place: a command reading it meanwhile sees no note or the whole note, never half of one.
  const holder = await currentHolder(command);
  // Named as src/git/temp-files.ts names them, so one a killed process leaves is swept.
  const tmp = `${file}.tmp-${process.pid}-${holder.start ?? 0}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.writeFile(tmp, JSON.stringify({ ...holder, ino: st.ino, mtimeMs: st.mtimeMs }));
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Forgets the note; called before the lock file goes (a note must never outlive its lock). */
export async function forgetLockOwner(gitdir: string, lockPath: string): Promise<void> {
  await fs.rm(noteFile(gitdir, lockPath), { force: true });
}

/**
 * Who holds an existing git lock file: `dead` (a git-tune process that is
 * gone: safe to remove), `alive` (a running git-tune), or `unknown` (no note:
 * native git, or a note about another file).
 */
export async function gitLockHolder(gitdir: string, lockPath: string): Promise<{ state: 'dead' | 'alive' | 'unknown'; holder: LockHolder | null }> {
  const st = await fs.stat(lockPath).catch(() => null);
  if (!st) return { state: 'unknown', holder: null };
  const text = await fs.readFile(noteFile(gitdir, lockPath), 'utf8').catch(() => null);
  // A note that does not parse (cut short, or written by an older version mid-write) is no note: the holder is unknown, never dead.
  const note = text === null ? null : parseRecord(text);
  const holder = holderOf(note);
  if (!note || !holder || note.ino !== st.ino || note.mtimeMs !== st.mtimeMs) return { state: 'unknown', holder: null };
  return { state: (await holderAlive(holder)) ? 'alive' : 'dead', holder };
}

/** Removes a git lock file its dead git-tune holder left; true when it did. */
export async function removeDeadGitLock(gitdir: string, lockPath: string): Promise<boolean> {
  const { state } = await gitLockHolder(gitdir, lockPath);
  if (state !== 'dead') return false;
  await forgetLockOwner(gitdir, lockPath);
  await fs.rm(lockPath, { force: true });
  return true;
}

/**
 * Removes every git lock file a dead git-tune left (and notes whose lock is
 * gone), so native `git commit` is not blocked by it either; returns them.
 */
export async function removeDeadGitLocks(gitdir: string): Promise<string[]> {
  const dir = path.join(localRoot(gitdir), LOCKS_DIR);
  const removed: string[] = [];
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.owner')) continue;
    const lockPath = path.join(gitdir, ...name.slice(0, -'.owner'.length).split('%'));
    if (!(await fs.stat(lockPath).catch(() => null))) {
      await fs.rm(path.join(dir, name), { force: true });
      continue;
    }
    if (await removeDeadGitLock(gitdir, lockPath)) removed.push(path.relative(gitdir, lockPath));
  }
  return removed;
}

/** The error for a git lock file that stays: who holds it, and the fix. */
export async function gitLockError(gitdir: string, lockPath: string, what: string): Promise<TuneError> {
  const { state, holder } = await gitLockHolder(gitdir, lockPath);
  const tool = state === 'alive' ? holder : await liveToolHolder(gitdir);
  if (tool) {
    return new TuneError('ref-locked', `${what} is locked by ${describe(tool)}`, {
      exitCode: EXIT.conflict,
      hint: `wait for it to finish, then try again (or stop it: kill ${tool.pid})`,
    });
  }
  return new TuneError('ref-locked', `${what} is locked by another git process (${lockPath} exists)`, {
    exitCode: EXIT.conflict,
    hint: `wait for the other command to finish; if none is running, remove the stale lock: rm ${singleQuoted(lockPath)}`,
  });
}

// ---------------------------------------------------------------------------
// the tool lock: .git/tune/<name>/lock

const toolLockPath = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'lock');
const held = new Map<string, number>();

/** A live git-tune holding any tuning's tool lock in this repository, if one does. */
async function liveToolHolder(gitdir: string): Promise<LockHolder | null> {
  const names = await fs.readdir(localRoot(gitdir)).catch(() => [] as string[]);
  for (const name of names) {
    const text = await fs.readFile(toolLockPath(gitdir, name), 'utf8').catch(() => null);
    const holder = text === null ? null : parseHolder(text);
    if (holder && holder.pid !== process.pid && (await holderAlive(holder))) return holder;
  }
  return null;
}

/**
 * Takes over a lock whose holder is gone. It is moved aside first and checked
 * again, so of two commands taking over the same dead lock, one does; a lock
 * a live command took meanwhile is put back.
 */
async function takeOverStale(file: string, stale: LockHolder | null): Promise<void> {
  if (stale) rememberDead(stale);
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(file, aside);
  } catch {
    return; // gone already: someone else took it over
  }
  const moved = parseHolder(await fs.readFile(aside, 'utf8').catch(() => ''));
  if (moved && (!stale || moved.pid !== stale.pid || moved.since !== stale.since)) {
    await fs.link(aside, file).catch(() => undefined);
  }
  await fs.rm(aside, { force: true });
}

/**
 * The dead holders of tool and driver locks this process took over, with
 * those they had taken over, oldest first: the git locks they left are
 * theirs. Written into this process's own tool and driver locks
 * (`tookOver`), so the evidence outlives this process when it is killed in
 * turn before it meets such a lock (a kill, then another before the next
 * step writes the branch). The newest DEAD_KEPT are kept: a longer chain of
 * kills that never reached a write is not worth a growing lock file, and
 * forgetting errs on the safe side (the lock stays, reported with its `rm`).
 */
const deadHolders: LockHolder[] = [];
const DEAD_KEPT = 32;

function rememberDead(stale: LockHolder): void {
  const start = processStart(process.pid);
  for (const h of [...(stale.tookOver ?? []), stale]) {
    const one = oneHolder(h)!;
    // A holder that is this very process (same pid, same start) is not dead; one with our pid and another start is.
    if (one.pid === process.pid && one.host === os.hostname() && one.start === start) continue;
    const key = JSON.stringify(one);
    const at = deadHolders.findIndex((d) => JSON.stringify(d) === key);
    if (at >= 0) deadHolders.splice(at, 1);
    deadHolders.push(one);
  }
  if (deadHolders.length > DEAD_KEPT) deadHolders.splice(0, deadHolders.length - DEAD_KEPT);
}

/** This process as the holder of a tool or driver lock it is taking now, naming the dead holders it took over. */
async function lockRecord(command: string): Promise<LockHolder> {
  const me = await currentHolder(command);
  return deadHolders.length > 0 ? { ...me, tookOver: [...deadHolders] } : me;
}

const isGit = (pid: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'git';
  } catch {
    return false;
  }
};

const parentOf = (pid: string): number | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
};

/** A running `git` whose working directory is in this repository (it may hold the lock, as a `git commit` waiting for its editor does). */
async function liveGitIn(gitdir: string): Promise<number | null> {
  const roots = [path.resolve(gitdir), path.dirname(path.resolve(gitdir))];
  for (const pid of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid) || !isGit(pid) || parentOf(pid) === process.pid) continue; // our own git (a cat-file --batch) holds no lock it left
    const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => null);
    if (cwd && roots.some((r) => cwd === r || cwd.startsWith(`${r}${path.sep}`))) return Number(pid);
  }
  return null;
}

/** Start of this process, as wall-clock ms. */
const startedAtMs = Date.now() - process.uptime() * 1000;

/**
 * A git lock file with no note (a git-tune killed between creating it and
 * noting it, or a `git` it ran, killed with it) that a dead git-tune provably
 * left: the holder of a tool or driver lock of this repository is gone (on
 * disk, or taken over by this process), the lock file was made while it held
 * that lock and before this process started, no live git-tune holds a tool
 * lock here and no `git` runs in this repository. Returns the dead holder,
 * or null when the lock may be someone's.
 */
export async function deadToolLeft(gitdir: string, lockPath: string): Promise<LockHolder | null> {
  const st = await fs.stat(lockPath).catch(() => null);
  if (!st || st.mtimeMs >= startedAtMs) return null;
  const dead = [...deadHolders];
  for (const name of await fs.readdir(localRoot(gitdir)).catch(() => [] as string[])) {
    for (const file of [toolLockPath(gitdir, name), localPath(gitdir, name, 'driver')]) {
      const holder = parseHolder(await fs.readFile(file, 'utf8').catch(() => ''));
      if (!holder || isThisProcess(holder)) continue;
      if (await holderAlive(holder)) {
        // A live git-tune of this repository may hold it.
        if (file.endsWith(`${path.sep}lock`)) return null;
        continue;
      }
      dead.push(oneHolder(holder)!, ...(holder.tookOver ?? []));
    }
  }
  // Its holder's lock dates from before the git lock (a second of slack for clocks that tick coarsely); of several, the latest to start.
  const left = dead
    .filter((h) => h.host === os.hostname() && h.since !== '' && Date.parse(h.since) <= st.mtimeMs + 1000)
    .sort((a, b) => Date.parse(b.since) - Date.parse(a.since))[0];
  if (!left) return null;
  if ((await liveToolHolder(gitdir)) !== null || (await liveGitIn(gitdir)) !== null) return null;
  return left;
}

/** The tool lock's holder when it is someone else (alive or dead), or null when free. */
export async function toolLockHolder(gitdir: string, tuning: string): Promise<LockHolder | null> {
  const text = await fs.readFile(toolLockPath(gitdir, tuning), 'utf8').catch(() => null);
  return text === null ? null : parseHolder(text);
}

/**
 * Runs `fn` holding tuning `tuning`'s tool lock; re-entrant in one process
 * (`git tune auto` runs commands in-process, `run` commits while it holds
 * it). A busy lock is waited for up to `waitMs`, then reported (exit 4) with
 * its holder; a dead holder's lock is taken over.
 */
export async function withToolLock<T>(gitdir: string, tuning: string, command: string, fn: () => Promise<T>, waitMs = 3000): Promise<T> {
  const file = toolLockPath(gitdir, tuning);
  const depth = held.get(file) ?? 0;
  if (depth === 0) {
    await refuseWhileDriven(gitdir, tuning);
    const deadline = Date.now() + waitMs;
    for (;;) {
      // Made at each try: a holder taken over just now is named in it (tookOver).
      // Whole or not at all: a lock cut short by a kill (created empty, then killed) named no holder and was never taken over.
      if (await createWhole(file, await lockRecord(command))) {
        // Checked again once held: auto takes its driver lock before it waits for this one, so of a writer and
        // an auto starting together, one sees the other (the writer here, or auto waiting for this step to end).
        const driver = await otherDriver(gitdir, tuning);
        if (!driver) break;
        await fs.rm(file, { force: true });
        throw driverError(tuning, driver);
      }
      const holder = await toolLockHolder(gitdir, tuning);
      // No holder to read: gone meanwhile, or a lock an older git-tune left cut short; either way, not held.
      if (!holder || !(await holderAlive(holder))) {
        await takeOverStale(file, holder);
        continue;
      }
      if (Date.now() >= deadline) {
        throw new TuneError('ref-locked', `tuning ${tuning} is busy: ${holder ? describe(holder) : 'another git-tune command'} is writing its steps`, {
          exitCode: EXIT.conflict,
          hint: holder ? `wait for it to finish, then: git tune next   (or stop it: kill ${holder.pid})` : 'git tune next   # once it is done',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 25 + Math.floor(Math.random() * 50)));
    }
  }
  held.set(file, depth + 1);
  try {
    return await fn();
  } finally {
    const left = (held.get(file) ?? 1) - 1;
    if (left > 0) held.set(file, left);
    else {
      held.delete(file);
      await fs.rm(file, { force: true });
    }
  }
}

/** Like withToolLock, but returns null at once when a live command holds the lock or drives the tuning. */
export async function tryToolLock<T>(gitdir: string, tuning: string, command: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await withToolLock(gitdir, tuning, command, fn, 0);
  } catch (err) {
    if (err instanceof TuneError && (err.code === 'ref-locked' || err.code === 'driver-running')) return null;
    throw err;
  }
}

// ---------------------------------------------------------------------------
// the driver lock: .git/tune/<name>/driver

/**
 * One driver per tuning. `git tune auto` holds `.git/tune/<name>/driver`
 * (the holder record of the tool lock) from before its first step until it
 * ends, so a second auto, or any other command that writes steps of that
 * tuning, is refused at once (exit 4 `driver-running`, naming the driver, for
 * how long it has run, and `git tune stop`) instead of interleaving its steps
 * with the driver's. The driver's own steps, done in its process, pass; read
 * commands never look at it; a driver that died is taken over as a dead tool
 * lock holder is.
 */
const driverLockPath = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'driver');
/** The driver locks this process holds, each with how many times (auto --all and --fleet take every one, then each driver again). */
const driving = new Map<string, number>();

/** How long, as a person says it: "12 s", "3 min", "2 h 5 min". */
export function howLong(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''}`;
}

const isThisProcess = (h: LockHolder) => h.pid === process.pid && h.host === os.hostname();

/** The live process other than this one that drives `tuning`, or null (none, a dead one, or this process). */
export async function otherDriver(gitdir: string, tuning: string): Promise<LockHolder | null> {
  const file = driverLockPath(gitdir, tuning);
  if (driving.has(file)) return null;
  const text = await fs.readFile(file, 'utf8').catch(() => null);
  const holder = text === null ? null : parseHolder(text);
  if (!holder || isThisProcess(holder)) return null;
  return (await holderAlive(holder)) ? holder : null;
}

/**
 * The refusal while another process drives the tuning: who, for how long,
 * and the stop that frees it (`--fleet` for a fleet's driver; `--tuning`
 * when the command named a tuning that is not the checked-out one).
 */
export function driverError(tuning: string, driver: LockHolder, named = true): TuneError {
  const since = Date.parse(driver.since);
  const ran = Number.isNaN(since) ? '' : `, for ${howLong(Date.now() - since)}`;
  const fleet = /--fleet[ =](\S+)/.exec(driver.command)?.[1];
  const stop = fleet ? `git tune stop --fleet ${fleet}` : named ? `git tune stop --tuning ${tuning}` : 'git tune stop';
  return new TuneError('driver-running',
    `auto is already driving tuning ${tuning}: ${driver.command} (pid ${driver.pid}${driver.host !== os.hostname() ? ` on ${driver.host}` : ''}${ran}) writes its steps until it ends`, {
      exitCode: EXIT.conflict,
      hint: `${stop}   # it stops at the next safe point; or wait for it to end`,
    });
}

/** Refuses (exit 4 `driver-running`) when another live process drives `tuning`. */
export async function refuseWhileDriven(gitdir: string, tuning: string, named = true): Promise<void> {
  const driver = await otherDriver(gitdir, tuning);
  if (driver) throw driverError(tuning, driver, named);
}

/** Creates `file` holding `holder`, whole or not at all (linked into place, so no reader sees it empty); false when it exists. */
async function createWhole(file: string, holder: LockHolder): Promise<boolean> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  // Named as src/git/temp-files.ts names them, so one a killed process leaves is swept.
  const tmp = `${file}.tmp-${process.pid}-${holder.start ?? 0}-${randomBytes(4).toString('hex')}`;
  await fs.writeFile(tmp, JSON.stringify(holder));
  try {
    await fs.link(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

async function takeDriverLock(gitdir: string, tuning: string, command: string, named: boolean): Promise<string> {
  const file = driverLockPath(gitdir, tuning);
  const depth = driving.get(file) ?? 0;
  if (depth === 0) {
    for (let tries = 0; !(await createWhole(file, await lockRecord(command))); tries++) {
      if (tries >= 10) {
        throw new TuneError('ref-locked', `the driver lock of tuning ${tuning} (${file}) cannot be taken over`, {
          exitCode: EXIT.conflict, hint: `rm -r ${singleQuoted(file)}   # when no git tune auto runs here`,
        });
      }
      const text = await fs.readFile(file, 'utf8').catch(() => null);
      if (text === null) continue; // ended meanwhile
      const holder = parseHolder(text);
      if (holder && !isThisProcess(holder) && (await holderAlive(holder))) throw driverError(tuning, holder, named);
      await takeOverStale(file, holder);
    }
  }
  driving.set(file, depth + 1);
  return file;
}

async function releaseDriverLock(file: string): Promise<void> {
  const left = (driving.get(file) ?? 1) - 1;
  if (left > 0) {
    driving.set(file, left);
    return;
  }
  driving.delete(file);
  const holder = parseHolder(await fs.readFile(file, 'utf8').catch(() => ''));
  if (holder && isThisProcess(holder)) await fs.rm(file, { force: true });
}

/**
 * Runs `fn` driving every tuning of `tunings` (taken in order; all of them or
 * none): a live driver of any is refused at once. Then waits, as a step would,
 * for a command that was already writing a step of each to end, so none of
 * its steps lands among the driver's.
 */
export async function withDriverLock<T>(gitdir: string, tunings: readonly string[], command: string, fn: () => Promise<T>, named = true): Promise<T> {
  const taken: string[] = [];
  try {
    for (const tuning of tunings) {
      taken.push(await takeDriverLock(gitdir, tuning, command, named));
      await withToolLock(gitdir, tuning, command, async () => undefined);
    }
    return await fn();
  } finally {
    for (const file of taken.reverse()) await releaseDriverLock(file);
  }
}
