import path from 'node:path';
import type { Env } from './identity.js';
import { runGit } from './native.js';
import type { PushedRef, PushOptions, PushResult } from './types.js';

/**
 * The GitRepo calls both backends serve with the native `git` binary: talking
 * to remotes (push, fetch) with the user's transports and credentials, moving
 * the working tree (switch, merge --ff-only), and what git computes from the
 * user's whole configuration and index (hook path, config values across every
 * scope, the index a hook sees, status). isomorphic-git has no SSH transport,
 * no credential helpers and no core.hooksPath, so the iso backend delegates
 * these here too: the same command lines, environment and error messages
 * whichever backend serves the rest. The environment is the caller's, not
 * the native backend's cleaned one: the user's SSH and credential settings,
 * and a hook's GIT_INDEX_FILE (`git commit -a` hands its hooks a temporary
 * index, which stagedPaths and readStaged must read).
 */

type ChildEnv = Record<string, string | undefined>;
const child = (env: Env) => env as ChildEnv;

export async function gitPath(dir: string, name: string, env: Env): Promise<string> {
  const { stdout } = await runGit(['rev-parse', '--git-path', name], dir, child(env));
  return path.resolve(dir, stdout.trim());
}

export async function configGet(dir: string, key: string, env: Env): Promise<string | null> {
  return runGit(['config', '--get', key], dir, child(env)).then((r) => r.stdout.replace(/\n$/, ''), () => null);
}

/** Sets a value in the repository's own config (`git config --local`). */
export async function configSet(dir: string, key: string, value: string, env: Env): Promise<void> {
  await runGit(['config', '--local', key, value], dir, child(env));
}

/** Removes a section of the repository's own config; false when it was not there. */
export async function configRemoveSection(dir: string, section: string, env: Env): Promise<boolean> {
  return runGit(['config', '--local', '--remove-section', section], dir, child(env)).then(() => true, () => false);
}

/**
 * git's own three-way line merge of three files, written into `ours`
 * (`git merge-file`, the merge a driver stands in for): true when clean,
 * false when conflict markers were written.
 */
export async function mergeFile(dir: string, ours: string, base: string, theirs: string, env: Env): Promise<boolean> {
  const args = ['merge-file', '-L', 'ours', '-L', 'base', '-L', 'theirs', ours, base, theirs];
  return runGit(args, dir, child(env)).then(() => true, (err: unknown) => {
    // Exit 1..127: that many conflicts, written with markers; anything else is git failing.
    if (/\(exit ([1-9]|[1-9][0-9]|1[01][0-9]|12[0-7])\)/.test((err as Error).message)) return false;
    throw err;
  });
}

export async function stagedPaths(dir: string, env: Env): Promise<string[]> {
  const { stdout } = await runGit(['diff', '--cached', '--name-only', '-z', '--no-renames', 'HEAD'], dir, child(env));
  return stdout.split('\0').filter(Boolean);
}

export async function readStaged(dir: string, file: string, env: Env): Promise<string | null> {
  return runGit(['show', `:${file}`], dir, child(env)).then((r) => r.stdout, () => null);
}

export async function uncommittedPaths(dir: string, env: Env): Promise<string[]> {
  const { stdout } = await runGit(['status', '--porcelain', '--untracked-files=no'], dir, child(env));
  return stdout.split('\n').filter(Boolean).map((l) => l.slice(3));
}

export async function push(dir: string, remote: string, refspecs: readonly string[], opts: PushOptions): Promise<PushResult> {
  const args = ['push', ...(opts.verify === false ? ['--no-verify'] : []), opts.quiet ? '--quiet' : '--porcelain', remote, ...refspecs];
  const { stdout, stderr } = await runGit(args, dir, child(opts.env));
  return { refs: opts.quiet ? [] : parsePushPorcelain(stdout), stderr };
}

/**
 * `git push --porcelain` stdout: a `To <url>` line, then one
 * `<flag>\t<from>:<to>\t<summary>` line per ref, then `Done`.
 */
export function parsePushPorcelain(stdout: string): PushedRef[] {
  const refs: PushedRef[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^([ +\-*!=])\t([^\t]*)\t(.*)$/.exec(line);
    if (!m) continue;
    const colon = m[2]!.indexOf(':');
    refs.push({ flag: m[1] as PushedRef['flag'], from: m[2]!.slice(0, colon), to: m[2]!.slice(colon + 1), summary: m[3]! });
  }
  return refs;
}

export async function fetch(dir: string, remote: string, refspecs: readonly string[], env: Env): Promise<void> {
  await runGit(['fetch', remote, ...refspecs], dir, child(env));
}

export async function fastForward(dir: string, ref: string, env: Env): Promise<void> {
  await runGit(['merge', '--ff-only', ref], dir, child(env));
}

export async function switchBranch(dir: string, branch: string, env: Env): Promise<void> {
  await runGit(['switch', '--quiet', branch], dir, child(env));
}

export async function detachHead(dir: string, commit: string, env: Env): Promise<void> {
  await runGit(['switch', '--quiet', '--detach', commit], dir, child(env));
}

/**
 * The port's native calls as methods, for both backends to extend: one copy
 * of the delegation, whichever backend serves the rest of GitRepo.
 */
export abstract class NativeCommands {
  abstract readonly dir: string;

  gitPath(name: string, env: Env): Promise<string> {
    return gitPath(this.dir, name, env);
  }

  configGet(key: string, env: Env): Promise<string | null> {
    return configGet(this.dir, key, env);
  }

  configSet(key: string, value: string, env: Env): Promise<void> {
    return configSet(this.dir, key, value, env);
  }

  configRemoveSection(section: string, env: Env): Promise<boolean> {
    return configRemoveSection(this.dir, section, env);
  }

  stagedPaths(env: Env): Promise<string[]> {
    return stagedPaths(this.dir, env);
  }

  readStaged(file: string, env: Env): Promise<string | null> {
    return readStaged(this.dir, file, env);
  }

  uncommittedPaths(env: Env): Promise<string[]> {
    return uncommittedPaths(this.dir, env);
  }

  push(remote: string, refspecs: readonly string[], opts: PushOptions): Promise<PushResult> {
    return push(this.dir, remote, refspecs, opts);
  }

  fetch(remote: string, refspecs: readonly string[], env: Env): Promise<void> {
    return fetch(this.dir, remote, refspecs, env);
  }

  fastForward(ref: string, env: Env): Promise<void> {
    return fastForward(this.dir, ref, env);
  }

  switchBranch(branch: string, env: Env): Promise<void> {
    return switchBranch(this.dir, branch, env);
  }

  detachHead(commit: string, env: Env): Promise<void> {
    return detachHead(this.dir, commit, env);
  }
}
