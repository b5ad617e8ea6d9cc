import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Person } from './types.js';

/**
 * Reflog entries as native git writes them (`.git/logs/<ref>`, one line per
 * update: `<old> <new> <name> <<email>> <seconds> <±hhmm>\t<message>`).
 * isomorphic-git writes none (docs/git-model.md), so a ref we move with it
 * and that the user may want back (`git tune undo`) gets its entry here,
 * and `git reflog` / `<branch>@{1}` see it.
 */
export interface ReflogEntry {
  old: string;
  new: string;
  /** Seconds since the epoch, as git wrote it. */
  time: number;
  message: string;
}

const REFLOG_LINE = /^([0-9a-f]{40}) ([0-9a-f]{40}) .*> (\d+) [+-]\d{4}(?:\t(.*))?$/;

/** A reflog file's entries, oldest first; lines that do not parse are skipped. */
export function parseReflog(text: string): ReflogEntry[] {
  const out: ReflogEntry[] = [];
  for (const line of text.split('\n')) {
    const m = REFLOG_LINE.exec(line);
    if (m) out.push({ old: m[1]!, new: m[2]!, time: Number(m[3]), message: m[4] ?? '' });
  }
  return out;
}

/** `ref`'s reflog, oldest first: empty when it has none (isomorphic-git moved it, or reflogs are off). */
export async function readReflog(gitdir: string, ref: string): Promise<ReflogEntry[]> {
  return parseReflog(await fs.readFile(path.join(gitdir, 'logs', ref), 'utf8').catch(() => ''));
}

const ZERO = '0'.repeat(40);

function formatZone(offsetMinutes: number): string {
  // Person.timezoneOffset counts as isomorphic-git does: UTC+2 is -120.
  const east = -offsetMinutes;
  const sign = east < 0 ? '-' : '+';
  const abs = Math.abs(east);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

export function formatReflogLine(old: string | null, oid: string | null, who: Person, message: string): string {
  const clean = message.replace(/[\r\n\t]+/g, ' ').trim();
  return `${old ?? ZERO} ${oid ?? ZERO} ${who.name} <${who.email}> ${who.timestamp} ${formatZone(who.timezoneOffset)}\t${clean}\n`;
}

/** Appends one entry to `ref`'s reflog (creating it, as git does for branches with core.logAllRefUpdates). */
export async function appendReflog(gitdir: string, ref: string, old: string | null, oid: string | null, who: Person, message: string): Promise<void> {
  const file = path.join(gitdir, 'logs', ref);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.appendFile(file, formatReflogLine(old, oid, who, message));
}

/** The newest entry of `ref`'s reflog, or null when it has none. */
export async function lastReflogEntry(gitdir: string, ref: string): Promise<ReflogEntry | null> {
  return (await readReflog(gitdir, ref)).at(-1) ?? null;
}
