import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { holderAlive, processStart, procStat, type LockHolder } from '../git/lock-owner.js';
import { tempFileFor } from '../git/temp-files.js';
import { recordGroups } from './process.js';

/**
 * Runners, judges, editors and checks run in process groups of their own
 * (`detached`), so a terminal's Ctrl-C reaches git-tune only and git-tune
 * decides what they get. The other side: they outlive a git-tune that is
 * killed (SIGKILL of its group, the OOM killer, a closed terminal) and would
 * go on writing into a tree the next command owns. So every group is
 * recorded while it runs, one file per group in `.git/tune/<name>/groups/`
 * (beside the driver lock): its pgid, the leader's start time and who
 * started it. The next command that writes ends the groups whose starter is
 * gone, before it writes anything.
 */
export interface GroupRecord {
  pgid: number;
  /** The leader's start time (/proc/<pid>/stat field 22), so a reused pid is never killed. */
  start: string | null;
  owner: LockHolder;
}

const groupFile = (dir: string, pgid: number) => path.join(dir, `${pgid}.json`);

/**
 * Records, from now on, every group this process starts in `dir` (written
 * synchronously, as the group starts: a kill right after finds it recorded).
 */
export function recordGroupsIn(dir: string, owner: LockHolder): void {
  recordGroups({
    started(pgid) {
      try {
        mkdirSync(dir, { recursive: true });
        const record: GroupRecord = { pgid, start: processStart(pgid), owner };
        // Whole or not at all: a record cut short by a kill names a group no later command could end.
        const file = groupFile(dir, pgid);
        const tmp = tempFileFor(file);
        writeFileSync(tmp, JSON.stringify(record));
        renameSync(tmp, file);
      } catch {
        /* unrecorded: it is still killed on a timeout or a second Ctrl-C by this process */
      }
    },
    ended(pgid) {
      rmSync(groupFile(dir, pgid), { force: true });
    },
  });
}

const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Whether a process of the group still runs. Killed, its processes are
 * zombies until the init that adopted them reaps them (seconds, on some
 * machines): they run and write nothing, so they are not waited for. Where
 * /proc cannot say, any member counts.
 */
function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) return false;
  const leader = procStat(pgid);
  if (leader !== null && !leader.zombie) return true;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return true;
  }
  return names.some((name) => {
    if (!/^\d+$/.test(name)) return false;
    const stat = procStat(name);
    return stat !== null && stat.pgrp === pgid && !stat.zombie;
  });
}

/**
 * Ends the groups recorded in `dir` whose starter is gone (a git-tune killed
 * while they ran), waiting up to `waitMs` for them to be gone; returns a line
 * per group ended. A group whose leader's pid now belongs to another process
 * (another start time) is not ours: only its record goes. A live starter's
 * groups are its own business.
 */
export async function endOrphanGroups(dir: string, waitMs = 2000): Promise<string[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const ended: number[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    let record: GroupRecord;
    try {
      record = JSON.parse(await fs.readFile(file, 'utf8')) as GroupRecord;
    } catch {
      await fs.rm(file, { force: true }); // cut short as it was written: its starter died at that instant
      continue;
    }
    if (typeof record.pgid !== 'number' || record.pgid <= 1) {
      await fs.rm(file, { force: true });
      continue;
    }
    if (record.owner.host !== os.hostname() || (await holderAlive(record.owner))) continue;
    const now = processStart(record.pgid);
    // Leader gone (its children may still run in the group: a pid is never reused while its group lives), a zombie, or the very leader.
    const ours = now === null || now === 'zombie' || record.start === null || now === record.start;
    if (ours && groupAlive(record.pgid)) {
      try {
        process.kill(-record.pgid, 'SIGKILL');
        ended.push(record.pgid);
      } catch {
        /* gone meanwhile */
      }
    }
    await fs.rm(file, { force: true });
  }
  const deadline = Date.now() + waitMs;
  while (ended.some(groupRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return ended.map((pgid) => `process group ${pgid}`);
}
