import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import zlib from 'node:zlib';
import { diskFullPoint } from '../faults/enospc.js';

/**
 * Loads the CLI's CommonJS bundle (dist/bin/cli.cjs) with V8's code cache:
 * compiling the program's code was a third of a short command's own time,
 * and Node 20 keeps no compiled code between runs for modules (Node 22's
 * `module.enableCompileCache` does, for the module loader only).
 *
 * The cache is one file per bundle, Node build and command or part (a command's first
 * run records the functions it compiled), in a directory of the user's own
 * under the OS temp dir. It can never run other code than the bundle's: its
 * name holds the start of the bundle's content hash (`build`, taken when it
 * was built) and a checksum of all of it, the bundle file's size and time (a
 * hand edit changes them), the Node build and its flags; its contents hold a
 * checksum of themselves (a file cut short or damaged is not handed to V8,
 * which checks only lengths and versions). A cache that cannot be read or
 * written only costs speed. The checksums are CRC-32 (zlib's, Node 20.15+),
 * not a cryptographic hash: node:crypto would cost every start its load.
 * NODE_DISABLE_COMPILE_CACHE (Node's own switch) turns it off.
 */
export function requireWithCodeCache(file: string, build: string, command: string, pathsTaken: () => ReadonlySet<string>): unknown {
  // One open file: the text and its size and time are of the same file, even if a rebuild replaces it meanwhile.
  const fd = openSync(file, 'r');
  let source: string;
  let key: string;
  try {
    const st = fstatSync(fd);
    key = `${build}\0${st.size}\0${st.mtimeMs}\0${st.ino}`;
    // Decoded from a Buffer: fs's own utf8 read is ~4x slower on a file this size (1.5 MB). As latin1: the
    // bundles are ASCII (scripts/bundle.mjs makes them so), which latin1 decodes to the same text without
    // utf8's checks (0.7 ms instead of 1.1-1.5 for cli.cjs).
    source = readFileSync(fd).toString('latin1');
  } finally {
    closeSync(fd);
  }
  const cache = cacheFile(key, command);
  const cached = cache ? readCache(cache) : undefined;
  // The wrapper Node gives a CommonJS module, on the source's first line (line numbers hold).
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData: cached?.data,
  });
  // Written at exit, so it holds every function this command compiled (and those it was handed), not only the
  // top level; only after a success (a mistyped command makes none). Again after a run that took a path
  // (`pathsTaken`, e.g. src/code-paths.ts) the file does not cover: its functions join the others.
  if (cache) {
    const covered = cached && !script.cachedDataRejected ? cached.paths : null;
    process.once('exit', (code) => {
      const paths = new Set([...(covered ?? []), ...pathsTaken()]);
      if (code === 0 && (covered === null || paths.size > covered.size)) writeCache(cache, script, [...paths].sort());
    });
  }
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file));
  return module.exports;
}

/**
 * A cache file: the CRC-32 of the rest (4 bytes), the paths it covers
 * (one byte of length, then their names, comma-separated), V8's data.
 */
const SUM = 4;

/** CRC-32 as 8 hex digits (zlib's; before Node 20.15, the start of a SHA-1). */
function checksum(data: string | Buffer): string {
  const crc32 = (zlib as { crc32?: (data: string | Buffer) => number }).crc32;
  return crc32 ? (crc32(data) >>> 0).toString(16).padStart(8, '0') : createHash('sha1').update(data).digest('hex').slice(0, 8);
}

function cacheFile(key: string, command: string): string | null {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return null;
  const dir = ownDir();
  if (!dir) return null;
  // V8 refuses code cached under other flags: runs with other flags (--cpu-prof, NODE_OPTIONS) keep their own file, not rewrite each other's.
  const node = [process.version, process.versions.v8, process.arch, process.execArgv.join(' '), process.env.NODE_OPTIONS ?? ''].join('\0');
  const id = `${key.slice(0, 8)}${checksum(`${key}\0${node}`)}`;
  const name = /^[a-z][a-z-]{0,19}$/.test(command) ? command : 'other';
  return path.join(dir, `${id}-${name}.bin`);
}

/** `<tmp>/git-tune-code-cache-<uid>`, made if missing; null unless only this user can write to it. */
function ownDir(): string | null {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), `git-tune-code-cache-${uid ?? 'user'}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return null;
    return dir;
  } catch {
    return null;
  }
}

function readCache(file: string): { data: Buffer; paths: ReadonlySet<string> } | undefined {
  try {
    const bytes = readFileSync(file);
    const rest = bytes.subarray(SUM);
    if (bytes.length <= SUM + 1 || checksum(rest) !== bytes.subarray(0, SUM).toString('hex')) return undefined;
    const end = 1 + rest[0]!;
    const paths = rest.subarray(1, end).toString('latin1');
    return { data: rest.subarray(end), paths: new Set(paths ? paths.split(',') : []) };
  } catch {
    return undefined;
  }
}

function writeCache(file: string, script: vm.Script, paths: readonly string[]): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const names = Buffer.from(paths.join(','), 'latin1');
    if (names.length > 255) throw new Error('the covered paths do not fit their length byte');
    const rest = Buffer.concat([Buffer.from([names.length]), names, script.createCachedData()]);
    writeFileSync(tmp, Buffer.concat([Buffer.from(checksum(rest), 'hex'), rest]), { mode: 0o600 });
    diskFullPoint('code-cache', tmp);
    renameSync(tmp, file);
    pruneOtherBuilds(path.dirname(file), path.basename(file).slice(0, 16));
  } catch {
    rmSync(tmp, { force: true });
  }
}

/** Files of other builds (an upgrade, a rebuild), and any left half-written, not rewritten for a week. */
function pruneOtherBuilds(dir: string, build: string): void {
  const weekAgo = Date.now() - 7 * 24 * 3600_000;
  for (const name of readdirSync(dir)) {
    if (name.startsWith(build) && !name.includes('.tmp-')) continue;
    const file = path.join(dir, name);
    try {
      if (statSync(file).mtimeMs < weekAgo) rmSync(file, { force: true });
    } catch {
      // gone meanwhile
    }
  }
}
