import { renderReview } from '../core/review.js';
import { TuneError, EXIT, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { githubRepoOf, githubToken, ghCreateLine, prBaseBranch, prBranch, upsertPullRequest, type PullRequest } from './github.js';
import { batchRange, buildReview } from './reports.js';
import type { Tuning } from './tuning.js';

/**
 * `git tune pr <batch>`: push the batch as a branch (and its base) with
 * native git, then open or update its one pull request through the GitHub
 * REST API. Without a token the pull request is not opened: the outcome
 * carries the body and the `gh pr create` line that opens it.
 */
export interface PullRequestOutcome {
  batch: number;
  remote: string;
  head: string;
  base: string;
  title: string;
  body: string;
  /** The pull request opened or updated, or null without a token. */
  pullRequest: PullRequest | null;
  /** Without a token: the command that opens it. */
  ghCommand: string | null;
}

export async function publishBatch(
  tuning: Tuning, batch: string,
  opts: { remote?: string; env: Env; say: (line: string) => void },
): Promise<PullRequestOutcome> {
  const { env } = opts;
  const remote = opts.remote ?? 'origin';
  const url = await tuning.repo.readConfig(`remote.${remote}.url`).catch(() => null);
  if (!url) throw usageError('no-remote', `there is no remote ${remote}`, `git remote add ${remote} <url>   # or: git tune pr ${batch} --remote <name>`);
  const range = batchRange(tuning, batch);
  const review = await buildReview(tuning, batch, { env, remote });
  const body = renderReview(review);
  const n = review.batch;
  const head = prBranch(tuning.name, n);
  const base = prBaseBranch(tuning.name, n);
  const title = `tune(${tuning.name}): batch ${n} — ${review.status}`;
  const token = githubToken(env);
  const repo = githubRepoOf(url, env);
  if (token && !repo) {
    throw usageError('not-github', `remote ${remote} (${url.replace(/\/\/[^@/]*@/, '//')}) is not a GitHub repository git-tune can name`,
      'GITHUB_REPOSITORY=<owner>/<repo> git tune pr ' + batch + '   # and GITHUB_API_URL for GitHub Enterprise');
  }

  try {
    await tuning.repo.push(remote, [`${range.head}:refs/heads/${head}`, `${range.base}:refs/heads/${base}`], { env });
  } catch (err) {
    throw new TuneError('pr-push-failed', `pushing ${head} and ${base} to ${remote} failed: ${(err as Error).message}`, {
      exitCode: EXIT.conflict,
      hint: `git fetch ${remote} && git log ${remote}/${head}   # a commit was added to the pull request's branch; tuning history lives on tune/${tuning.name}`,
    });
  }
  opts.say(`pushed ${head} (${range.head.slice(0, 7)}) and ${base} (${range.base.slice(0, 7)}) to ${remote}`);

  const outcome = { batch: n, remote, head, base, title, body };
  if (!token) return { ...outcome, pullRequest: null, ghCommand: ghCreateLine(repo, n, tuning.name, title) };
  const pullRequest = await upsertPullRequest(env, token, { repo: repo!, head, base, title, body });
  return { ...outcome, pullRequest, ghCommand: null };
}
