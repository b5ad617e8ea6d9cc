import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listAbandoned, lookAtRunTags, makeWayForRun, settleRunTags, type TuningView } from '../../src/app/abandon.js';
import { formatAbandonRecord, parseAbandonedRef, parseAbandonRecord, tagsMatchRuns, tagsOffTheBranch } from '../../src/core/abandoned.js';
import { IsoGitRepo } from '../../src/git/iso.js';
import { NativeGitRepo } from '../../src/git/native-repo.js';
import type { GitRepo, Person } from '../../src/git/types.js';
import { readCaseLog, writeRunLogs } from '../../src/run/logs.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The pieces under `git tune undo` and the move aside of abandoned steps, in
 * this process on real repositories (the CLI's start would be most of the
 * time): the reflog entry native git reads on both backends, the logs ref
 * replacing a run's folder whole, the record's format, and which run tags
 * move (off the branch) and which stay (reachable, or on a remote).
 */
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

const who: Person = { name: 'Tune Tester', email: 'tester@example.com', timestamp: 1767225600, timezoneOffset: -120 };
const ctx = (repo: TempRepo) => ({ env: { ...process.env, ...repo.env }, now: new Date('2026-01-01T00:00:00Z') });

function threeCommits(): { repo: TempRepo; oids: string[] } {
  const repo = TempRepo.create({ 'a.txt': '1\n' });
  repos.push(repo);
  repo.git('switch', '-q', '-c', 'tune/x');
  for (const n of [2, 3]) {
    repo.write({ 'a.txt': `${n}\n` });
    repo.git('commit', '-q', '-am', `commit ${n}`);
  }
  return { repo, oids: repo.git('log', '--format=%H', 'tune/x').trim().split('\n').reverse() };
}

const backends: Array<[string, (r: TempRepo) => GitRepo]> = [
  ['iso', (r) => new IsoGitRepo(r.dir, r.path('.git'))],
  ['native', (r) => new NativeGitRepo(r.dir, r.path('.git'))],
];

describe('abandoned steps: the git pieces', () => {
  for (const [backend, open] of backends) {
    it(`${backend}: a compare-and-swap with a note writes the reflog native git reads, the branch's and HEAD's`, async () => {
      const { repo, oids } = threeCommits();
      const git = open(repo);
      await git.compareAndSwapRef('refs/heads/tune/x', oids[0]!, oids[2]!, { message: 'tune undo: moving back 2 steps', committer: who });
      expect(repo.git('rev-parse', 'tune/x').trim()).toBe(oids[0]);
      expect(repo.git('reflog', '-1', '--format=%gs', 'tune/x').trim()).toBe('tune undo: moving back 2 steps');
      expect(repo.git('rev-parse', 'tune/x@{1}').trim()).toBe(oids[2]);
      expect(repo.git('reflog', '-1', '--format=%gs %gn <%ge>').trim()).toBe('tune undo: moving back 2 steps Tune Tester <tester@example.com>');
      expect(repo.git('reflog', '-1', '--format=%gs', 'HEAD').trim()).toBe('tune undo: moving back 2 steps');
      expect(await git.isAncestor(oids[0]!, oids[2]!)).toBe(true);
      expect(await git.isAncestor(oids[2]!, oids[0]!)).toBe(false);
      expect(repo.fsck()).toBe('');
    });
  }

  it('a run\'s logs replace its folder whole: a file of an earlier run of the same name is not served as the new one\'s', async () => {
    const repo = TempRepo.create();
    repos.push(repo);
    const git = new NativeGitRepo(repo.dir, repo.path('.git'));
    const file = (name: string, text: string) => {
      repo.write({ [`logs-src/${name}`]: text });
      return repo.path(`logs-src/${name}`);
    };
    await writeRunLogs(git, 'x', 'batch01-nomem-run1', [
      { id: 'a', stdoutFile: file('a.out', 'old a\n'), stderrFile: file('a.err', ''), rawResult: '{"answer":"old"}', transcriptFile: file('a.jsonl', '{"old":true}\n') },
      { id: 'b', stdoutFile: file('b.out', 'old b\n'), stderrFile: file('b.err', ''), rawResult: null },
    ], ctx(repo));
    await writeRunLogs(git, 'x', 'batch01-nomem-run1', [
      { id: 'a', stdoutFile: file('a2.out', 'new a\n'), stderrFile: file('a2.err', ''), rawResult: null },
    ], ctx(repo));
    expect(await readCaseLog(git, 'x', 'batch01-nomem-run1', 'a', 'stdout')).toBe('new a\n');
    expect(await readCaseLog(git, 'x', 'batch01-nomem-run1', 'a', 'transcript.jsonl')).toBeNull();
    expect(await readCaseLog(git, 'x', 'batch01-nomem-run1', 'a', 'result.json')).toBeNull();
    expect(await readCaseLog(git, 'x', 'batch01-nomem-run1', 'b', 'stdout')).toBeNull();
    // The earlier run's logs stay in the logs ref's history.
    expect(repo.git('show', 'refs/tune-logs/x~1:batch01-nomem-run1/b/stdout')).toBe('old b\n');
  });

  it('the record of a move round-trips, and names its refs', () => {
    const record = {
      tuning: 'demo', at: '2026-01-01T00:00:00.000Z', why: 'git tune undo 3', steps: 3, from: 'a'.repeat(40), tip: 'b'.repeat(40),
      runs: [{ run: 'final-check', commit: 'c'.repeat(40) }, { run: 'batch02-mem-run1', commit: 'd'.repeat(40) }],
    };
    const message = formatAbandonRecord(record);
    expect(message.split('\n')[0]).toBe('tune(demo): 3 abandoned steps (2 runs) moved aside: git tune undo 3');
    expect(parseAbandonRecord(message)).toEqual(record);
    expect(parseAbandonRecord(formatAbandonRecord({ ...record, from: null, runs: [] }))).toEqual({ ...record, from: null, runs: [] });
    expect(parseAbandonRecord('a hand commit\n')).toBeNull();
    expect(parseAbandonedRef('demo', 'refs/tune-abandoned/demo/12/tags/final-check')).toEqual({ n: 12, part: 'tag', run: 'final-check' });
    expect(parseAbandonedRef('demo', 'refs/tune-abandoned/demo/1/record')).toEqual({ n: 1, part: 'record' });
    expect(parseAbandonedRef('demo', 'refs/tune-abandoned/demo@x/1/record')).toBeNull();
    expect(parseAbandonedRef('demo', 'refs/tune-abandoned/demo/0/tip')).toBeNull();
    expect(tagsOffTheBranch([{ run: 'r1', commit: 'x' }, { run: 'r2', commit: 'y' }], (run) => (run === 'r1' ? 'x' : null))).toEqual([{ run: 'r2', commit: 'y' }]);
    const runs = new Map([['r1', { runOid: 'x' }], ['r2', { runOid: null }]]);
    expect(tagsMatchRuns([{ run: 'r1', commit: 'x' }], runs)).toBe(true);
    expect(tagsMatchRuns([], runs)).toBe(false); // r1's tag is missing
    expect(tagsMatchRuns([{ run: 'r1', commit: 'x' }, { run: 'r3', commit: 'z' }], runs)).toBe(false); // a tag of no run
    expect(tagsMatchRuns([{ run: 'r1', commit: 'y' }], runs)).toBe(false); // on another commit
  });

  it('a look at the tags taken early: trusted under the tool lock while the branch is at the tip, taken again when it disagrees; nothing without the lock', async () => {
    const { repo, oids } = threeCommits();
    const git = new NativeGitRepo(repo.dir, repo.path('.git'));
    const marker = repo.path('.git/tune/x/cache/run-tags-checked');
    const driver = repo.path('.git/tune/x/driver');
    const tags = () => repo.git('tag', '-l', 'tune/x/*').trim().split('\n');
    repo.git('tag', 'tune/x/batch01-nomem-run1', oids[1]!);
    const view: TuningView = { repo: git, name: 'x', tip: oids[2]!, runs: new Map([['batch01-nomem-run1', { runOid: oids[1]! }]]), commits: oids.slice(1).map((oid) => ({ oid })) };

    // The tags agree, but another live process drives the tuning: the lock is not had and the tip is not marked.
    mkdirSync(path.dirname(driver), { recursive: true });
    writeFileSync(driver, JSON.stringify({ pid: process.ppid, start: null, host: os.hostname(), command: 'git tune auto', since: new Date().toISOString() }));
    expect(await settleRunTags(view, ctx(repo), lookAtRunTags(git, 'x', oids[2]!))).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    rmSync(driver);

    // The branch moved after the look (an undo): nothing is settled for the tip looked at.
    const early = lookAtRunTags(git, 'x', oids[2]!);
    expect(await early).toEqual([{ run: 'batch01-nomem-run1', commit: oids[1] }]);
    repo.git('update-ref', 'refs/heads/tune/x', oids[1]!);
    expect(await settleRunTags(view, ctx(repo), early)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    repo.git('update-ref', 'refs/heads/tune/x', oids[2]!);

    // A look that disagrees (a tag off the branch, deleted by hand since) is not acted on: the tags are listed again under the lock.
    repo.git('switch', '-q', '-c', 'side');
    repo.write({ 'a.txt': 'side\n' });
    repo.git('commit', '-q', '-am', 'side');
    repo.git('tag', 'tune/x/batch02-nomem-run1', 'HEAD');
    repo.git('switch', '-q', 'tune/x');
    const stale = lookAtRunTags(git, 'x', oids[2]!);
    expect((await stale as { run: string }[]).map((t) => t.run)).toEqual(['batch01-nomem-run1', 'batch02-nomem-run1']);
    repo.git('tag', '-d', 'tune/x/batch02-nomem-run1');
    expect(await settleRunTags(view, ctx(repo), stale)).toEqual([]);
    expect(tags()).toEqual(['tune/x/batch01-nomem-run1']);
    expect(repo.git('for-each-ref', 'refs/tune-abandoned/').trim()).toBe('');
    expect(readFileSync(marker, 'utf8')).toBe(`${oids[2]}\n`);
    expect(await lookAtRunTags(git, 'x', oids[2]!)).toBe('settled');
    expect(repo.fsck()).toBe('');
  });

  it('which run tags move aside: off the branch, not on a remote; a tag the branch reaches stays and a run needing it is refused', async () => {
    const { repo, oids } = threeCommits();
    const git = new NativeGitRepo(repo.dir, repo.path('.git'));
    // Three tags: on a commit a side branch made and then lost, on one a remote-tracking branch holds, on one the branch reaches.
    repo.git('switch', '-q', '-c', 'side');
    repo.write({ 'a.txt': 'side\n' });
    repo.git('commit', '-q', '-am', 'side');
    const lost = repo.git('rev-parse', 'HEAD').trim();
    repo.git('switch', '-q', '-c', 'fetched', 'tune/x');
    repo.write({ 'a.txt': 'pulled\n' });
    repo.git('commit', '-q', '-am', 'pulled, not merged');
    const pulled = repo.git('rev-parse', 'HEAD').trim();
    repo.git('update-ref', 'refs/remotes/origin/tune/x', pulled);
    repo.git('switch', '-q', 'tune/x');
    repo.git('branch', '-q', '-D', 'side', 'fetched');
    repo.git('tag', 'tune/x/batch01-nomem-run1', lost);
    repo.git('tag', 'tune/x/batch01-mem-run1', pulled);
    repo.git('tag', 'tune/x/final-check', oids[0]!);
    const view: TuningView = { repo: git, name: 'x', tip: oids[2]!, runs: new Map(), commits: oids.slice(1).map((oid) => ({ oid })) };

    const notices = await settleRunTags(view, ctx(repo));
    expect(notices).toEqual(['1 run tag of steps no longer on the branch moved aside (1 abandoned step): git tune log --abandoned']);
    expect(repo.git('tag', '-l', 'tune/x/*').trim().split('\n')).toEqual(['tune/x/batch01-mem-run1', 'tune/x/final-check']);
    expect(repo.git('rev-parse', 'refs/tune-abandoned/x/1/tags/batch01-nomem-run1').trim()).toBe(lost);
    expect(await settleRunTags(view, ctx(repo))).toEqual([]); // once per tip

    // A run that needs the name of the tag a remote holds moves it aside (a dry run only says so); one the branch reaches is refused.
    const refs = () => repo.git('for-each-ref', '--format=%(refname) %(objectname)');
    const before = refs();
    expect(await makeWayForRun(view, 'batch01-mem-run1', ctx(repo), { dryRun: true })).toEqual(['batch01-mem-run1']);
    expect(refs()).toBe(before);
    await expect(makeWayForRun(view, 'final-check', ctx(repo), { dryRun: true })).rejects.toMatchObject({ code: 'tag-exists' });
    expect(await makeWayForRun(view, 'batch01-mem-run1', ctx(repo))).toEqual(['batch01-mem-run1']);
    expect(repo.git('tag', '-l', 'tune/x/*').trim()).toBe('tune/x/final-check');
    await expect(makeWayForRun(view, 'final-check', ctx(repo))).rejects.toMatchObject({ code: 'tag-exists', exitCode: 2 });
    const moves = await listAbandoned(git, 'x');
    expect(moves.map((m) => [m.n, m.why, m.kept.map((k) => k.run)])).toEqual([
      [1, 'the branch was rewritten (reset or rebase)', ['batch01-nomem-run1']],
      [2, 'a new batch01-mem-run1 needed the tag name', ['batch01-mem-run1']],
    ]);
    expect(repo.fsck()).toBe('');
  });
});
