import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * `git tune push` / `git tune pull` against a bare repository: the branch, its
 * run tags and its logs ref travel together; a pull on the branch
 * fast-forwards it, a pull from another branch moves the tuning branch
 * without touching the working tree; native git checks every ref.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');

describe('git tune push and pull', () => {
  let repo: TempRepo;
  let remote: TempRepo;
  let clone: TempRepo;

  const ok = async (where: TempRepo, args: string[]) => {
    const r = await tuneAsync(where, args);
    expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
    return r;
  };
  const refs = (where: TempRepo) =>
    where.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/tune', 'refs/tags/tune', 'refs/tune-logs').trim().split('\n').filter(Boolean);

  beforeAll(async () => {
    repo = TempRepo.create({
      'agents/prompt.md': 'Answer politely.\n',
      'cases.yaml': '- { id: a, class: c, input: a, checks: [{ type: contains, value: a }] }\n',
    });
    remote = new TempRepo('git-tune-remote-');
    remote.git('init', '-q', '--bare');
    repo.git('remote', 'add', 'origin', remote.dir);
    await ok(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
  });
  afterAll(() => {
    for (const r of [repo, remote, clone]) r?.cleanup();
  });

  it('push before any run: the branch alone (no logs ref yet), said on stdout; --json names the refspecs', async () => {
    const r = await ok(repo, ['push']);
    expect(r.stdout).toBe('pushed tune/desk, its run tags to origin\n');
    expect(refs(remote)).toEqual([`refs/heads/tune/desk ${repo.git('rev-parse', 'tune/desk').trim()}`]);
    const json = await ok(repo, ['push', 'origin', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      remote: 'origin',
      refspecs: ['refs/heads/tune/desk:refs/heads/tune/desk', 'refs/tags/tune/desk/*:refs/tags/tune/desk/*'],
    });
  });

  it('push after a run carries its tag and the logs ref; a clone on the branch pulls them, fast-forwarded', async () => {
    repo.git('push', '-q', 'origin', 'main');
    clone = new TempRepo('git-tune-clone-');
    clone.git('clone', '-q', remote.dir, '.');
    clone.git('switch', '-q', 'tune/desk');
    for (const args of [['select'], ['batch'], ['run']]) await ok(repo, args);
    const r = await ok(repo, ['push']);
    expect(r.stdout).toBe('pushed tune/desk, its run tags and its logs to origin\n');
    expect(refs(remote)).toEqual(refs(repo));
    expect(refs(remote).some((l) => l.startsWith('refs/tags/tune/desk/batch01-nomem-run1 '))).toBe(true);
    expect(refs(remote).some((l) => l.startsWith('refs/tune-logs/desk '))).toBe(true);

    const pulled = await ok(clone, ['pull']);
    expect(pulled.stdout).toBe('pulled tune/desk, its run tags and its logs from origin\n');
    expect(refs(clone)).toEqual(refs(repo));
    expect(clone.git('rev-parse', 'HEAD').trim()).toBe(repo.git('rev-parse', 'tune/desk').trim());
    expect(clone.git('status', '--porcelain')).toBe('');
    clone.fsck();
  });

  it('pull from another branch moves the tuning branch and leaves HEAD; --json names the remote and tuning', async () => {
    await ok(repo, ['grade', '--verdict', 'PROGRESS']);
    await ok(repo, ['push']);
    clone.git('switch', '-q', 'main');
    const r = await ok(clone, ['pull', 'origin', '--tuning', 'desk', '--json']);
    expect(JSON.parse(r.stdout)).toEqual({ remote: 'origin', tuning: 'desk' });
    expect(clone.git('rev-parse', 'tune/desk').trim()).toBe(repo.git('rev-parse', 'tune/desk').trim());
    expect(clone.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
  });

  it('a remote that is not there: the git error, exit 1', async () => {
    const r = await tuneAsync(repo, ['push', 'nowhere']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('git push --porcelain nowhere refs/heads/tune/desk:refs/heads/tune/desk');
    expect(r.stderr).toMatch(/failed \(exit 128\): .*the repository exists/);
    const p = await tuneAsync(clone, ['pull', 'nowhere', '--tuning', 'desk']);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain('git fetch nowhere refs/tags/tune/desk/*:refs/tags/tune/desk/*');
  });
});
