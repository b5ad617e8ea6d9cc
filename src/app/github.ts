import { shellQuote } from '../core/argv.js';
import type { Env } from '../git/identity.js';
import { EXIT, TuneError, usageError } from '../errors.js';

/**
 * GitHub for `git tune pr` and for links in `git tune review`: which
 * repository a remote is, its web address, and the few REST calls that open
 * or update one pull request per batch.
 *
 * Decisions:
 * - The repository comes from the remote's URL (https, ssh or scp-like, with
 *   any credentials in it dropped). A remote that is not on github.com counts
 *   as GitHub Enterprise when GITHUB_API_URL is set; GITHUB_REPOSITORY
 *   (`owner/repo`, as GitHub Actions sets it) names the repository when the
 *   URL does not (a local path, a mirror).
 * - The API base is GITHUB_API_URL, else https://api.github.com; the token is
 *   GITHUB_TOKEN, else GH_TOKEN. It is sent only in the Authorization header
 *   and never printed.
 * - One pull request per batch: an open pull request whose head is the
 *   batch's branch is updated (title, body, base); only when there is none is
 *   one created.
 */
export interface GitHubRepo {
  host: string;
  owner: string;
  repo: string;
}

const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/** owner/repo of a remote URL, or null when the URL does not name one. */
export function parseRemoteUrl(url: string): GitHubRepo | null {
  const trimmed = url.trim();
  let host: string;
  let pathPart: string;
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(trimmed);
  if (/^[a-z+]+:\/\//i.test(trimmed)) {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      return null;
    }
    if (parsed.protocol === 'file:') return null;
    host = parsed.hostname;
    pathPart = parsed.pathname;
  } else if (scp && !trimmed.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(trimmed)) {
    host = scp[1]!;
    pathPart = scp[2]!;
  } else {
    return null;
  }
  const parts = pathPart.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '').split('/');
  if (parts.length !== 2 || !host) return null;
  const [owner, repo] = parts as [string, string];
  if (!SEGMENT.test(owner) || !SEGMENT.test(repo)) return null;
  return { host: host.toLowerCase(), owner, repo };
}

export function apiBase(env: Env): string {
  return (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
}

export function githubToken(env: Env): string | null {
  return env.GITHUB_TOKEN || env.GH_TOKEN || null;
}

/** The GitHub repository a remote points at, or null (not GitHub, as far as we can tell). */
export function githubRepoOf(remoteUrl: string | null, env: Env): GitHubRepo | null {
  const parsed = remoteUrl ? parseRemoteUrl(remoteUrl) : null;
  if (parsed && (parsed.host === 'github.com' || parsed.host === 'www.github.com' || env.GITHUB_API_URL)) return parsed;
  const named = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(env.GITHUB_REPOSITORY ?? '');
  if (named) return { host: hostOf(env.GITHUB_SERVER_URL) ?? 'github.com', owner: named[1]!, repo: named[2]! };
  return null;
}

function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** https://github.com/owner/repo, or the GitHub Enterprise server's address; null when unknown. */
export function webUrlOf(repo: GitHubRepo, env: Env): string | null {
  if (repo.host === 'github.com' || repo.host === 'www.github.com') return `https://github.com/${repo.owner}/${repo.repo}`;
  const server = env.GITHUB_SERVER_URL?.replace(/\/+$/, '');
  if (server && hostOf(server) === repo.host) return `${server}/${repo.owner}/${repo.repo}`;
  return null;
}

export interface PullRequest {
  number: number;
  url: string;
  action: 'created' | 'updated';
}

export interface PullRequestInput {
  repo: GitHubRepo;
  head: string;
  base: string;
  title: string;
  body: string;
}

async function call(env: Env, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const url = `${apiBase(env)}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        Accept: 'application/vnd.github+json',
        Authorization: `Bearer ${token}`,
        'X-GitHub-Api-Version': '2022-11-28',
        'User-Agent': 'git-tune',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new TuneError('github-unreachable', `the GitHub API at ${apiBase(env)} could not be reached: ${(err as Error).message}`, {
      exitCode: EXIT.unexpected, hint: 'check the network, or GITHUB_API_URL for GitHub Enterprise',
    });
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const message = (parsed as { message?: string } | null)?.message ?? text.slice(0, 200);
    const errors = ((parsed as { errors?: Array<{ message?: string }> } | null)?.errors ?? []).map((e) => e.message ?? JSON.stringify(e));
    const hint = res.status === 401 ? 'the token was refused: set GITHUB_TOKEN (or GH_TOKEN) to a token with pull-request write access'
      : res.status === 403 || res.status === 404 ? 'the token cannot see or write this repository: check GITHUB_TOKEN and the remote'
        : undefined;
    throw usageError('github-api', `GitHub answered ${res.status} to ${method} ${path}: ${message}`, hint, errors);
  }
  return parsed;
}

/** Opens the batch's pull request, or updates the open one whose head is the batch's branch. */
export async function upsertPullRequest(env: Env, token: string, input: PullRequestInput): Promise<PullRequest> {
  const { owner, repo } = input.repo;
  const base = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/pulls`;
  const query = `?state=open&per_page=100&head=${encodeURIComponent(`${owner}:${input.head}`)}`;
  const open = (await call(env, token, 'GET', `${base}${query}`)) as Array<{ number: number; html_url: string; head?: { ref?: string } }> | null;
  const existing = (open ?? []).find((pr) => pr.head?.ref === undefined || pr.head.ref === input.head);
  if (existing) {
    const pr = (await call(env, token, 'PATCH', `${base}/${existing.number}`, { title: input.title, body: input.body, base: input.base })) as { number: number; html_url: string };
    return { number: pr.number, url: pr.html_url, action: 'updated' };
  }
  const pr = (await call(env, token, 'POST', base, { title: input.title, head: input.head, base: input.base, body: input.body })) as { number: number; html_url: string };
  return { number: pr.number, url: pr.html_url, action: 'created' };
}

// ---------------------------------------------------------------------------
// git tune pr <batch>

/**
 * The branches a batch's pull request is made of. `tune/<name>/batch03`
 * cannot exist beside the branch `tune/<name>` (a ref cannot be both a
 * file and a folder), so they live under `tune-pr/<name>/`: the batch's last
 * commit as `batch03`, the commit before its plan as `batch03-base`, so the
 * pull request shows exactly the batch.
 */
export const prBranch = (tuning: string, batch: number) => `tune-pr/${tuning}/batch${String(batch).padStart(2, '0')}`;
export const prBaseBranch = (tuning: string, batch: number) => `${prBranch(tuning, batch)}-base`;

export function ghCreateLine(repo: GitHubRepo | null, batch: number, tuning: string, title: string): string {
  return [
    `git tune review ${batch} | gh pr create`,
    ...(repo ? ['--repo', `${repo.owner}/${repo.repo}`] : []),
    '--base', prBaseBranch(tuning, batch), '--head', prBranch(tuning, batch),
    '--title', shellQuote(title), '--body-file', '-',
  ].join(' ');
}
