import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeProsePath, parseProseScope, readProseFiles } from '../../src/run/presets/prose-files.js';

/** The prose a judge or editor preset reads: the files under the tuning's globs, found in the repository root. */
const root = mkdtempSync(path.join(os.tmpdir(), 'tune-prose-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const write = (file: string, text = `${file}\n`) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
};

describe('prose files of a preset', () => {
  it('every file under the globs, sorted, marked memory policy or not; negated globs, the tool dir and .git left out', async () => {
    for (const f of ['agents/b.md', 'agents/a.md', 'agents/drafts/x.md', 'agents/policy.md', 'agents/notes.txt', '.tune/t/README.md', '.git/x.md', 'README.md']) write(f);
    const files = await readProseFiles(root, parseProseScope(JSON.stringify({ prose: ['agents/**/*.md', '!agents/drafts/**', '**/README.md'], memoryPolicy: ['agents/policy.md'] })));
    expect(files.map((f) => [f.path, f.memoryPolicy])).toEqual([['README.md', false], ['agents/a.md', false], ['agents/b.md', false], ['agents/policy.md', true]]);
    expect(files[1]!.text).toBe('agents/a.md\n');
  });

  it('TUNE_PROSE_GLOBS missing or malformed says what it must hold', () => {
    expect(() => parseProseScope(undefined)).toThrow('TUNE_PROSE_GLOBS is not set (git-tune sets it for its presets: {"prose": [globs], "memoryPolicy": [globs]})');
    expect(() => parseProseScope('{prose:')).toThrow(/^TUNE_PROSE_GLOBS is not JSON/);
    expect(() => parseProseScope('{"prose": "agents/*.md"}')).toThrow(/^TUNE_PROSE_GLOBS: prose: /);
    expect(parseProseScope('{}')).toEqual({ prose: [], memoryPolicy: [] });
  });

  it('a path as a model writes it is read as the repository names it', () => {
    expect(normalizeProsePath(' ./agents\\a.md ')).toBe('agents/a.md');
    expect(normalizeProsePath('././a.md')).toBe('a.md');
  });
});
