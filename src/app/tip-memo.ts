import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writevSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoPath } from '../core/paths.js';
import { diskFullPoint } from '../faults/enospc.js';
import { tempFileFor } from '../git/temp-files.js';

/**
 * What is kept per branch tip in `.git/tune/<name>/cache/` beside the
 * history (src/app/cache.ts): the build that folds and decides, and the
 * results of pure decisions on a tip (`memo.json`: JSON, whose parser every
 * start has, where node:v8's serializer costs one ~2 ms to load). A module
 * of its own, light to load: the warm `git tune next` (src/app/kept-next.ts)
 * reads its answer here without loading the fold.
 */

/** The history cache's format; part of the build's id, so the memo follows it. */
export const FORMAT = 5;

/** The keys of the kept decisions: `next`'s answer (src/app/decide.ts), read back by the warm `next` (src/app/kept-next.ts). */
export const MEMO = { next: 'next' } as const;

/**
 * Set by the bundler (scripts/bundle.mjs) in the shipped CLI: a hash of the
 * bundle's own text, so a rebuild that changes any of its code changes it.
 */
declare const GIT_TUNE_BUILD_ID: string | undefined;

let codeHash: string | null = null;
/**
 * The build that folds and decides: an entry made by another build (an
 * upgrade, a rebuild) is not reused. The shipped CLI is one bundle whose id
 * the bundler wrote into it (no file is read for it). Run module by module
 * (dist/ as tsc wrote it, or src/ under the tests), the build is every module
 * of the program: each file's name, size and time, a change anywhere counts.
 */
export function foldCodeHash(): string {
  if (codeHash) return codeHash;
  // The bundle's id is a hash of it already: a warm start hashes nothing (and loads no node:crypto).
  if (typeof GIT_TUNE_BUILD_ID !== 'undefined') return (codeHash = `${FORMAT} build ${GIT_TUNE_BUILD_ID}`);
  const hash = createHash('sha1').update(String(FORMAT));
  const self = fileURLToPath(import.meta.url);
  const root = path.join(path.dirname(self), '..');
  const ext = path.extname(self);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(ext)) {
        const st = statSync(file, { throwIfNoEntry: false });
        hash.update(`${path.relative(root, file)} ${st?.size} ${st?.mtimeMs} ${st?.ino}\n`);
      }
    }
  };
  walk(root);
  codeHash = hash.digest('hex');
  return codeHash;
}

/**
 * Per-tip results of pure decisions (plain JSON data), in their own small
 * file: valid for one tip and one build of the code, dropped as soon as
 * either changes.
 */
export function memoAt(gitdir: string, tuning: string, tip: string): <T>(key: string, compute: () => T) => T {
  const file = memoPath(gitdir, tuning);
  const code = foldCodeHash();
  let values: Record<string, unknown> | null = null;
  return <T>(key: string, compute: () => T): T => {
    values ??= readMemo(file, code, tip);
    if (key in values) return values[key] as T;
    const value = compute();
    values[key] = value;
    writeCacheFile(file, JSON.stringify({ code, tip, values }));
    return value;
  };
}

/**
 * Writes a file of `.git/tune/<name>/cache/` whole or not at all (renamed
 * into place), not synced: a cache cut short by a crash is read as none and
 * made again. One that cannot be written (a read-only repository, a full
 * disk) only costs speed. Given in parts (the history cache's framed
 * sections), it writes them as they are, in one writev: joining them first
 * copied the ~850 KB of a 1,563-step history twice.
 */
export function writeCacheFile(file: string, data: string | readonly Uint8Array[]): void {
  const tmp = tempFileFor(file);
  try {
    diskFullPoint('cache', tmp);
    mkdirSync(path.dirname(file), { recursive: true });
    if (typeof data === 'string') writeFileSync(tmp, data);
    else writeParts(tmp, data);
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}

function writeParts(file: string, parts: readonly Uint8Array[]): void {
  const fd = openSync(file, 'w');
  try {
    const size = parts.reduce((n, b) => n + b.length, 0);
    if (writevSync(fd, parts) !== size) throw new Error(`${file} written short`);
  } finally {
    closeSync(fd);
  }
}

/** The values kept for `tip` by this build; none when the file is missing, unreadable, or of another tip or build. */
function readMemo(file: string, code: string, tip: string): Record<string, unknown> {
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { code: string; tip: string; values: Record<string, unknown> };
    if (entry.code === code && entry.tip === tip) return entry.values;
  } catch {
    // none yet, or unreadable: computed again
  }
  return {};
}

/** The value kept for `key` at `tip` by this build, or undefined: nothing is computed. */
export function keptAt(gitdir: string, tuning: string, tip: string, key: string): unknown {
  return readMemo(memoPath(gitdir, tuning), foldCodeHash(), tip)[key];
}
