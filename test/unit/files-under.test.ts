import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { filesUnder } from '../../src/run/files.js';

/** Issue 30, item 3: the one directory walker the prose checks, the presets and a case's workspace share. */
const root = mkdtempSync(path.join(os.tmpdir(), 'files-under-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('filesUnder', () => {
  it('lists files sorted and relative, skips the named folders at any depth, lists links only when asked, never follows them', async () => {
    for (const f of ['b.md', 'a/z.md', 'a/b/c.md', 'node_modules/x.md', 'a/node_modules/y.md', 'outside/o.md']) {
      mkdirSync(path.dirname(path.join(root, 'repo', f)), { recursive: true });
      writeFileSync(path.join(root, 'repo', f), 'x');
    }
    symlinkSync(path.join(root, 'repo', 'outside'), path.join(root, 'repo', 'a', 'linked-dir'));
    symlinkSync('z.md', path.join(root, 'repo', 'a', 'link.md'));
    const repo = path.join(root, 'repo');
    expect(await filesUnder(repo, '', { skip: new Set(['node_modules', 'outside']) })).toEqual(['a/b/c.md', 'a/z.md', 'b.md']);
    expect(await filesUnder(repo, 'a', { skip: new Set(['node_modules']), links: true })).toEqual(['a/b/c.md', 'a/link.md', 'a/linked-dir', 'a/z.md']);
    expect(await filesUnder(repo, 'missing')).toEqual([]);
    expect(await filesUnder(path.join(repo, 'a', 'b'))).toEqual(['c.md']);
  });
});
