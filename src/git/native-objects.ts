import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { CommitInfo, NewCommit, Person } from './types.js';
import { buildTree, type TreeEntry, type TreeReader, type TreeWriter } from './trees.js';

/**
 * git's objects as the native backend reads and writes them
 * (src/git/native-repo.ts): trees, commits and their ids, laid out byte for
 * byte as isomorphic-git lays them out (the same step gives the same commit
 * id on both backends), and the pack a write hands to `git unpack-objects`.
 */

const PACK_TYPES = { commit: 1, tree: 2, blob: 3 } as const;

export type { TreeEntry } from './trees.js';

export function parseTree(data: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(32, pos);
    const nul = data.indexOf(0, space);
    const mode = data.toString('latin1', pos, space).padStart(6, '0');
    const name = data.toString('utf8', space + 1, nul);
    const oid = data.toString('hex', nul + 1, nul + 21);
    out.push({ mode, path: name, oid, type: mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob' });
    pos = nul + 21;
  }
  return out;
}

/** A tree object's bytes, entries in git's order (a tree sorts as if its name ended in '/'). */
export function formatTree(entries: readonly TreeEntry[]): Buffer {
  const keyed = entries.map((e) => ({ e, key: Buffer.from(e.type === 'tree' ? `${e.path}/` : e.path, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.concat(
    keyed.flatMap(({ e }) => [Buffer.from(`${e.mode.replace(/^0+/, '')} ${e.path}\0`, 'utf8'), Buffer.from(e.oid, 'hex')]),
  );
}

/**
 * A commit message as isomorphic-git writes and reads it: no CR, no leading
 * newlines, exactly one trailing newline. Both backends hand the fold the
 * same text, whoever wrote the commit.
 */
export function normalizeMessage(message: string): string {
  if (message.endsWith('\n') && !message.endsWith('\n\n') && message[0] !== '\n' && !message.includes('\r')) return message;
  return `${message.replace(/\r/g, '').replace(/^\n+/, '').replace(/\n+$/, '')}\n`;
}

/** `+0200` for a person isomorphic-git-style (timezoneOffset: minutes behind UTC, UTC+2 is -120). */
export function formatPerson(p: Person): string {
  const minutes = Math.abs(p.timezoneOffset);
  const sign = p.timezoneOffset > 0 || Object.is(p.timezoneOffset, -0) ? '-' : '+';
  const zone = `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
  return `${p.name} <${p.email}> ${p.timestamp} ${zone}`;
}

export function formatCommit(c: { tree: string; parents: readonly string[]; author: Person; committer: Person; message: string }): Buffer {
  const headers = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`), `author ${formatPerson(c.author)}`, `committer ${formatPerson(c.committer)}`];
  return Buffer.from(`${headers.join('\n')}\n\n${normalizeMessage(c.message)}`, 'utf8');
}

export function objectId(type: string, data: Buffer): string {
  return createHash('sha1').update(`${type} ${data.length}\0`).update(data).digest('hex');
}

export function parseCommit(oid: string, data: Buffer): CommitInfo {
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = normalizeMessage(split < 0 ? '' : text.slice(split + 2));
  let tree = '';
  const parents: string[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
  }
  return { oid, tree, parents, message };
}

/** New objects of one write, kept once each, and the pack that carries them to git. */
export class ObjectBatch {
  private readonly objects = new Map<string, { type: keyof typeof PACK_TYPES; data: Buffer }>();
  readonly trees = new Map<string, TreeEntry[]>();

  commits = 0;

  get size(): number {
    return this.objects.size;
  }

  add(type: keyof typeof PACK_TYPES, data: Buffer): string {
    const oid = objectId(type, data);
    if (!this.objects.has(oid)) {
      this.objects.set(oid, { type, data });
      if (type === 'commit') this.commits += 1;
    }
    return oid;
  }

  /** A version 2 pack of whole (undeltified) objects: header, entries, SHA-1 trailer. */
  pack(): Buffer {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(this.objects.size, 8);
    const parts: Buffer[] = [header];
    for (const { type, data } of this.objects.values()) {
      // Entry header: type and size, the size in 4 bits then 7 bits per byte, low bits first.
      let size = data.length;
      const bytes: number[] = [];
      let byte = (PACK_TYPES[type] << 4) | (size & 0x0f);
      size = Math.floor(size / 16);
      while (size > 0) {
        bytes.push(byte | 0x80);
        byte = size & 0x7f;
        size = Math.floor(size / 128);
      }
      bytes.push(byte);
      parts.push(Buffer.from(bytes), deflateSync(data, { level: 1 }));
    }
    const body = Buffer.concat(parts);
    return Buffer.concat([body, createHash('sha1').update(body).digest()]);
  }
}

/**
 * A commit's blobs, new trees and commit object added to `out` (trees read
 * through `reader`, trees made here kept in `out.trees`): what writing one
 * commit and writing a chain share.
 */
export async function addCommit(
  out: ObjectBatch, reader: TreeReader, parentTree: string | null,
  commit: Omit<NewCommit, 'parent'>, parent: string | null | undefined,
): Promise<{ oid: string; tree: string }> {
  const blobs = new Map<string, string>();
  for (const [p, change] of commit.changes) {
    if (change !== null && 'content' in change) blobs.set(p, out.add('blob', typeof change.content === 'string' ? Buffer.from(change.content, 'utf8') : Buffer.from(change.content)));
  }
  const writer: TreeWriter = {
    blob: async (p) => blobs.get(p)!,
    tree: async (list) => {
      const treeOid = out.add('tree', formatTree(list));
      out.trees.set(treeOid, list);
      return treeOid;
    },
  };
  const tree = (await buildTree(reader, writer, parentTree, new Map(commit.changes))) ?? out.add('tree', Buffer.alloc(0));
  const oid = out.add('commit', formatCommit({
    tree, parents: parent ? [parent] : [], author: commit.author, committer: commit.committer, message: commit.message,
  }));
  return { oid, tree };
}

