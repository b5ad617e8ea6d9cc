import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MemoryWrite } from '../contracts/result.js';

/**
 * A case's private memory copy: written from committed files, snapshotted
 * before and after the case, and diffed into the writes the run commit
 * records (docs/method.md#memory). Symlinks and special files are never followed: a
 * runner cannot make us read or record anything outside its copy.
 */
export interface MemoryFile {
  path: string;
  content: Uint8Array;
}

interface Entry {
  hash: string;
  mtimeMs: number;
  ino: number;
  size: number;
}

export interface Snapshot {
  files: Map<string, Entry>;
  refused: string[];
}

/** A fixed past mtime for the files we write, so any rewrite by the runner is seen. */
const PINNED_MTIME = new Date('2001-01-01T00:00:00Z');
/** Past this size a memory file is refused rather than recorded. */
export const MAX_MEMORY_FILE = 8 * 1024 * 1024;

export async function writeMemory(dir: string, files: readonly MemoryFile[]): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (const f of files) {
    const full = path.join(dir, f.path);
    await fs.mkdir(path.dirname(full), { recursive: true });
    await fs.writeFile(full, f.content);
    await fs.utimes(full, PINNED_MTIME, PINNED_MTIME);
  }
}

const hashOf = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

export async function snapshotMemory(dir: string): Promise<Snapshot> {
  const files = new Map<string, Entry>();
  const refused: string[] = [];
  const walk = async (rel: string) => {
    let names: string[];
    try {
      names = await fs.readdir(path.join(dir, rel));
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = await fs.lstat(path.join(dir, r));
      if (st.isDirectory()) await walk(r);
      else if (st.isFile() && st.size <= MAX_MEMORY_FILE) {
        files.set(r, { hash: hashOf(await fs.readFile(path.join(dir, r))), mtimeMs: st.mtimeMs, ino: st.ino, size: st.size });
      } else {
        refused.push(st.isSymbolicLink() ? `${r} (symlink: ignored)` : st.isFile() ? `${r} (larger than 8 MiB: ignored)` : `${r} (not a regular file: ignored)`);
      }
    }
  };
  await walk('');
  return { files, refused };
}

function encode(data: Buffer): Pick<MemoryWrite, 'content' | 'encoding'> {
  const text = data.toString('utf8');
  return Buffer.from(text, 'utf8').equals(data) && !text.includes('\u0000')
    ? { content: text, encoding: 'utf8' }
    : { content: data.toString('base64'), encoding: 'base64' };
}

/**
 * What the case wrote: added, changed and deleted files with content.
 * "Saved twice": a write whose content was already in the copy it was given
 * (the same file rewritten unchanged, or a new file repeating one).
 */
export async function diffMemory(dir: string, before: Snapshot, after: Snapshot): Promise<MemoryWrite[]> {
  const given = new Set([...before.files.values()].map((e) => e.hash));
  const writes: MemoryWrite[] = [];
  for (const [p, now] of after.files) {
    const was = before.files.get(p);
    const touched = !was || was.hash !== now.hash || was.mtimeMs !== now.mtimeMs || was.ino !== now.ino;
    if (!touched) continue;
    const savedTwice = given.has(now.hash);
    if (was && was.hash === now.hash) {
      writes.push({ path: p, op: 'changed', savedTwice: true, ...encode(await fs.readFile(path.join(dir, p))) });
      continue;
    }
    writes.push({ path: p, op: was ? 'changed' : 'added', savedTwice, ...encode(await fs.readFile(path.join(dir, p))) });
  }
  for (const p of before.files.keys()) {
    if (!after.files.has(p)) writes.push({ path: p, op: 'deleted', savedTwice: false });
  }
  return writes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function summarizeWrites(writes: readonly MemoryWrite[], refused: readonly string[]) {
  return {
    added: writes.filter((w) => w.op === 'added').length,
    changed: writes.filter((w) => w.op === 'changed').length,
    deleted: writes.filter((w) => w.op === 'deleted').length,
    savedTwice: writes.filter((w) => w.savedTwice).length,
    refused: [...refused],
  };
}
