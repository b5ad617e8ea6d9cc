import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * docs/git-model.md: "A command that fails writes nothing: no half-made commit,
 * no moved ref, the working tree as it was." Every file of the working tree
 * and of .git is compared byte for byte (and by mode) before and after a
 * failing command; .git/objects is compared separately, as a set of object
 * files.
 */
type Snapshot = Map<string, string>;

function walk(root: string, rel: string, out: Snapshot, skip: (rel: string) => boolean): void {
  for (const name of readdirSync(path.join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (skip(r)) continue;
    const st = lstatSync(path.join(root, r));
    if (st.isDirectory()) {
      out.set(`${r}/`, 'dir');
      walk(root, r, out, skip);
    } else if (st.isSymbolicLink()) {
      out.set(r, `link ${readlinkSync(path.join(root, r))}`);
    } else {
      const hash = createHash('sha1').update(readFileSync(path.join(root, r))).digest('hex');
      out.set(r, `${(st.mode & 0o777).toString(8)} ${hash}`);
    }
  }
}

/** Every file under the working tree and .git, except the object store. */
function snapshot(repo: TempRepo): Snapshot {
  const out: Snapshot = new Map();
  walk(repo.dir, '', out, (r) => r === '.git/objects');
  return out;
}

/** The object files (loose objects, packs) under .git/objects. */
function objects(repo: TempRepo): string[] {
  const out: Snapshot = new Map();
  walk(repo.path('.git/objects'), '', out, () => false);
  return [...out.keys()].filter((k) => !k.endsWith('/')).sort();
}

/** Runs a command expected to fail and checks it changed no byte outside .git/objects. */
function expectNothingWritten(repo: TempRepo, run: () => CliResult, exitCode: number, errorCode: string, objectsToo = true): CliResult {
  const before = snapshot(repo);
  const objectsBefore = objects(repo);
  const r = run();
  expect(r.code, r.stderr + r.stdout).toBe(exitCode);
  expect(JSON.parse(r.stdout).error.code).toBe(errorCode);
  expect(r.stderr).toMatch(/^error: /);
  const after = snapshot(repo);
  expect([...after.entries()]).toEqual([...before.entries()]);
  // The command refused before it built anything: not even an unreachable object.
  if (objectsToo) expect(objects(repo)).toEqual(objectsBefore);
  return r;
}

describe('a failed command leaves the repository byte for byte as it was', () => {
  let repo: TempRepo;

  beforeAll(() => {
    repo = TempRepo.create({
      'agents/prompt.md': 'Answer politely.\n',
      'cases.json': `${JSON.stringify([
        { id: 'a-1', class: 'a', input: 'one' }, { id: 'a-2', class: 'a', input: 'two' },
        { id: 'b-1', class: 'b', input: 'three' }, { id: 'b-2', class: 'b', input: 'four' },
      ], null, 2)}\n`,
      'bad.json': `${JSON.stringify([{ id: 'a-1', class: 'a', input: 'one' }, { id: '../x', class: 'a' }])}\n`,
    });
    for (const args of [
      ['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js'],
      ['dataset', 'import', 'cases.json'],
      ['select'],
      ['batch'],
    ]) {
      const r = repo.tune(args);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(repo.git('status', '--porcelain')).toBe('');
  });
  afterAll(() => repo.cleanup());

  it('a bad dataset', () => {
    const r = expectNothingWritten(repo, () => repo.tune(['dataset', 'import', 'bad.json', '--json']), 2, 'bad-dataset');
    expect(JSON.parse(r.stdout).error.details).toHaveLength(2);
  });

  it('a bad value given to config set', () => {
    expectNothingWritten(repo, () => repo.tune(['config', 'set', 'maxBatch', '0', '--json']), 2, 'bad-config');
    const r = expectNothingWritten(repo, () => repo.tune(['config', 'set', 'maxBatch', '2', '--json']), 2, 'bad-config');
    expect(JSON.parse(r.stdout).error.details.join('\n')).toContain('maxBatch must be at least minBatch');
    expectNothingWritten(repo, () => repo.tune(['config', 'set', 'runner.command', '[]', '--json']), 2, 'bad-config');
  });

  it('an unknown config key', () => {
    const r = expectNothingWritten(repo, () => repo.tune(['config', 'set', 'maxbatch', '8', '--json']), 2, 'unknown-config-key');
    expect(JSON.parse(r.stdout).error.message).toBe('`maxbatch` is not a setting; did you mean `maxBatch`?');
  });

  it('a batch when none is due', () => {
    const r = expectNothingWritten(repo, () => repo.tune(['batch', '--json']), 3, 'batch-not-due');
    expect(JSON.parse(r.stdout).error.hint).toBe('git tune run');
  });

  it('init of a tuning that exists', () => {
    const r = expectNothingWritten(repo, () => repo.tune(['init', 'support-desk', '--prose', 'x/*.md', '--json']), 2, 'tuning-exists');
    expect(JSON.parse(r.stdout).error.hint).toBe('git switch tune/support-desk && git tune next');
  });

  it('init of a new tuning with a bad --dataset: no branch, HEAD where it was', () => {
    expectNothingWritten(repo, () => repo.tune(['init', 'other', '--prose', 'agents/**/*.md', '--dataset', 'bad.json', '--json']), 2, 'bad-dataset');
  });

  it('a step that would overwrite an uncommitted change', () => {
    const file = repo.path('.tune/support-desk/config.yaml');
    const committed = readFileSync(file, 'utf8');
    writeFileSync(file, `${committed}# my own note\n`);
    try {
      const r = expectNothingWritten(repo, () => repo.tune(['config', 'set', 'seed', '5', '--json']), 2, 'dirty-file');
      expect(JSON.parse(r.stdout).error.hint).toBe("git stash push -- '.tune/support-desk/config.yaml'   # or commit them; then the command again");
    } finally {
      writeFileSync(file, committed);
    }
  });

  it('a step while the branch is locked by another git process', () => {
    const lock = repo.path('.git/refs/heads/tune/support-desk.lock');
    writeFileSync(lock, '');
    try {
      // The commit's objects are written before the ref is locked, so loose
      // objects may be left behind; they are unreachable (git gc drops them)
      // and everything else is as it was.
      expectNothingWritten(repo, () => repo.tune(['config', 'set', 'seed', '5', '--json']), 4, 'ref-locked', false);
      expect(repo.fsck()).toBe('');
    } finally {
      rmSync(lock);
    }
  });

  it('a step by someone git does not know', () => {
    expectNothingWritten(
      repo,
      () => repo.tune(['config', 'set', 'seed', '5', '--json'], { GIT_AUTHOR_NAME: '', GIT_COMMITTER_NAME: '' }),
      2,
      'no-identity',
    );
  });

  it('and after all of them, the next step still goes through (and the snapshot sees what it wrote)', () => {
    const before = snapshot(repo);
    const objectsBefore = objects(repo);
    // seed 7, not 5: the refused attempts above left seed 5's objects behind already.
    expect(repo.tune(['config', 'set', 'seed', '7']).code).toBe(0);
    const changed = [...snapshot(repo).entries()].filter(([k, v]) => before.get(k) !== v).map(([k]) => k);
    expect(changed).toEqual(expect.arrayContaining(['.git/index', '.git/refs/heads/tune/support-desk', '.tune/support-desk/config.yaml']));
    expect(objects(repo).length).toBeGreaterThan(objectsBefore.length);
    expect(repo.git('log', '--format=%s', '-1').trim()).toBe('tune(support-desk): config seed = 7');
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.fsck()).toBe('');
  });
});
