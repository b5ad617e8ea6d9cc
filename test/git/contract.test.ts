import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TempRepo } from '../helpers/repo.js';
import { IsoGitRepo } from '../../src/git/iso.js';
import { NativeGitRepo } from '../../src/git/native-repo.js';
import { chooseBackend } from '../../src/git/find-repo.js';
import { initRepo } from '../../src/git/init.js';

/**
 * One contract for both GitRepo implementations: isomorphic-git in-process,
 * and the native git binary. Each is checked against what native git itself
 * says (rev-parse, ls-tree, diff-tree, log, fsck), and against the other:
 * what one writes the other reads, and the same step gives the same commit id.
 */
type Repo = InstanceType<typeof IsoGitRepo> | InstanceType<typeof NativeGitRepo>;
const BACKENDS = [
  ['iso', (dir: string) => new IsoGitRepo(dir, `${dir}/.git`)],
  ['native', (dir: string) => new NativeGitRepo(dir, `${dir}/.git`)],
] as const;
const open = (name: 'iso' | 'native', dir: string): Repo => BACKENDS.find(([n]) => n === name)![1](dir);

const at = (timestamp: number, timezoneOffset = 0) => ({ name: 'Tune Tester', email: 'tester@example.com', timestamp, timezoneOffset });
const person = at(1767225600);

/** The entries of a paged walk, the first `limit` of them (stopping the walk there). */
async function collect<T>(pages: AsyncIterable<readonly T[]>, limit = Infinity): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) {
    for (const x of page) {
      out.push(x);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/**
 * A project history made by native git: nested files, an executable, a
 * merge (its second parent must not be walked), a hand commit whose message
 * ends in blank lines and holds non-ASCII text.
 */
function nativeHistory(): TempRepo {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'docs/a/b/deep.txt': 'deep\n', 'run.sh': '#!/bin/sh\n', 'docs/odd\nname.txt': 'a newline in its name\n' });
  repo.git('update-index', '--chmod=+x', 'run.sh');
  repo.git('commit', '-q', '-m', 'exec bit');
  repo.git('switch', '-q', '-c', 'side');
  repo.write({ 'side.txt': 'side\n' });
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'side work');
  repo.git('switch', '-q', 'main');
  repo.write({ 'agents/prompt.md': 'Answer politely and briefly.\n', 'docs/a/new.txt': 'new\n' });
  repo.git('rm', '-q', 'docs/a/b/deep.txt');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'edit prose, move docs');
  repo.git('merge', '-q', '--no-ff', '-m', 'merge side', 'side');
  writeFileSync(repo.path('.git', 'MSG'), 'Grüße: a hand commit\n\nbody ✓\n\nTune-Note: x\n\n\n');
  repo.git('commit', '-q', '--allow-empty', '--cleanup=verbatim', '-F', '.git/MSG');
  return repo;
}

describe.each(BACKENDS)('GitRepo contract: %s', (name, make) => {
  let repo: TempRepo;
  let git: Repo;

  beforeAll(() => {
    repo = nativeHistory();
    git = make(repo.dir);
  });
  afterAll(() => repo.cleanup());

  it('names its backend', () => {
    expect(git.backend).toBe(name);
  });

  it('reads refs and HEAD, loose and packed, as native git does', async () => {
    const main = repo.git('rev-parse', 'main').trim();
    expect(await git.resolveRef('refs/heads/main')).toBe(main);
    expect(await git.resolveRef('refs/heads/nope')).toBeNull();
    expect(await git.headRef()).toBe('refs/heads/main');
    repo.git('tag', 'tune/x/batch01-nomem-run1', 'main~1');
    repo.git('tag', '-a', '-m', 'annotated', 'tune/x/final-check', 'main');
    const listed = await git.listRefs('refs/tags/tune/x');
    const expected = repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/tags/tune/x/').trim().split('\n')
      .map((l) => ({ ref: l.split(' ')[0], oid: l.split(' ')[1] }));
    expect(listed).toEqual(expected);
    repo.git('pack-refs', '--all');
    expect(await git.resolveRef('refs/heads/main')).toBe(main);
    expect(await git.listRefs('refs/tags/tune/x/')).toEqual(expected);
    expect(await git.listRefs('refs/tags/tune/none')).toEqual([]);
  });

  it('walks a long line whose non-ASCII messages straddle the pipe\'s chunks, short or long', async () => {
    const long = TempRepo.create({ 'a.txt': 'a\n' });
    // ~300 KB of messages: several 64 KB reads, with multi-byte characters at every offset.
    const script = Array.from({ length: 200 }, (_, i) => `commit refs/heads/main\ncommitter T <t@e> ${1767225600 + i} +0000\ndata <<EOM\nc${i} ${'é✓'.repeat(250 + i)}\n\nTune-N: ${i}\nEOM\n${i === 0 ? 'from refs/heads/main^0\n' : ''}`).join('');
    execFileSync('git', ['fast-import', '--quiet'], { cwd: long.dir, input: script });
    const walker = open(name, long.dir);
    const tip = long.git('rev-parse', 'main').trim();
    const expected = long.git('log', '--first-parent', '--format=%B%x00', 'main').split('\0\n').slice(0, -1).map((m) => `${m.replace(/\n+$/, '')}\n`);
    expect(expected).toHaveLength(201);
    for (const short of [false, true]) {
      const log = await collect(walker.firstParentLog(tip, { short }));
      expect(log.map((c) => c.message)).toEqual(expected);
      expect(log.map((c) => c.oid)).toEqual(long.git('rev-list', '--first-parent', 'main').trim().split('\n'));
      expect(log.at(-1)!.parents).toEqual([]);
    }
  });

  it('reads a commit as isomorphic-git normalizes its message, and walks the first-parent line only', async () => {
    const tip = repo.git('rev-parse', 'main').trim();
    const commit = await git.readCommit(tip);
    // No CR, no leading blank lines, one final newline: the fold gets the same text from both backends.
    expect(repo.git('cat-file', 'commit', tip)).toMatch(/\n\nGrüße: a hand commit\n\nbody ✓\n\nTune-Note: x\n\n\n$/);
    expect(commit.message).toBe('Grüße: a hand commit\n\nbody ✓\n\nTune-Note: x\n');
    expect(commit.tree).toBe(repo.git('rev-parse', 'main^{tree}').trim());
    expect(commit.parents).toEqual([repo.git('rev-parse', 'main~1').trim()]);
    const log = await collect(git.firstParentLog(tip));
    expect(log.map((c) => c.oid)).toEqual(repo.git('rev-list', '--first-parent', 'main').trim().split('\n'));
    expect(log.map((c) => c.message)).toEqual(
      repo.git('log', '--first-parent', '--format=%B%x00', 'main').split('\0\n').slice(0, -1).map((m) => `${m.replace(/\n+$/, '')}\n`),
    );
    const merge = log[1]!;
    expect(merge.parents).toHaveLength(2);
    expect(log.map((c) => c.message)).not.toContain('side work\n');
    // Stopping early reads no further, and the walk can be taken again.
    expect((await collect(git.firstParentLog(tip), 2)).map((c) => c.oid)).toEqual(log.slice(0, 2).map((c) => c.oid));
    expect(await collect(git.firstParentLog(log[3]!.oid))).toHaveLength(log.length - 3);
  });

  it('reads blobs, trees and changed paths as ls-tree, rev-parse and diff-tree say', async () => {
    const tip = repo.git('rev-parse', 'main').trim();
    const edit = repo.git('rev-parse', 'main~2').trim();
    expect(Buffer.from((await git.readBlobAt(tip, 'agents/prompt.md'))!).toString()).toBe('Answer politely and briefly.\n');
    expect(await git.readBlobAt(tip, 'docs/a/b/deep.txt')).toBeNull();
    expect(await git.readBlobAt(tip, 'no/such/file')).toBeNull();
    expect(await git.readBlobAt('0'.repeat(40), 'agents/prompt.md')).toBeNull();
    expect(await git.treeOidAt(tip, 'docs/a')).toBe(repo.git('rev-parse', 'main:docs/a').trim());
    expect(await git.treeOidAt(tip, '')).toBe(repo.git('rev-parse', 'main^{tree}').trim());
    expect(await git.treeOidAt(tip, 'docs/zz')).toBeNull();
    expect(Buffer.from((await git.readBlobAt(tip, 'docs/odd\nname.txt'))!).toString()).toBe('a newline in its name\n');
    const files = await git.listFiles(tip, '');
    const lsTree = repo.git('ls-tree', '-r', '-z', 'main').split('\0').filter(Boolean).map((l) => {
      const [meta, p] = l.split('\t');
      const [mode, , oid] = meta!.split(' ');
      return { path: p, oid, mode };
    });
    expect(files).toEqual(lsTree);
    expect(await git.listFiles(tip, 'docs')).toEqual(lsTree.filter((f) => f.path!.startsWith('docs/')));
    expect(await git.listFiles(tip, 'nothing-here')).toEqual([]);
    expect(await git.changedPaths(edit)).toEqual(repo.git('diff-tree', '-r', '--name-only', '--no-commit-id', edit).trim().split('\n').sort());
    const execBit = repo.git('rev-parse', 'main~3').trim();
    expect(await git.changedPaths(execBit)).toEqual(['run.sh']);
    const root = repo.git('rev-list', '--max-parents=0', 'main').trim();
    expect(await git.changedPaths(root)).toEqual(['agents/prompt.md', 'docs/a/b/deep.txt', 'docs/odd\nname.txt', 'run.sh']);
    expect(await git.readConfig('core.bare')).toBe('false');
    expect(await git.readConfig('user.nothing')).toBeNull();
    expect(await git.isShallow()).toBe(false);
  });
});

describe('GitRepo contract: both backends write what the other and native git read', () => {
  let repo: TempRepo;
  let base: string;
  const changes = new Map<string, { content: string | Uint8Array; mode?: '100644' | '100755' } | null>([
    ['.tune/x/runs/batch01-nomem-run1/results.json', { content: '[]\n' }],
    ['.tune/x/runs/batch01-nomem-run1/grüße.md', { content: 'ünïcode name\n' }],
    ['.tune/x/bin/tool', { content: new Uint8Array([0, 1, 2, 255]), mode: '100755' }],
    ['.tune/x-y/z.txt', { content: 'sorts before x/ the way git sorts trees\n' }],
    ['agents/prompt.md', { content: 'Answer politely, in one line.\n' }],
    ['docs/a/b/deep.txt', null],
  ]);
  const commit = (parent: string | null, message: string, tz = 0) => ({
    parent, changes, message, author: at(1767225600, tz), committer: at(1767229200, -120),
  });

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'docs/a/b/deep.txt': 'deep\n', 'docs/keep.txt': 'keep\n' });
    base = repo.git('rev-parse', 'HEAD').trim();
  });
  afterAll(() => repo.cleanup());

  it('gives the same commit id on both backends, and the id native commit-tree gives for that tree and message', async () => {
    const message = 'tune(x): run batch01-nomem-run1\n\nTune-Tuning: x\nTune-Step: note\n';
    const iso = await open('iso', repo.dir).writeCommit(commit(base, message, 300));
    const native = await open('native', repo.dir).writeCommit(commit(base, message, 300));
    expect(native).toBe(iso);
    const tree = repo.git('rev-parse', `${iso}^{tree}`).trim();
    const viaGit = execFileSync('git', ['commit-tree', tree, '-p', base, '-m', message.replace(/\n$/, '')], {
      cwd: repo.dir,
      env: {
        ...process.env, ...repo.env,
        GIT_AUTHOR_DATE: '@1767225600 -0500', GIT_COMMITTER_DATE: '@1767229200 +0200',
      },
      encoding: 'utf8',
    }).trim();
    expect(viaGit).toBe(iso);
    expect(repo.git('-c', 'core.quotepath=off', 'ls-tree', '-r', '--name-only', iso).trim().split('\n')).toEqual([
      '.tune/x-y/z.txt', '.tune/x/bin/tool', '.tune/x/runs/batch01-nomem-run1/grüße.md', '.tune/x/runs/batch01-nomem-run1/results.json',
      'agents/prompt.md', 'docs/keep.txt',
    ]);
    expect(repo.git('ls-tree', iso, '.tune/x/bin/tool').split(' ')[0]).toBe('100755');
    expect(repo.fsck()).toBe('');
  });

  it.each(['iso', 'native'] as const)('writeBlobFiles on %s stores files as git hash-object does (a newline in a name, bytes, no filters), and a commit names them by id', async (name) => {
    const git = open(name, repo.dir);
    const dir = mkdtempSync(path.join(os.tmpdir(), `git-tune-blobs-${name}-`));
    try {
      const files = { 'a.txt': 'line\r\n', 'odd\nname.log': 'a newline in its name\n', 'bin': Buffer.from([0, 1, 2, 255]) };
      for (const [f, content] of Object.entries(files)) writeFileSync(path.join(dir, f), content);
      const paths = Object.keys(files).map((f) => path.join(dir, f));
      const oids = await git.writeBlobFiles(paths);
      expect(oids).toEqual(paths.map((p) => execFileSync('git', ['hash-object', '--no-filters', p], { encoding: 'utf8' }).trim()));
      expect(await git.writeBlobFiles([])).toEqual([]);
      const made = await git.writeCommit({
        parent: base, changes: new Map<string, { oid: string } | { content: string }>([['logs/a.txt', { oid: oids[0]! }], ['logs/bin', { oid: oids[2]! }], ['logs/small', { content: 'x' }]]),
        message: `logs by ${name}\n`, author: person, committer: person,
      });
      expect(repo.git('cat-file', '-p', `${made}:logs/a.txt`)).toBe('line\r\n');
      expect(repo.git('rev-parse', `${made}:logs/bin`).trim()).toBe(oids[2]);
      expect(repo.fsck()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([['iso', 'native'], ['native', 'iso']] as const)('what %s writes, %s reads: commits, files, history, changed paths', async (writer, reader) => {
    const w = open(writer, repo.dir);
    const first = await w.writeCommit(commit(base, `first by ${writer}\n`));
    const second = await w.writeCommit({
      parent: first, changes: new Map([['docs/keep.txt', null], ['notes/n.txt', { content: `by ${writer}\n` }]]),
      message: `second by ${writer}\n\nTune-Tuning: x\nTune-Step: note\n`, author: person, committer: person,
    });
    const empty = await w.writeCommit({ parent: null, changes: new Map(), message: 'empty root', author: person, committer: person });
    const r = open(reader, repo.dir);
    expect((await r.readCommit(second)).parents).toEqual([first]);
    expect((await r.readCommit(empty)).message).toBe('empty root\n');
    expect((await r.readCommit(empty)).tree).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    expect(Buffer.from((await r.readBlobAt(second, 'notes/n.txt'))!).toString()).toBe(`by ${writer}\n`);
    expect(Buffer.from((await r.readBlobAt(second, '.tune/x/bin/tool'))!)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await r.readBlobAt(second, 'docs/keep.txt')).toBeNull();
    expect(await r.changedPaths(second)).toEqual(['docs/keep.txt', 'notes/n.txt']);
    expect((await collect(r.firstParentLog(second))).map((c) => c.message)).toEqual([
      `second by ${writer}\n\nTune-Tuning: x\nTune-Step: note\n`, `first by ${writer}\n`, 'project\n',
    ]);
    expect(repo.fsck()).toBe('');
  });
});

describe.each(BACKENDS)('GitRepo contract: %s moves refs by compare-and-swap and refreshes the working tree', (name, make) => {
  let repo: TempRepo;
  let git: Repo;
  const ref = 'refs/heads/main';
  const step = (parent: string, file: string, content = `${file}\n`) =>
    git.writeCommit({ parent, changes: new Map([[file, { content }]]), message: `add ${file}\n`, author: person, committer: person });

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'docs/old/gone.txt': 'gone\n' });
    git = make(repo.dir);
  });
  afterAll(() => repo.cleanup());

  it('swaps, refuses a moved ref, a ref that appeared, a held lock, a ref in the way; deletes', async () => {
    const tip = (await git.resolveRef(ref))!;
    const ours = await step(tip, 'a.txt');
    await git.compareAndSwapRef(ref, ours, tip);
    expect(repo.git('rev-parse', 'main').trim()).toBe(ours);
    await expect(git.compareAndSwapRef(ref, tip, tip)).rejects.toMatchObject({ code: 'ref-moved', exitCode: 4 });
    expect(repo.git('rev-parse', 'main').trim()).toBe(ours);

    repo.git('branch', 'tune/x', tip);
    await expect(git.compareAndSwapRef('refs/heads/tune/x', ours, null)).rejects.toMatchObject({ code: 'ref-moved', exitCode: 4 });

    const lock = repo.path('.git/refs/heads/tune/x.lock');
    writeFileSync(lock, '');
    await expect(git.compareAndSwapRef('refs/heads/tune/x', ours, tip)).rejects.toMatchObject({ code: 'ref-locked', exitCode: 4 });
    expect(existsSync(lock)).toBe(true);
    expect(repo.git('rev-parse', 'tune/x').trim()).toBe(tip);
    execFileSync('rm', [lock]);
    repo.git('branch', '-D', 'tune/x');

    repo.git('branch', '-f', 'tune', tip);
    await expect(git.compareAndSwapRef('refs/heads/tune/y', ours, null)).rejects.toMatchObject({ code: 'ref-conflict', exitCode: 2 });
    repo.git('branch', '-D', 'tune');

    await git.compareAndSwapRef(`refs/tags/tune/${name}/run1`, ours, null);
    expect(repo.git('rev-parse', `tune/${name}/run1`).trim()).toBe(ours);
    repo.git('pack-refs', '--all');
    await git.deleteRef(`refs/tags/tune/${name}/run1`, ours);
    expect(repo.git('tag', '-l', `tune/${name}/*`)).toBe('');
    expect(readFileSync(repo.path('.git/packed-refs'), 'utf8')).not.toContain(`tune/${name}/run1`);
    expect(repo.fsck()).toBe('');
  });

  it('checks out what a commit holds under index.lock: git status is clean, deleted files and empty folders go', async () => {
    const tip = (await git.resolveRef(ref))!;
    const next = await git.writeCommit({
      parent: tip,
      changes: new Map([
        ['.tune/x/config.yaml', { content: 'limit: 3\n' }],
        ['tools/run.sh', { content: '#!/bin/sh\n', mode: '100755' }],
        ['docs/old/gone.txt', null],
      ]),
      message: 'step\n', author: person, committer: person,
    });
    await git.withIndexLock(async () => {
      expect(existsSync(repo.path('.git/index.lock'))).toBe(true);
      await git.compareAndSwapRef(ref, next, tip);
      // a.txt: unchanged by this step, moved in by the last test's swap without a checkout.
      await git.checkoutPaths(next, ['.tune/x/config.yaml', 'tools/run.sh', 'docs/old/gone.txt', 'a.txt']);
    });
    expect(existsSync(repo.path('.git/index.lock'))).toBe(false);
    expect(readFileSync(repo.path('.tune/x/config.yaml'), 'utf8')).toBe('limit: 3\n');
    expect(existsSync(repo.path('docs/old'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.git('diff-files', '--name-only')).toBe('');
    expect(repo.git('ls-files', '-s', 'tools/run.sh').split(' ')[0]).toBe('100755');
    expect(repo.fsck()).toBe('');
  });

  it('refuses an index it cannot keep the same on both backends (v4) before writing', async () => {
    repo.git('update-index', '--index-version', '4');
    await expect(git.withIndexLock(async () => 'ran')).rejects.toMatchObject({ code: 'index-unsupported' });
    expect(existsSync(repo.path('.git/index.lock'))).toBe(false);
    repo.git('update-index', '--index-version', '3');
    expect(await git.withIndexLock(async () => 'ran')).toBe('ran');
  });
});

describe('GitRepo contract: a chain of commits and a set of refs in one write', () => {
  it('writeCommitChain gives the commits writeCommit gives one by one, names earlier ones in later messages, and createRefs lands all refs or none', async () => {
    const made: Record<string, string[]> = {};
    for (const [name, make] of BACKENDS) {
      const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
      try {
        const git = make(repo.dir);
        const base = repo.git('rev-parse', 'main').trim();
        // 300 commits: more than one pack of a native chain (250 commits each).
        const chain = await git.writeCommitChain(base, (written) => {
          if (written.length >= 300) return null;
          const i = written.length;
          return {
            changes: new Map([[`.tune/x/runs/run${i % 40}/file${i}.md`, { content: `step ${i}\n` }], ...(i % 7 === 6 ? [['agents/prompt.md', null] as const] : [])]),
            message: `step ${i}\n\nafter ${written[i - 1] ?? 'nothing'}\n`, author: person, committer: person,
          };
        });
        let parent: string | null = base;
        const single: string[] = [];
        for (let i = 0; i < 300; i++) {
          parent = await git.writeCommit({
            parent,
            changes: new Map([[`.tune/x/runs/run${i % 40}/file${i}.md`, { content: `step ${i}\n` }], ...(i % 7 === 6 ? [['agents/prompt.md', null] as const] : [])]),
            message: `step ${i}\n\nafter ${single[i - 1] ?? 'nothing'}\n`, author: person, committer: person,
          });
          single.push(parent);
        }
        expect(chain).toEqual(single);
        await git.createRefs([['refs/heads/chain', chain.at(-1)!], ['refs/tags/tune/x/a', chain[0]!]]);
        expect(repo.git('rev-list', '--count', 'chain').trim()).toBe('301');
        expect(repo.git('log', '-1', '--format=%B', 'chain').trim()).toBe(`step 299\n\nafter ${chain[298]}`);
        expect(repo.fsck()).toBe('');
        // One that exists: none of them is created.
        await expect(git.createRefs([['refs/tags/tune/x/b', chain[1]!], ['refs/tags/tune/x/a', chain[2]!]])).rejects.toThrow();
        expect(repo.git('tag', '-l', 'tune/x/*').trim().split('\n')).toEqual(['tune/x/a']);
        made[name] = chain;
      } finally {
        repo.cleanup();
      }
    }
    expect(made.iso).toEqual(made.native);
  }, 120_000);
});

describe.each(BACKENDS)('GitRepo contract: %s talks to remotes and moves the working tree as native git does', (name, make) => {
  let repo: TempRepo;
  let remote: TempRepo;
  let other: TempRepo;
  let globalDir: string;
  let git: Repo;
  let env: Record<string, string | undefined>;

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'docs/a.txt': 'a\n' });
    remote = new TempRepo('git-tune-remote-');
    remote.git('init', '-q', '--bare');
    repo.git('remote', 'add', 'origin', remote.dir);
    globalDir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-global-'));
    env = { ...process.env, ...repo.env, GIT_CONFIG_GLOBAL: path.join(globalDir, 'gitconfig') };
    git = make(repo.dir);
  });
  afterAll(() => {
    for (const r of [repo, remote, other]) r?.cleanup();
    rmSync(globalDir, { recursive: true, force: true });
  });

  it('gitPath: where git keeps a file, core.hooksPath honoured', async () => {
    expect(await git.gitPath('hooks', env)).toBe(path.resolve(repo.dir, repo.git('rev-parse', '--git-path', 'hooks').trim()));
    expect(await git.gitPath('hooks', env)).toBe(repo.path('.git', 'hooks'));
    repo.git('config', 'core.hooksPath', 'my-hooks');
    expect(await git.gitPath('hooks', env)).toBe(repo.path('my-hooks'));
    repo.git('config', '--unset', 'core.hooksPath');
  });

  it('configGet reads every scope as git config does; readConfig the repository\'s own only', async () => {
    writeFileSync(env.GIT_CONFIG_GLOBAL!, '[core]\n\tcommentChar = %\n[tune]\n\tboth = global\n');
    repo.git('config', 'tune.both', 'local');
    expect(await git.configGet('core.commentChar', env)).toBe('%');
    expect(await git.readConfig('core.commentChar')).toBeNull();
    expect(await git.configGet('tune.both', env)).toBe(execFileSync('git', ['config', '--get', 'tune.both'], { cwd: repo.dir, env, encoding: 'utf8' }).trim());
    expect(await git.configGet('tune.both', env)).toBe('local');
    expect(await git.configGet('tune.nothing', env)).toBeNull();
  });

  it('configSet writes the repository\'s own config (a value git must quote included); configRemoveSection removes a section once', async () => {
    const line = `sh -c 'echo "$1"' x %O 'a b'`;
    await git.configSet('merge.test-driver.driver', line, env);
    expect(repo.git('config', '--local', '--get', 'merge.test-driver.driver').replace(/\n$/, '')).toBe(line);
    expect(await git.configGet('merge.test-driver.driver', env)).toBe(line);
    expect(await git.configRemoveSection('merge.test-driver', env)).toBe(true);
    expect(await git.configGet('merge.test-driver.driver', env)).toBeNull();
    expect(await git.configRemoveSection('merge.test-driver', env)).toBe(false);
  });

  it('stagedPaths and readStaged: the index against HEAD, as git diff --cached and git show :file see it', async () => {
    repo.write({ 'agents/prompt.md': 'staged\n', 'new/file.md': 'new\n', 'untracked.txt': 'u\n' });
    repo.git('add', 'agents/prompt.md', 'new/file.md');
    repo.git('rm', '-q', '--cached', 'docs/a.txt');
    repo.write({ 'agents/prompt.md': 'changed again, not staged\n' });
    const staged = await git.stagedPaths(env);
    expect(staged).toEqual(repo.git('diff', '--cached', '--name-only', '-z', 'HEAD').split('\0').filter(Boolean));
    expect(staged).toEqual(['agents/prompt.md', 'docs/a.txt', 'new/file.md']);
    expect(await git.readStaged('agents/prompt.md', env)).toBe('staged\n');
    expect(await git.readStaged('docs/a.txt', env)).toBeNull();
    expect(await git.readStaged('untracked.txt', env)).toBeNull();
  });

  it('uncommittedPaths: tracked files changed, staged or not, untracked ones left out', async () => {
    const paths = await git.uncommittedPaths(env);
    expect(paths).toEqual(repo.git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean).map((l) => l.slice(3)));
    expect(paths).toEqual(['agents/prompt.md', 'docs/a.txt', 'new/file.md']);
    repo.git('commit', '-q', '-m', 'staged work');
    repo.git('checkout', '--', 'agents/prompt.md');
    expect(await git.uncommittedPaths(env)).toEqual([]);
  });

  it('push reports each ref as git push --porcelain does: new, up to date, fast-forward; a rejected push fails naming the command', async () => {
    repo.git('tag', 'tune/x/run1');
    const first = await git.push('origin', ['refs/heads/main:refs/heads/main', 'refs/tags/tune/x/*:refs/tags/tune/x/*'], { env });
    expect([...first.refs].sort((a, b) => a.to.localeCompare(b.to))).toEqual([
      { flag: '*', from: 'refs/heads/main', to: 'refs/heads/main', summary: '[new branch]' },
      { flag: '*', from: 'refs/tags/tune/x/run1', to: 'refs/tags/tune/x/run1', summary: '[new tag]' },
    ]);
    expect(remote.git('rev-parse', 'main', 'tune/x/run1')).toBe(repo.git('rev-parse', 'main', 'tune/x/run1'));
    const old = repo.git('rev-parse', 'main').trim();
    repo.write({ 'b.txt': 'b\n' });
    repo.git('add', 'b.txt');
    repo.git('commit', '-q', '-m', 'b');
    const tip = repo.git('rev-parse', 'main').trim();
    const second = await git.push('origin', ['refs/heads/main:refs/heads/main', 'refs/tags/tune/x/*:refs/tags/tune/x/*'], { env });
    // In git's order, which is not the refspecs' (up-to-date refs come first).
    expect([...second.refs].sort((a, b) => a.to.localeCompare(b.to))).toEqual([
      { flag: ' ', from: 'refs/heads/main', to: 'refs/heads/main', summary: `${old.slice(0, 7)}..${tip.slice(0, 7)}` },
      { flag: '=', from: 'refs/tags/tune/x/run1', to: 'refs/tags/tune/x/run1', summary: '[up to date]' },
    ]);
    expect(remote.git('rev-parse', 'main').trim()).toBe(tip);
    await expect(git.push('origin', [`${old}:refs/heads/main`], { env })).rejects.toMatchObject({
      code: 'git-failed', message: expect.stringContaining(`git push --porcelain origin ${old}:refs/heads/main failed (exit 1)`),
    });
    expect(remote.git('rev-parse', 'main').trim()).toBe(tip);
  });

  it('push with verify false runs no pre-push hook, and quiet reports no refs', async () => {
    const hook = repo.path('.git', 'hooks', 'pre-push');
    mkdirSync(path.dirname(hook), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\necho refused by the hook >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    await expect(git.push('origin', ['refs/heads/main:refs/heads/side'], { env })).rejects.toMatchObject({ message: expect.stringContaining('refused by the hook') });
    const quiet = await git.push('origin', ['refs/heads/main:refs/heads/side'], { env, verify: false, quiet: true });
    expect(quiet.refs).toEqual([]);
    expect(remote.git('rev-parse', 'side').trim()).toBe(repo.git('rev-parse', 'main').trim());
    rmSync(hook);
  });

  it('fetch then fastForward moves a clone\'s checked-out branch, index and working tree; a diverged branch is refused', async () => {
    other = new TempRepo('git-tune-other-');
    other.git('clone', '-q', remote.dir, '.');
    const mine = make(other.dir);
    const otherEnv = { ...process.env, ...other.env };
    repo.write({ 'c.txt': 'c\n' });
    repo.git('add', 'c.txt');
    repo.git('commit', '-q', '-m', 'c');
    repo.git('push', '-q', 'origin', 'main');
    await mine.fetch('origin', ['refs/heads/main:refs/remotes/origin/main'], otherEnv);
    expect(other.git('rev-parse', 'origin/main').trim()).toBe(repo.git('rev-parse', 'main').trim());
    expect(existsSync(other.path('c.txt'))).toBe(false);
    await mine.fastForward('refs/remotes/origin/main', otherEnv);
    expect(other.git('rev-parse', 'HEAD').trim()).toBe(repo.git('rev-parse', 'main').trim());
    expect(readFileSync(other.path('c.txt'), 'utf8')).toBe('c\n');
    expect(other.git('status', '--porcelain')).toBe('');
    // Diverged: a commit here and another there.
    other.write({ 'd.txt': 'here\n' });
    other.git('add', 'd.txt');
    other.git('commit', '-q', '-m', 'here');
    repo.write({ 'e.txt': 'there\n' });
    repo.git('add', 'e.txt');
    repo.git('commit', '-q', '-m', 'there');
    repo.git('push', '-q', 'origin', 'main');
    await mine.fetch('origin', ['refs/heads/main:refs/remotes/origin/main'], otherEnv);
    const before = other.git('rev-parse', 'HEAD').trim();
    await expect(mine.fastForward('refs/remotes/origin/main', otherEnv)).rejects.toMatchObject({ code: 'git-failed' });
    expect(other.git('rev-parse', 'HEAD').trim()).toBe(before);
    await expect(mine.fetch('origin', ['refs/heads/nope:refs/heads/nope'], otherEnv)).rejects.toMatchObject({
      code: 'git-failed', message: expect.stringContaining('git fetch origin refs/heads/nope:refs/heads/nope failed'),
    });
  });

  it('switchBranch and detachHead check out as git switch does', async () => {
    const main = repo.git('rev-parse', 'main').trim();
    repo.git('branch', 'side', 'main~1');
    await git.switchBranch('side', env);
    expect(await git.headRef()).toBe('refs/heads/side');
    expect(existsSync(repo.path('e.txt'))).toBe(false);
    await git.detachHead(main, env);
    expect(await git.headRef()).toBeNull();
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(main);
    expect(readFileSync(repo.path('e.txt'), 'utf8')).toBe('there\n');
    await expect(git.switchBranch('no-such-branch', env)).rejects.toMatchObject({ code: 'git-failed', message: expect.stringContaining('git switch --quiet no-such-branch failed') });
    await git.switchBranch('main', env);
    expect(await git.headRef()).toBe('refs/heads/main');
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe('');
  });
});

describe('initRepo: a new repository with a first commit', () => {
  const dirs: string[] = [];
  const fresh = (files: Record<string, string>) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-init-'));
    dirs.push(dir);
    for (const [f, c] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      writeFileSync(path.join(dir, f), c);
    }
    return dir;
  };
  const gitIn = (dir: string, env: Record<string, string | undefined>, ...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const opts = { branch: 'main', message: 'The example agent and its prose', fallbackIdentity: { name: 'Fallback', email: 'fallback@example.invalid' } };

  it('commits every file on the branch, with the identity git knows and no local one', async () => {
    const dir = fresh({ 'agent.mjs': 'x\n', 'agents/a.md': 'prose\n' });
    const env = { ...process.env, ...new TempRepo().env, GIT_CONFIG_GLOBAL: path.join(dir, '..', 'none') };
    expect(await initRepo(dir, env, opts)).toEqual({ identitySet: false });
    expect(gitIn(dir, env, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(gitIn(dir, env, 'log', '--format=%an <%ae>|%s').trim()).toBe('Tune Tester <tester@example.com>|The example agent and its prose');
    expect(gitIn(dir, env, 'ls-files').trim().split('\n')).toEqual(['agent.mjs', 'agents/a.md']);
    expect(gitIn(dir, env, 'status', '--porcelain')).toBe('');
    expect(() => gitIn(dir, env, 'config', '--local', '--get', 'user.name')).toThrow();
    gitIn(dir, env, 'fsck', '--strict');
  });

  it('sets the fallback identity in the new repository when git knows none, and runs no hook of the user', async () => {
    const dir = fresh({ 'a.txt': 'a\n' });
    const template = fresh({ 'hooks/pre-commit': '#!/bin/sh\nexit 1\n' });
    chmodSync(path.join(template, 'hooks/pre-commit'), 0o755);
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: path.join(template, 'gitconfig'), GIT_TEMPLATE_DIR: template,
    };
    writeFileSync(env.GIT_CONFIG_GLOBAL!, '[commit]\n\tgpgsign = true\n');
    expect(await initRepo(dir, env, opts)).toEqual({ identitySet: true });
    expect(gitIn(dir, env, 'config', '--local', '--get', 'user.name').trim()).toBe('Fallback');
    expect(gitIn(dir, env, 'log', '--format=%an <%ae>|%s').trim()).toBe('Fallback <fallback@example.invalid>|The example agent and its prose');
  });
});

describe('backend choice', () => {
  it('follows GIT_TUNE_BACKEND, else native when git is on PATH, else iso', () => {
    expect(chooseBackend({ GIT_TUNE_BACKEND: 'iso', PATH: process.env.PATH })).toBe('iso');
    expect(chooseBackend({ GIT_TUNE_BACKEND: 'Native', PATH: '' })).toBe('native');
    expect(chooseBackend({ PATH: process.env.PATH })).toBe('native');
    expect(chooseBackend({ PATH: '/nonexistent' })).toBe('iso');
    expect(() => chooseBackend({ GIT_TUNE_BACKEND: 'libgit2' })).toThrow(/iso or native/);
  });
});
