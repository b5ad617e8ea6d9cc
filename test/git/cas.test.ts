import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tuneAsync } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { IsoGitRepo } from '../../src/git/iso.js';
import { NativeGitRepo } from '../../src/git/native-repo.js';

/**
 * The branch moves by compare-and-swap under git's own lock-file protocol
 * (docs/git-model.md: "two concurrent commands cannot lose a step"), beside
 * native git writing the same refs.
 */
const person = { name: 'Tune Tester', email: 'tester@example.com', timestamp: 1767225600, timezoneOffset: 0 };

async function newCommit(iso: InstanceType<typeof IsoGitRepo>, parent: string, file: string): Promise<string> {
  return iso.writeCommit({
    parent,
    changes: new Map([[file, { content: `${file}\n` }]]),
    message: `add ${file}\n`,
    author: person,
    committer: person,
  });
}

describe('IsoGitRepo.compareAndSwapRef', () => {
  let repo: TempRepo;
  let iso: InstanceType<typeof IsoGitRepo>;
  const ref = 'refs/heads/main';

  beforeEach(() => {
    repo = TempRepo.create();
    iso = new IsoGitRepo(repo.dir, repo.path('.git'));
  });
  afterEach(() => repo.cleanup());

  it('moves the ref when it still holds the expected value', async () => {
    const tip = (await iso.resolveRef(ref))!;
    const oid = await newCommit(iso, tip, 'a.txt');
    await iso.compareAndSwapRef(ref, oid, tip);
    expect(repo.git('rev-parse', 'main').trim()).toBe(oid);
    expect(existsSync(repo.path('.git/refs/heads/main.lock'))).toBe(false);
  });

  it('refuses with ref-moved when native git moved the branch between read and write', async () => {
    const tip = (await iso.resolveRef(ref))!;
    const ours = await newCommit(iso, tip, 'a.txt');
    const native = repo.git('commit-tree', 'main^{tree}', '-p', 'main', '-m', 'native').trim();
    repo.git('update-ref', 'refs/heads/main', native, tip);
    await expect(iso.compareAndSwapRef(ref, ours, tip)).rejects.toMatchObject({ code: 'ref-moved', exitCode: 4 });
    expect(repo.git('rev-parse', 'main').trim()).toBe(native);
    expect(repo.git('log', '--format=%s', 'main').trim().split('\n')).toEqual(['native', 'project']);
    expect(existsSync(repo.path('.git/refs/heads/main.lock'))).toBe(false);
  });

  it('refuses to create a ref that appeared meanwhile (expected: none)', async () => {
    const tip = (await iso.resolveRef(ref))!;
    repo.git('branch', 'tune/x');
    await expect(iso.compareAndSwapRef('refs/heads/tune/x', tip, null)).rejects.toMatchObject({ code: 'ref-moved', exitCode: 4 });
  });

  it('refuses with ref-locked while <ref>.lock exists, and leaves the other process its lock', async () => {
    const tip = (await iso.resolveRef(ref))!;
    const ours = await newCommit(iso, tip, 'a.txt');
    const lock = repo.path('.git/refs/heads/main.lock');
    writeFileSync(lock, '');
    const err = await iso.compareAndSwapRef(ref, ours, tip).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ref-locked', exitCode: 4 });
    expect((err as { hint: string }).hint).toContain('main.lock');
    expect(existsSync(lock)).toBe(true);
    expect(repo.git('rev-parse', 'main').trim()).toBe(tip);
  });

  it('works on packed refs: reads, swaps, refuses a stale value, deletes', async () => {
    const tip = (await iso.resolveRef(ref))!;
    repo.git('branch', 'other');
    repo.git('pack-refs', '--all');
    expect(existsSync(repo.path('.git/refs/heads/main'))).toBe(false);
    expect(await iso.resolveRef(ref)).toBe(tip);

    const oid = await newCommit(iso, tip, 'a.txt');
    await expect(iso.compareAndSwapRef(ref, oid, oid)).rejects.toMatchObject({ code: 'ref-moved' });
    await iso.compareAndSwapRef(ref, oid, tip);
    expect(repo.git('rev-parse', 'main').trim()).toBe(oid);

    await iso.deleteRef('refs/heads/other', tip);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads').trim().split('\n')).toEqual(['refs/heads/main']);
    expect(readFileSync(repo.path('.git/packed-refs'), 'utf8')).not.toContain('refs/heads/other');
    expect(existsSync(repo.path('.git/packed-refs.lock'))).toBe(false);
    expect(repo.fsck()).toBe('');
  });
});

describe('NativeGitRepo.createRefs (run tags, in one git transaction)', () => {
  let repo: TempRepo;
  beforeEach(() => {
    repo = TempRepo.create();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    repo.cleanup();
  });

  /** `refs/tags/tune/x/r1.lock` as a `git update-ref --stdin` killed with its git-tune leaves it: no note, an hour old. */
  const leftLock = () => {
    const lock = repo.path('.git/refs/tags/tune/x/r1.lock');
    mkdirSync(repo.path('.git/refs/tags/tune/x'), { recursive: true });
    writeFileSync(lock, '');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, hourAgo, hourAgo);
    return lock;
  };

  it('removes a tag lock a killed git-tune left, saying so, and creates the tags', async () => {
    const lock = leftLock();
    // The killed git-tune's tool lock: a pid that is gone, held since before the tag lock was made.
    mkdirSync(repo.path('.git/tune/x'), { recursive: true });
    writeFileSync(repo.path('.git/tune/x/lock'), JSON.stringify({ pid: 2 ** 22 + 1, start: '1', host: os.hostname(), command: 'git tune run', since: new Date(Date.now() - 7_200_000).toISOString() }));
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const native = new NativeGitRepo(repo.dir, repo.path('.git'));
    const tip = (await native.resolveRef('refs/heads/main'))!;
    await native.createRefs([['refs/tags/tune/x/r1', tip], ['refs/tags/tune/x/r2', tip]]);
    expect(said.mock.calls.map((c) => String(c[0])).join('')).toContain(`git-tune: removed ${lock}: left by git tune run (pid ${2 ** 22 + 1}), which was killed`);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/tags').trim().split('\n')).toEqual(['refs/tags/tune/x/r1', 'refs/tags/tune/x/r2']);
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses with ref-locked (the rm in the hint) a tag lock nobody accounts for, and creates no tag', async () => {
    const lock = leftLock();
    const native = new NativeGitRepo(repo.dir, repo.path('.git'));
    const tip = (await native.resolveRef('refs/heads/main'))!;
    const err = await native.createRefs([['refs/tags/tune/x/r1', tip], ['refs/tags/tune/x/r2', tip]]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ref-locked', exitCode: 4 });
    expect((err as { hint: string }).hint).toContain(`rm '${lock}'`);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/tags').trim()).toBe('');
    expect(existsSync(lock)).toBe(true);
  });
});

/**
 * A preload that runs a shell command the first time the CLI opens a `.lock`
 * file, i.e. after it read the branch tip and before it takes its first lock:
 * the deterministic way to have another writer move the branch in between.
 * On the native backend git takes the ref's lock itself (`git update-ref`):
 * the hook fires just before that process starts.
 */
function raceHook(repo: TempRepo): string {
  const file = repo.path('.git', 'race-hook.mjs');
  writeFileSync(
    file,
    `import fs from 'node:fs';
import cp from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
const { execFileSync } = cp;
const open = fs.promises.open;
const spawn = cp.spawn;
const suffix = process.env.RACE_SUFFIX || '.lock';
let fired = false;
const race = () => {
  fired = true;
  execFileSync('sh', ['-c', process.env.RACE_CMD], { stdio: ['ignore', 'ignore', 'inherit'] });
};
fs.promises.open = async function (p, ...rest) {
  if (!fired && typeof p === 'string' && p.endsWith(suffix)) race();
  return open.call(this, p, ...rest);
};
cp.spawn = function (command, args, ...rest) {
  if (!fired && command === 'git' && Array.isArray(args) && args.includes('update-ref') && args.some((a) => (a + '.lock').endsWith(suffix))) race();
  return spawn.call(this, command, args, ...rest);
};
syncBuiltinESMExports();
`,
  );
  return file;
}

describe('the CLI racing other writers on the tuning branch', () => {
  let repo: TempRepo;
  const config = '.tune/support-desk/config.yaml';

  beforeEach(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']).code).toBe(0);
  });
  afterEach(() => repo.cleanup());

  it('loses to a native git commit made while it ran: exit 4, both commits kept, nothing written', async () => {
    const before = repo.git('rev-parse', 'HEAD').trim();
    const configBefore = readFileSync(repo.path(config), 'utf8');
    const hook = raceHook(repo);
    const r = await tuneAsync(repo, ['config', 'set', 'maxBatch', '8', '--json'], {
      NODE_OPTIONS: `--import ${hook}`,
      RACE_CMD: "echo 'Answer politely and briefly.' > agents/prompt.md && git commit -q -am 'native edit'",
    });
    expect(r.code, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout).error.code).toBe('ref-moved');
    expect(r.stderr).toContain('moved while this command ran');
    expect(r.stderr).toContain('fix: ');
    // The native commit is the tip, on top of the tip the command read; no config step anywhere.
    expect(repo.git('log', '--format=%s', '-2').trim().split('\n')).toEqual(['native edit', 'tune(support-desk): init']);
    expect(repo.git('rev-parse', 'HEAD^').trim()).toBe(before);
    expect(readFileSync(repo.path(config), 'utf8')).toBe(configBefore);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.fsck()).toBe('');
    // Run again, it goes through on top of the native commit.
    expect(repo.tune(['config', 'set', 'maxBatch', '8']).code).toBe(0);
    expect(repo.git('log', '--format=%s', '-3').trim().split('\n')).toEqual([
      'tune(support-desk): config maxBatch = 8', 'native edit', 'tune(support-desk): init',
    ]);
  });

  it('loses to a native git update-ref between its own checks and its compare-and-swap: exit 4, nothing written', async () => {
    const configBefore = readFileSync(repo.path(config), 'utf8');
    const hook = raceHook(repo);
    // Fires when the command takes the branch's own lock: after it checked the
    // branch under index.lock, just before the compare-and-swap itself.
    const r = await tuneAsync(repo, ['config', 'set', 'maxBatch', '8', '--json'], {
      NODE_OPTIONS: `--import ${hook}`,
      RACE_SUFFIX: 'refs/heads/tune/support-desk.lock',
      RACE_CMD: 'git update-ref refs/heads/tune/support-desk $(git commit-tree HEAD^{tree} -p HEAD -m plumbing)',
    });
    expect(r.code, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout).error.code).toBe('ref-moved');
    expect(repo.git('log', '--format=%s', '-2').trim().split('\n')).toEqual(['plumbing', 'tune(support-desk): init']);
    expect(readFileSync(repo.path(config), 'utf8')).toBe(configBefore);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(existsSync(repo.path('.git/index.lock'))).toBe(false);
    expect(existsSync(repo.path('.git/refs/heads/tune/support-desk.lock'))).toBe(false);
  });

  it('three processes writing steps at once never lose one: losers exit 4, survivors = successes', async () => {
    const start = repo.git('rev-parse', 'HEAD').trim();
    const perProcess = 4;
    const worker = async (w: number) => {
      const codes: number[] = [];
      const errors: string[] = [];
      for (let k = 0; k < perProcess; k++) {
        const r = await tuneAsync(repo, ['config', 'set', 'seed', String(100 * w + k)]);
        codes.push(r.code);
        if (r.code !== 0) errors.push(r.stderr);
      }
      return { codes, errors };
    };
    const results = await Promise.all([1, 2, 3].map(worker));
    const codes = results.flatMap((r) => r.codes);
    const errors = results.flatMap((r) => r.errors);
    // Every failure is a clean conflict (exit 4), never a usage error or a crash.
    expect(codes.filter((c) => c !== 0 && c !== 4), errors.join('\n')).toEqual([]);
    const successes = codes.filter((c) => c === 0).length;
    expect(successes).toBeGreaterThan(0);
    const steps = repo.git('log', '--format=%s', `${start}..HEAD`).trim().split('\n').filter(Boolean);
    expect(steps).toHaveLength(successes);
    expect(steps.every((s) => /^tune\(support-desk\): config seed = \d+$/.test(s))).toBe(true);
    expect(repo.git('rev-list', '--merges', 'HEAD')).toBe('');
    // The working tree and index hold the tip: nothing half-written, nothing stale.
    expect(repo.git('status', '--porcelain')).toBe('');
    const lastSeed = /config seed = (\d+)/.exec(steps[0]!)![1];
    expect(readFileSync(repo.path(config), 'utf8')).toContain(`\nseed: ${lastSeed}\n`);
    expect(existsSync(repo.path('.git/index.lock'))).toBe(false);
    expect(existsSync(repo.path('.git/refs/heads/tune/support-desk.lock'))).toBe(false);
    expect(repo.fsck()).toBe('');
  });
});
