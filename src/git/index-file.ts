import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * What `.git/index` holds for some paths: the blob a user staged, so a step
 * never replaces a staged change it did not make. Reads index versions 2 and
 * 3 (the ones git-tune updates; version 4 and a split index are refused
 * before any step, see worktree.ts). No git library: both backends use it.
 */
export interface IndexEntry {
  oid: string;
  mode: number;
  /** 0 normally; 1-3 while a merge conflict on the path is not resolved. */
  stage: number;
}

export async function readIndexEntries(gitdir: string, paths: ReadonlySet<string>): Promise<Map<string, IndexEntry[]>> {
  const out = new Map<string, IndexEntry[]>();
  let buf: Buffer;
  try {
    buf = await fs.readFile(path.join(gitdir, 'index'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return out;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return out;
  const count = buf.readUInt32BE(8);
  let at = 12;
  for (let i = 0; i < count && at + 62 <= buf.length; i++) {
    const mode = buf.readUInt32BE(at + 24);
    const oid = buf.toString('hex', at + 40, at + 60);
    const flags = buf.readUInt16BE(at + 60);
    const fixed = version === 3 && flags & 0x4000 ? 64 : 62;
    const end = buf.indexOf(0, at + fixed);
    const name = buf.toString('utf8', at + fixed, end);
    if (paths.has(name)) out.set(name, [...(out.get(name) ?? []), { oid, mode, stage: (flags >> 12) & 3 }]);
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    at += Math.floor((fixed + (end - (at + fixed)) + 8) / 8) * 8;
  }
  return out;
}

/** The id git gives a blob of these bytes. */
export function blobOid(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.byteLength}\0`).update(content).digest('hex');
}
