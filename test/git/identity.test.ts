import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI, startProcess } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { resolveIdentity } from '../../src/git/identity.js';

/**
 * Who a step's commit is by, resolved as git resolves it (isomorphic-git only
 * reads the repository's own config): GIT_AUTHOR_* / GIT_COMMITTER_*, then
 * the repository's config, then the global config; none at all is refused.
 */
const BRANCH = 'tune/support-desk';

/** The test process's environment without any identity in it, dates pinned. */
function envWithoutIdentity(repo: TempRepo, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^GIT_/.test(k) || k === 'EMAIL') continue;
    env[k] = v;
  }
  return {
    ...env,
    HOME: repo.dir,
    XDG_CONFIG_HOME: repo.path('.xdg'),
    GIT_CONFIG_GLOBAL: repo.path('.no-global-gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_DATE: '@1767225600 +0000',
    GIT_COMMITTER_DATE: '@1767225600 +0000',
    ...extra,
  };
}

/** The real CLI in a child process, asynchronously, so the scenarios below run side by side. */
const run = (repo: TempRepo, args: string[], env: Record<string, string>) => startProcess(process.execPath, [CLI, ...args], repo.dir, env).done;

/** `name <email>` of what native git would use in the same environment. */
function nativeIdent(repo: TempRepo, role: 'AUTHOR' | 'COMMITTER', env: Record<string, string>): string {
  const r = spawnSync('git', ['var', `GIT_${role}_IDENT`], { cwd: repo.dir, env, encoding: 'utf8' });
  return r.stdout.replace(/ \d+ [+-]\d{4}\n$/, '');
}

function committed(repo: TempRepo): { author: string; committer: string } {
  const [author, committer] = repo.git('log', '-1', '--format=%an <%ae>%n%cn <%ce>', BRANCH).trim().split('\n');
  return { author: author!, committer: committer! };
}

/** A repository for one test; concurrent tests must use their own context's onTestFinished. */
function freshRepo(onTestFinished: (fn: () => void) => void): TempRepo {
  const repo = TempRepo.create();
  onTestFinished(() => repo.cleanup());
  return repo;
}

describe.concurrent('identity of step commits', () => {
  const init = ['init', 'support-desk', '--prose', 'agents/**/*.md'];

  it('takes GIT_AUTHOR_* / GIT_COMMITTER_* from the environment over any config', async ({ expect, onTestFinished }) => {
    const repo = freshRepo(onTestFinished);
    repo.git('config', 'user.name', 'Repo Person');
    repo.git('config', 'user.email', 'repo@example.com');
    const env = envWithoutIdentity(repo, { GIT_AUTHOR_NAME: 'Env Author', GIT_AUTHOR_EMAIL: 'author@example.com' });
    const r = await run(repo, init, env);
    expect(r.code, r.stderr).toBe(0);
    // The committer has no GIT_COMMITTER_* here, so it falls back to the repository's config, as in git.
    expect(committed(repo)).toEqual({ author: 'Env Author <author@example.com>', committer: 'Repo Person <repo@example.com>' });
    expect(committed(repo)).toEqual({ author: nativeIdent(repo, 'AUTHOR', env), committer: nativeIdent(repo, 'COMMITTER', env) });
  });

  it("takes the repository's user.name / user.email over the global config", async ({ expect, onTestFinished }) => {
    const repo = freshRepo(onTestFinished);
    writeFileSync(repo.path('.no-global-gitconfig'), '[user]\n\tname = Global Person\n\temail = global@example.com\n');
    repo.git('config', 'user.name', 'Repo Person');
    repo.git('config', 'user.email', 'repo@example.com');
    const env = envWithoutIdentity(repo);
    expect((await run(repo, init, env)).code).toBe(0);
    expect(committed(repo)).toEqual({ author: 'Repo Person <repo@example.com>', committer: 'Repo Person <repo@example.com>' });
    expect(committed(repo).author).toBe(nativeIdent(repo, 'AUTHOR', env));
  });

  it('falls back to the global config named by GIT_CONFIG_GLOBAL', async ({ expect, onTestFinished }) => {
    const repo = freshRepo(onTestFinished);
    writeFileSync(repo.path('global.gitconfig'), '# mine\n[user]\n\tname = "Global Person"\n\temail = global@example.com ; work\n');
    const env = envWithoutIdentity(repo, { GIT_CONFIG_GLOBAL: repo.path('global.gitconfig') });
    expect((await run(repo, init, env)).code).toBe(0);
    expect(committed(repo)).toEqual({ author: 'Global Person <global@example.com>', committer: 'Global Person <global@example.com>' });
    expect(committed(repo).author).toBe(nativeIdent(repo, 'AUTHOR', env));
  });

  it('follows include.path and includeIf in the global config, as git does', async ({ expect, onTestFinished }) => {
    const repo = freshRepo(onTestFinished);
    writeFileSync(repo.path('global.gitconfig'), `[user]\n\tname = Home Person\n[include]\n\tpath = identity.inc\n[includeIf "gitdir:${repo.dir}/"]\n\tpath = work.inc\n`);
    writeFileSync(repo.path('identity.inc'), '[user]\n\temail = home@example.com\n');
    writeFileSync(repo.path('work.inc'), '[user]\n\temail = work@example.com\n');
    const env = envWithoutIdentity(repo, { GIT_CONFIG_GLOBAL: repo.path('global.gitconfig') });
    const r = await run(repo, init, env);
    expect(r.code, r.stderr).toBe(0);
    expect(committed(repo).author).toBe('Home Person <work@example.com>');
    expect(committed(repo).author).toBe(nativeIdent(repo, 'AUTHOR', env));
  });

  it('refuses with no-identity (exit 2) and writes nothing when git does not know who you are', async ({ expect, onTestFinished }) => {
    const repo = freshRepo(onTestFinished);
    const head = repo.git('rev-parse', 'HEAD').trim();
    const r = await run(repo, [...init, '--json'], envWithoutIdentity(repo));
    expect(r.code).toBe(2);
    const error = JSON.parse(r.stdout).error;
    expect(error.code).toBe('no-identity');
    expect(error.hint).toContain('git config --global user.name');
    expect(r.stderr).toContain('error: git does not know who you are');
    expect(repo.git('branch', '--list', 'tune/*')).toBe('');
    expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});

describe('resolveIdentity', () => {
  it('reads a pinned date per role and the repository config, in process', async () => {
    const repo = TempRepo.create();
    try {
      repo.git('config', 'user.name', 'Repo Person');
      repo.git('config', 'user.email', 'repo@example.com');
      const env = { HOME: repo.dir, GIT_CONFIG_GLOBAL: repo.path('none'), GIT_CONFIG_NOSYSTEM: '1', GIT_COMMITTER_DATE: '@1700000000 -0130' };
      const { author, committer } = await resolveIdentity(repo.path('.git'), env, new Date(1767225600_000));
      expect(author).toEqual({ name: 'Repo Person', email: 'repo@example.com', timestamp: 1767225600, timezoneOffset: 0 });
      expect(committer).toEqual({ name: 'Repo Person', email: 'repo@example.com', timestamp: 1700000000, timezoneOffset: 90 });
      await expect(resolveIdentity(repo.path('nowhere'), { HOME: repo.dir, GIT_CONFIG_GLOBAL: repo.path('none'), GIT_CONFIG_NOSYSTEM: '1' }, new Date()))
        .rejects.toMatchObject({ code: 'no-identity', exitCode: 2 });
    } finally {
      repo.cleanup();
    }
  });

  it('asks git once for a repository, and again once its config changed (a second name in the same process is seen)', async () => {
    const repo = TempRepo.create();
    try {
      repo.git('config', 'user.name', 'Repo Person');
      repo.git('config', 'user.email', 'repo@example.com');
      // A PATH whose git counts its runs and then runs the real one.
      const real = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
      const bin = repo.path('.bin');
      spawnSync('mkdir', ['-p', bin]);
      writeFileSync(`${bin}/git`, `#!/bin/sh\necho x >> '${repo.path('.git-runs')}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
      const env = { HOME: repo.dir, GIT_CONFIG_GLOBAL: repo.path('none'), GIT_CONFIG_NOSYSTEM: '1', PATH: `${bin}:${process.env.PATH}` };
      const runs = () => (spawnSync('cat', [repo.path('.git-runs')], { encoding: 'utf8' }).stdout.match(/x/g) ?? []).length;
      const gitdir = repo.path('.git');
      const first = await withPath(env.PATH, () => resolveIdentity(gitdir, env, new Date()));
      await withPath(env.PATH, () => resolveIdentity(gitdir, env, new Date()));
      expect(first.author.name).toBe('Repo Person');
      expect(runs()).toBe(1);
      repo.git('config', 'user.name', 'Another Person Entirely');
      const second = await withPath(env.PATH, () => resolveIdentity(gitdir, env, new Date()));
      expect(second.author).toMatchObject({ name: 'Another Person Entirely', email: 'repo@example.com' });
      expect(runs()).toBe(2);
    } finally {
      repo.cleanup();
    }
  });
});

/** execFile finds git on this process's PATH, not the env it is given: set it for the call. */
async function withPath<T>(value: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.PATH;
  process.env.PATH = value;
  try {
    return await fn();
  } finally {
    process.env.PATH = before;
  }
}
