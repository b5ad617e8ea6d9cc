import { statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import { EXIT, TuneError } from '../errors.js';

/**
 * A full disk is a fault of the machine, not a bug: wherever a write fails
 * with ENOSPC or EDQUOT (our own writes, isomorphic-git's, a `git` child
 * that says "No space left on device", a spawn), the command ends with exit
 * 7 (`space`) and `disk-full`, naming the file system that is full and what
 * to do. docs/reliability.md ("A full disk") says what is kept.
 */
const SPACE_CODES = new Set(['ENOSPC', 'EDQUOT']);
const SPACE_WORDS = /\bENOSPC\b|\bEDQUOT\b|no space left on device|disk quota exceeded/i;
const QUOTA_WORDS = /\bEDQUOT\b|disk quota exceeded/i;

interface SpaceFault {
  quota: boolean;
  /** The file the write was for, when the error says. */
  file: string | null;
}

/** The ENOSPC or EDQUOT somewhere in `err` (its causes, the errors it groups, its message), or null. */
export function spaceFault(err: unknown, depth = 0): SpaceFault | null {
  if (err === null || typeof err !== 'object' || depth > 8) return null;
  const e = err as NodeJS.ErrnoException & { errors?: unknown[]; data?: unknown };
  if (typeof e.code === 'string' && SPACE_CODES.has(e.code)) return { quota: e.code === 'EDQUOT', file: typeof e.path === 'string' ? e.path : null };
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const found = spaceFault(inner, depth + 1);
    if (found) return found;
  }
  const message = typeof e.message === 'string' ? e.message : '';
  if (!SPACE_WORDS.test(message)) return null;
  // Native git names the file it could not write: "unable to write file X", "unable to create 'X'".
  const named = /(?:write|create|open)(?: (?:file|temporary file))? '?([^':\s]*\/[^':]*?)'?: (?:no space|disk quota)/i.exec(message)
    ?? /, \w+ '([^']+)'/.exec(message);
  return { quota: QUOTA_WORDS.test(message), file: named?.[1] ?? null };
}

/** Whether `err` is a full disk (ENOSPC) or an exceeded quota (EDQUOT), however wrapped. */
export const isSpaceError = (err: unknown): boolean => spaceFault(err) !== null;

/** The nearest existing directory at or above `file`. */
function existingDir(file: string): string {
  let dir = path.resolve(file);
  for (;;) {
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // not there (yet): its parent
    }
    const up = path.dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
}

/** The mount point of the file system `dir` is on: the highest directory above it on the same device. */
export function mountPointOf(dir: string): string {
  let at = existingDir(dir);
  const dev = statSync(at).dev;
  for (;;) {
    const up = path.dirname(at);
    if (up === at) return at;
    try {
      if (statSync(up).dev !== dev) return at;
    } catch {
      return at;
    }
    at = up;
  }
}

const size = (bytes: number): string => {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${u === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[u]}`;
};

/**
 * The `disk-full` error (exit 7) for a write that failed with ENOSPC or
 * EDQUOT, or null when `err` is something else. `where` is the path to name
 * when the error does not say which file it was writing (the repository).
 */
export function diskFullError(err: unknown, where: string = process.cwd(), details: string[] = []): TuneError | null {
  if (err instanceof TuneError && err.code === 'disk-full') return err;
  if (err instanceof TuneError && err.exitCode !== EXIT.unexpected) return null;
  const fault = spaceFault(err);
  if (!fault) return null;
  const named = fault.file && path.isAbsolute(fault.file) ? fault.file : fault.file ? path.resolve(where, fault.file) : where;
  // The file the write was for, not the temporary file it went through (src/git/temp-files.ts).
  const file = named.replace(/\.tmp-\d+-(?:\d+-)?[0-9a-f]{8}$/, '');
  let mount = '/';
  let free = '';
  try {
    mount = mountPointOf(file);
    const fs = statfsSync(existingDir(file));
    free = ` (${size(Number(fs.bavail) * Number(fs.bsize))} free of ${size(Number(fs.blocks) * Number(fs.bsize))})`;
  } catch {
    mount = existingDir(file);
  }
  const what = fault.quota ? `the disk quota on ${mount} is exceeded` : `no space left on ${mount}`;
  return new TuneError('disk-full', `${what}${free}: ${fault.file ? `could not write ${file}` : `a write in ${file} failed`}`, {
    exitCode: EXIT.space,
    hint: `free space on ${mount}, then: git tune next`,
    details,
    cause: err,
  });
}
