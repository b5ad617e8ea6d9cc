import { publishBatch } from '../../app/pr.js';
import { openTuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';

/**
 * `git tune pr <batch>` (src/app/pr.ts). Without a token, the body goes to
 * stdout and the `gh pr create` line that opens it to stderr.
 */
export async function run(io: CommandIO, batch: string, opts: { remote?: string; json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const { pullRequest: pr, ghCommand: gh, ...out } = await publishBatch(tuning, batch, { remote: opts.remote, env: io.env, say: (line) => io.err(line) });
  const { batch: n, remote, head, base, title, body } = out;
  if (!pr) {
    if (opts.json) printJson(io, { batch: n, remote, head, base, title, pullRequest: null, ghCommand: gh, body });
    else io.out(body);
    io.err(`no GITHUB_TOKEN or GH_TOKEN: the pull request is not opened. Open it with:\n  ${gh}`);
    return;
  }
  if (opts.json) printJson(io, { batch: n, remote, head, base, title, pullRequest: pr });
  else io.out(`${pr.action} pull request #${pr.number}: ${pr.url}`);
}
