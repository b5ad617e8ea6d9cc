import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The shipped CLI compiles its program (dist/bin/cli.cjs) through V8's code
 * cache (src/cli/code-cache.ts), kept per user under the OS temp dir: here a
 * temp dir of the test's own (TMPDIR), so what the CLI wrote can be checked.
 */
describe('the code cache of the shipped CLI', () => {
  let repo: TempRepo;
  let tmp: string;
  const uid = process.getuid?.() ?? 'user';
  const cacheDir = () => path.join(tmp, `git-tune-code-cache-${uid}`);
  const files = () => readdirSync(cacheDir()).sort();
  const tune = (args: string[], env: Record<string, string> = {}) => repo.tune(args, { TMPDIR: tmp, ...env });

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.jsonl': '{"id":"a-1","class":"a","input":"one"}\n' });
    repo.tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--dataset', 'cases.jsonl', '--no-hooks']);
  });
  afterAll(() => repo.cleanup());
  // Each test starts with no cache at all.
  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-cc-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('reads bundles that are ASCII, which it decodes as latin1: the same text', () => {
    for (const bundle of ['cli.cjs', 'next.cjs']) {
      const bytes = readFileSync(path.join(ROOT, 'dist/bin', bundle));
      expect(bytes.length).toBeGreaterThan(10_000);
      expect(bytes.findIndex((b) => b > 0x7f), bundle).toBe(-1);
    }
  });

  it("is written by a command's first run, for that command, only by the user, and then used as it is", () => {
    const first = tune(['status']);
    expect(first.code).toBe(0);
    expect(files()).toEqual([expect.stringMatching(/^[0-9a-f]{16}-status\.bin$/)]);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    const file = path.join(cacheDir(), files()[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = statSync(file);
    const second = tune(['status']);
    expect(second).toEqual(first);
    // Accepted: not written again.
    expect(statSync(file).ino).toBe(before.ino);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(tune(['log']).code).toBe(0);
    expect(files().map((f) => f.slice(17))).toEqual(['log.bin', 'status.bin']);
  });

  it('is written again, once, after a run that folded history or parsed config.yaml where its file did not cover that', () => {
    // The fold cache holds the tip: this run of `status` is warm, and its file covers no heavier path.
    expect(repo.tune(['status']).code).toBe(0);
    const warm = tune(['status']);
    const file = path.join(cacheDir(), files()[0]!);
    // The file's header: checksum (4 bytes), then the covered paths (a length byte, the names).
    const covered = () => {
      const bytes = readFileSync(file);
      return bytes.subarray(5, 5 + bytes[4]!).toString('latin1');
    };
    expect(covered()).toBe('');
    const before = statSync(file);
    const dropFoldCache = () => rmSync(repo.path('.git/tune/desk/cache'), { recursive: true, force: true });
    dropFoldCache();
    expect(tune(['status'])).toEqual(warm);
    expect(covered()).toBe('fold,parse');
    expect(statSync(file).size).toBeGreaterThan(before.size);
    const folded = statSync(file);
    // Covered now: a cold run again, and a warm one, use it as it is.
    dropFoldCache();
    expect(tune(['status'])).toEqual(warm);
    expect(tune(['status'])).toEqual(warm);
    expect(statSync(file).ino).toBe(folded.ino);
    expect(statSync(file).mtimeMs).toBe(folded.mtimeMs);
  });

  it('a warm next loads neither node:crypto nor node:child_process (the bundles load them on first use); a fold does', () => {
    const list = path.join(tmp, 'modules.txt');
    const preload = path.join(tmp, 'modules.cjs');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));`);
    const loaded = () => readFileSync(list, 'utf8').split('\n').filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    expect(repo.tune(['next']).code).toBe(0);
    expect(tune(['next'], { NODE_OPTIONS: `--require ${preload}` }).code).toBe(0);
    expect(loaded()).not.toContain('crypto');
    expect(loaded()).not.toContain('child_process');
    // A fold checks each step's seal (SHA-256) and reads history with git: both load, when used.
    rmSync(repo.path('.git/tune/desk/cache'), { recursive: true, force: true });
    expect(tune(['next'], { NODE_OPTIONS: `--require ${preload}` }).code).toBe(0);
    expect(loaded()).toEqual(expect.arrayContaining(['crypto', 'child_process']));
  });

  it('a damaged cache file is not used: the command answers the same and writes it again', () => {
    const first = tune(['status']);
    const file = path.join(cacheDir(), files()[0]!);
    const bytes = readFileSync(file);
    for (let i = 100; i < bytes.length; i += 997) bytes[i] = bytes[i]! ^ 0xff;
    writeFileSync(file, bytes);
    expect(tune(['status'])).toEqual(first);
    const rewritten = readFileSync(file);
    expect(rewritten.equals(bytes)).toBe(false);
    // A file cut short, likewise.
    writeFileSync(file, rewritten.subarray(0, 1000));
    expect(tune(['status'])).toEqual(first);
    expect(statSync(file).size).toBeGreaterThan(1000);
  });

  it('is not written after a failed command, when turned off, or into a directory others can write to', () => {
    const bad = tune(['nxet']);
    expect(bad.code).toBe(2);
    expect(files()).toEqual([]);
    expect(tune(['next'], { NODE_DISABLE_COMPILE_CACHE: '1' }).code).toBe(0);
    expect(files()).toEqual([]);
    chmodSync(cacheDir(), 0o777);
    expect(tune(['next']).code).toBe(0);
    expect(files()).toEqual([]);
  });
});
