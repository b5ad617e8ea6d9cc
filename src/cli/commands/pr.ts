import type { CommandUnknownOpts } from '@commander-js/extra-typings';
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
 * `git tune pr <batch>` (src/app/pr.ts). Without a token, the body goes to
 * stdout and the `gh pr create` line that opens it to stderr.
 */
async function run(io: CommandIO, batch: string, opts: { remote?: string; json?: boolean; tuning?: string }): Promise<void> {
  const [{ publishBatch }, { openTuning }] = await Promise.all([import('../../app/pr.js'), import('../../app/tuning.js')]);
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
