import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { holderAlive, processStart } from './lock-owner.js';

/**
 * Temporary files written beside the file they replace (a write is made to
 * `<file>.tmp-<pid>-<start>-<random>`, then renamed over `<file>`): a write
 * that fails removes its own; a process that dies mid-write (`kill -9`, a
 * power cut) cannot, so the next command removes those whose writer is gone
 * (`removeDeadTemps`). The name records the writer's pid and start time
 * (/proc, `0` where unknown) so a reused pid is not mistaken for it; a live
 * writer's files are left alone. Names of older versions
 * (`<file>.tmp-<pid>-<random>`) are judged by the pid alone.
 */
const TEMP = /\.tmp-(\d+)-(?:(\d+)-)?[0-9a-f]{8}$/;

let ownStart: string | undefined;

/** A fresh temporary name beside `file`, owned by this process. */
export function tempFileFor(file: string): string {
  ownStart ??= processStart(process.pid) ?? '0';
  return `${file}.tmp-${process.pid}-${ownStart}-${randomBytes(4).toString('hex')}`;
}

/** The writer a temporary file's name records, or null for a name that is not one. */
export function tempOwner(name: string): { pid: number; start: string | null } | null {
  const m = TEMP.exec(name);
  if (!m) return null;
  const pid = Number(m[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, start: m[2] === undefined || m[2] === '0' ? null : m[2] };
}

async function tempsUnder(dir: string, recursive: boolean, out: string[]): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) await tempsUnder(full, true, out);
    } else if (e.isFile() && TEMP.test(e.name)) out.push(full);
  }
}

/**
 * Removes the temporary files a dead process left in `dirs` (each walked
 * down when `recursive`); returns their paths. Files of a live process, or
 * of one that cannot be judged, stay.
 */
export async function removeDeadTemps(dirs: ReadonlyArray<{ dir: string; recursive: boolean }>): Promise<string[]> {
  const found: string[] = [];
  for (const { dir, recursive } of dirs) await tempsUnder(dir, recursive, found);
  const removed: string[] = [];
  for (const file of found) {
    const owner = tempOwner(path.basename(file));
    if (!owner || owner.pid === process.pid) continue;
    if (await holderAlive({ pid: owner.pid, start: owner.start, host: os.hostname(), command: '', since: '' })) continue;
    await fs.rm(file, { force: true }).then(() => removed.push(file), () => undefined);
  }
  return removed;
}
