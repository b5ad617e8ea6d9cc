import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The fold cache (.git/tune/<name>/cache) is keyed by the build: the shipped
 * bundle carries its build id, a hash of its own text that scripts/bundle.mjs
 * wrote into it, and reads no file for it at start-up.
 */
const PLACEHOLDER = 'git-tune-build-id-0000000000000000000000';

describe('the build id of the shipped CLI', () => {
  const bundle = readFileSync(path.join(ROOT, 'dist', 'bin', 'cli.cjs'), 'utf8');
  const idOf = (text: string) => {
    const ids = [...new Set(text.match(/(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])/g) ?? [])].filter(
      (id) => createHash('sha256').update(text.replaceAll(id, PLACEHOLDER)).digest('hex').slice(0, PLACEHOLDER.length) === id,
    );
    expect(ids).toHaveLength(1);
    return ids[0]!;
  };

  it('is the hash of the bundle\'s text, written in place of the placeholder; the warm next\'s bundle carries it too', () => {
    expect(bundle).not.toContain(PLACEHOLDER);
    const kept = readFileSync(path.join(ROOT, 'dist', 'bin', 'next.cjs'), 'utf8');
    expect(kept).not.toContain(PLACEHOLDER);
    expect(kept).toContain(idOf(bundle));
  });

  describe('keys the fold cache', () => {
    let repo: TempRepo;
    let pkg: string;
    const cache = () => repo.path('.git', 'tune', 'desk', 'cache', 'history.bin');
    // --debug: the program answers (a plain warm next is answered from the memo, which reads no history.bin).
    const next = () => {
      const r = spawnSync(process.execPath, [path.join(pkg, 'dist', 'bin', 'git-tune.js'), '--debug', 'next', '--json'], {
        cwd: repo.dir, env: { ...process.env, ...repo.env, NODE_DISABLE_COMPILE_CACHE: '1' }, encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { command: string };
    };

    beforeAll(() => {
      repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.jsonl': '{"id":"a-1","class":"a","input":"one"}\n' });
      repo.tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--dataset', 'cases.jsonl', '--no-hooks']);
      // A copy of the package, so its bundle can be swapped for "another build".
      pkg = mkdtempSync(path.join(os.tmpdir(), 'git-tune-build-'));
      mkdirSync(path.join(pkg, 'dist'));
      cpSync(path.join(ROOT, 'dist', 'bin'), path.join(pkg, 'dist', 'bin'), { recursive: true });
      cpSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
    });
    afterAll(() => {
      repo.cleanup();
      rmSync(pkg, { recursive: true, force: true });
    });

    it('the same build reuses the entry; another build (another id) writes it again, with the same answer', () => {
      const first = next();
      const written = statSync(cache()).mtimeMs;
      expect(next()).toEqual(first);
      expect(statSync(cache()).mtimeMs).toBe(written);
      // Another build: the same code under another id (a rebuild changes the id whenever the code changes).
      // The warm next's bundle (next.cjs) carries the program's id: it is swapped in both.
      const file = path.join(pkg, 'dist', 'bin', 'cli.cjs');
      const text = readFileSync(file, 'utf8');
      const id = idOf(text);
      writeFileSync(file, text.replaceAll(id, 'f'.repeat(PLACEHOLDER.length)));
      const kept = path.join(pkg, 'dist', 'bin', 'next.cjs');
      writeFileSync(kept, readFileSync(kept, 'utf8').replaceAll(id, 'f'.repeat(PLACEHOLDER.length)));
      expect(next()).toEqual(first);
      expect(statSync(cache()).mtimeMs).toBeGreaterThan(written);
    });
  });
});
