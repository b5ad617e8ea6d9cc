import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { TuneError, EXIT, usageError } from '../../errors.js';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('pr <batch>')
      .description('push a branch for the batch and open or update its pull request (GITHUB_TOKEN or GH_TOKEN)')
      .option('--remote <name>', 'the remote to push to', 'origin')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

/**
 * `git tune pr <batch>`: push the batch as a branch (and its base) with
 * native git, then open or update its one pull request through the GitHub
 * REST API. Without a token, the body goes to stdout and the `gh pr create`
 * line that opens it to stderr.
 */
async function run(io: CommandIO, batch: string, opts: { remote?: string; json?: boolean; tuning?: string }): Promise<void> {
  const [{ githubRepoOf, githubToken, ghCreateLine, prBaseBranch, prBranch, upsertPullRequest }, { batchRange, buildReview }, { openTuning }, { renderReview }, { runGit }] = await Promise.all([
    import('../../app/github.js'), import('../../app/reports.js'), import('../../app/tuning.js'), import('../../core/review.js'), import('../../git/native.js'),
  ]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const remote = opts.remote ?? 'origin';
  const url = await tuning.repo.readConfig(`remote.${remote}.url`).catch(() => null);
  if (!url) throw usageError('no-remote', `there is no remote ${remote}`, `git remote add ${remote} <url>   # or: git tune pr ${batch} --remote <name>`);
  const range = batchRange(tuning, batch);
  const review = await buildReview(tuning, batch, { env: io.env, remote });
  const body = renderReview(review);
  const n = review.batch;
  const head = prBranch(tuning.name, n);
  const base = prBaseBranch(tuning.name, n);
  const title = `tune(${tuning.name}): batch ${n} — ${review.status}`;
  const token = githubToken(io.env);
  const repo = githubRepoOf(url, io.env);
  if (token && !repo) {
    throw usageError('not-github', `remote ${remote} (${url.replace(/\/\/[^@/]*@/, '//')}) is not a GitHub repository git-tune can name`,
      'GITHUB_REPOSITORY=<owner>/<repo> git tune pr ' + batch + '   # and GITHUB_API_URL for GitHub Enterprise');
  }

  try {
    await runGit(['push', '--porcelain', remote, `${range.head}:refs/heads/${head}`, `${range.base}:refs/heads/${base}`], tuning.repo.dir, io.env);
  } catch (err) {
    throw new TuneError('pr-push-failed', `pushing ${head} and ${base} to ${remote} failed: ${(err as Error).message}`, {
      exitCode: EXIT.conflict,
      hint: `git fetch ${remote} && git log ${remote}/${head}   # a commit was added to the pull request's branch; tuning history lives on tune/${tuning.name}`,
    });
  }
  io.err(`pushed ${head} (${range.head.slice(0, 7)}) and ${base} (${range.base.slice(0, 7)}) to ${remote}`);

  if (!token) {
    const gh = ghCreateLine(repo, n, tuning.name, title);
    if (opts.json) printJson(io, { batch: n, remote, head, base, title, pullRequest: null, ghCommand: gh, body });
    else io.out(body);
    io.err(`no GITHUB_TOKEN or GH_TOKEN: the pull request is not opened. Open it with:\n  ${gh}`);
    return;
  }
  const pr = await upsertPullRequest(io.env, token, { repo: repo!, head, base, title, body });
  if (opts.json) printJson(io, { batch: n, remote, head, base, title, pullRequest: pr });
  else io.out(`${pr.action} pull request #${pr.number}: ${pr.url}`);
}
