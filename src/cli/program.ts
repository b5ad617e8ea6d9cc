import { Command, CommanderError, Option } from 'commander';
import { EXIT, exitCodesHelp, TuneError } from '../errors.js';
import { processIO, type CommandIO } from './io.js';
import { packageVersion } from '../app/version.js';
import { configKeysHelp } from './config-help.js';

/**
 * The `git-tune` program. Command modules (and isomorphic-git behind them)
 * load only when their command runs, so `--version` and `--help` start fast.
 */
const version = packageVersion();

type Action = (io: CommandIO, ...args: never[]) => Promise<void>;

/**
 * Set while `runCli` runs a command with an IO of its caller's (`git tune
 * auto` and `demo` run steps in-process, quietly: their output goes to the
 * caller's narration, not to this process's stdout).
 */
let nestedIO: (() => CommandIO) | null = null;

function lazy<M>(load: () => Promise<M>, pick: (m: M) => Action) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const params = args.slice(0, -2);
    const opts = { ...command.optsWithGlobals() };
    const action = pick(await load()) as (io: CommandIO, ...rest: unknown[]) => Promise<void>;
    await action((nestedIO ?? processIO)(), ...params, opts);
  };
}

const json = () => new Option('--json', 'print machine-readable JSON on stdout');
const tuningOpt = () => new Option('-t, --tuning <name>', 'the tuning to read (default: the checked-out tune/<name> branch)');

export function buildProgram(): Command {
  const program = new Command('git-tune')
    .description('Tune the prose of an LLM agent against a dataset, with git as the memory of the loop.\nStart with `git tune init`, then follow `git tune next`.')
    .addHelpText('after', `
Examples:
  git tune demo                                   # the whole loop on the bundled example, in a temp repo
  git tune init support-desk --prose 'agents/**/*.md' --runner 'node agent.js' --dataset cases.yaml
  git tune next                                   # the one next step and its exact command
  git tune auto                                   # run the loop unattended with the configured judge and editor

${exitCodesHelp()}`)
    .version(version, '-V, --version')
    .option('--debug', 'show stack traces on errors')
    .showSuggestionAfterError(true)
    .configureHelp({ sortSubcommands: false })
    // Before any subcommand is added, so they inherit it: usage errors exit 2, not 1.
    .exitOverride();

  program
    .command('init <name>')
    .description('start tuning <name>: create branch tune/<name>, write .tune/<name>/config.yaml, switch to it')
    .option('--prose <glob...>', 'globs of the prose being tuned, e.g. "agents/**/*.md"')
    .option('--memory-policy <glob...>', 'globs of the memory-policy files (the only prose a with-memory half may edit)')
    .option('--runner <cmd>', 'the agent command run once per case, e.g. "node agent.js"')
    .option('--judge <cmd>', 'optional rubric judge command')
    .option('--editor <cmd>', 'optional editor command used by `git tune auto`')
    .option('--dataset <file>', 'import this dataset right away (JSON, JSONL, YAML, or a folder)')
    .option('--github', 'also install the GitHub workflows (final check on pull requests, sharded; a PR comment) into .github/workflows/; alone on an existing tuning, only that')
    .option('--agent-skill', 'add the skill file for coding agents (.claude/skills/git-tune/SKILL.md) to the init commit')
    .option('--no-hooks', 'do not install the git hooks (`git tune hooks install` does it later)')
    .addOption(json())
    .addHelpText('after', `\nExample:\n  git tune init support-desk --prose 'agents/**/*.md' --runner 'node agent.js' --dataset cases.yaml`)
    .action(lazy(() => import('./commands/init.js'), (m) => m.run as Action));

  program
    .command('next')
    .description('say the one next step and the exact command for it, from the branch history alone')
    .addOption(json())
    .addOption(tuningOpt())
    .addHelpText('after', `\n--json prints {kind, message, command, batch, half, run, notes}.`)
    .action(lazy(() => import('./commands/next.js'), (m) => m.run as Action));

  program
    .command('status')
    .description('where the tuning stands: dataset, selection, batches, runs, difficult cases, usage')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/status.js'), (m) => m.run as Action));

  const config = program
    .command('config')
    .description('print the settings with every default filled in; `config set <key> <value>` changes one')
    .addOption(json())
    .addOption(tuningOpt())
    .addHelpText('after', configKeysHelp)
    .action(lazy(() => import('./commands/config.js'), (m) => m.show as Action));
  config
    .command('set <key> <value>')
    .description('change one setting with a commit (values are YAML: 10, true, null, ["node", "agent.js"])')
    .addOption(json())
    .addHelpText('after', `\nExamples:\n  git tune config set maxBatch 8\n  git tune config set runner.command 'node agent.js'\n  git tune config set budget.maxCostUsd 20`)
    .addHelpText('after', configKeysHelp)
    .action(lazy(() => import('./commands/config.js'), (m) => m.set as Action));

  const dataset = program.command('dataset').description('the cases this tuning is measured against');
  dataset
    .command('import <file>')
    .description('read cases from JSON, JSONL or YAML (a file, or a folder of them); a bad file is refused whole')
    .addOption(json())
    .action(lazy(() => import('./commands/dataset.js'), (m) => m.importCommand as Action));

  program
    .command('select')
    .description('order the cases into the selection (classes take turns; seeded); `limit` cuts the tail')
    .option('--dry-run', 'print the selection without committing it')
    .addOption(json())
    .action(lazy(() => import('./commands/select.js'), (m) => m.run as Action));

  program
    .command('batch')
    .description('plan the next batch: new cases plus recheck cases, one commit')
    .option('--size <n>', 'override the size of this one batch')
    .option('--dry-run', 'print the plan without writing (also when no batch is due yet)')
    .addOption(json())
    .addHelpText('after', `\n--dry-run --json prints {batch, size, why, kind, new, recheck}.`)
    .action(lazy(() => import('./commands/batch.js'), (m) => m.run as Action));

  program
    .command('run')
    .description('run what is due (batch, half, run number): every case of it, at most `concurrency` at once; the run becomes a tagged commit')
    .option('--concurrency <n>', 'cases at once for this run (default: config concurrency)')
    .option('--target <name>', 'run against one of the configured target models')
    .addOption(json())
    .addHelpText('after', `\nA run refuses to start over uncommitted prose edits, and when the budget is spent.\nCtrl-C stops launching cases; finished ones are kept, and \`git tune run\` resumes.`)
    .action(lazy(() => import('./commands/run.js'), (m) => m.run as Action));

  program
    .command('final')
    .description('run the final check: the whole selection with the last good memory, nothing changed')
    .option('--concurrency <n>', 'cases at once (default: config concurrency)')
    .option('--target <name>', 'run against one of the configured target models')
    .option('--all-targets', 'run the final check once per configured target and name the best')
    .option('--ci', 'non-interactive CI mode: check the history is all there, write the job summary and outputs, exit 0 only when VERIFIED')
    .option('--shard <i/n>', 'run a deterministic share of the selection and write its results as a file set')
    .option('--collect <dirs...>', 'merge shard result sets into one final-check result')
    .option('--commit', 'with --collect: record the merged result as the final-check run commit and tag')
    .option('--out <dir>', 'with --shard: where to write the shard result set')
    .addOption(json())
    .action(lazy(() => import('./commands/final.js'), (m) => m.run as Action));

  program
    .command('show <run> [case]')
    .description('a run: its cases, answers, usage and verdict so far; with a case, that case; --log its stdout/stderr')
    .option('--log', "the case's captured stdout, stderr and raw result")
    .addOption(json())
    .addOption(tuningOpt())
    .addHelpText('after', `\nExamples:\n  git tune show batch01-nomem-run1\n  git tune show batch01-nomem-run1 billing-refund-03 --log`)
    .action(lazy(() => import('./commands/show.js'), (m) => m.run as Action));

  program
    .command('report <run>')
    .description('the per-case table of a run: right/wrong, rubric, tokens, calls, memory, time, cost')
    .option('--vs <run>', 'compare with an earlier run of the same cases')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/report.js'), (m) => m.run as Action));

  program
    .command('grade')
    .description('grade the latest run: --draft writes its findings; without it, validates and records findings.md')
    .option('--draft', 'write the findings draft (per-case table, comparison, reviews, proposals) for you to finish')
    .option('--verdict <verdict>', 'set the verdict heading (PASSED, PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT, VOID) and record it')
    .option('--run <run>', 'the run to grade (default: the latest run)')
    .option('--force', 'with --draft: overwrite findings.md even if you edited it')
    .option('--keep <commit>', 'keep an edit this grade would revert (unconfirmed) on purpose; repeat for several', (v: string, acc: string[] = []) => [...acc, v])
    .option('--why <reason>', 'with --keep: why it is kept (recorded with who kept it)')
    .addOption(json())
    .addHelpText('after', `\nThe first level-2 heading of findings.md is the verdict. PASSED is refused when it\nbreaks a rule of the method; the error names the rule and the command that fixes it.\nRecording a grade reverts, each with its own revert commit before the grade commit,\nthe edits its run did not confirm (and those made between batches), unless kept.`)
    .action(lazy(() => import('./commands/grade.js'), (m) => m.run as Action));

  program
    .command('edit [paths...]')
    .description("record prose edits with the run's changes.md as one commit (an edit of the latest graded run)")
    .addOption(json())
    .addHelpText('after', `\nWrite .tune/<name>/runs/<run>/changes.md first: what changed and why; an \`Aims: id, id\` line\nnames the cases the edit is meant to fix (default: the cases wrong in that run).`)
    .action(lazy(() => import('./commands/edit.js'), (m) => m.run as Action));

  program
    .command('revert [commit]')
    .description("revert every unconfirmed and pending edit of the current half (or one edit) with revert commits")
    .addOption(json())
    .action(lazy(() => import('./commands/revert.js'), (m) => m.run as Action));

  const difficult = program
    .command('difficult')
    .description('the difficult list: open, fixed and stuck cases with retries and notes')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/difficult.js'), (m) => m.list as Action));
  difficult
    .command('add <id>')
    .description('put a case on the difficult list, with a reason (a commit)')
    .requiredOption('--why <reason>', 'wrong, regressed, flaky, memory or costly')
    .option('--note <text>', 'a note kept with the entry')
    .addOption(json())
    .action(lazy(() => import('./commands/difficult.js'), (m) => m.add as Action));
  difficult
    .command('fix <id>')
    .description('mark a difficult case fixed (a commit)')
    .option('--note <text>', 'a note kept with the entry')
    .addOption(json())
    .action(lazy(() => import('./commands/difficult.js'), (m) => m.fix as Action));

  const memory = program.command('memory').description('candidate memory and checkpoints (SPEC 3.7)');
  memory
    .command('candidate')
    .description("build the candidate: last good memory + what the passing no-memory run's cases wrote (a commit)")
    .addOption(json())
    .action(lazy(() => import('./commands/memory.js'), (m) => m.candidate as Action));
  memory
    .command('checkpoint')
    .description('make the candidate the last good memory, whole (a commit)')
    .addOption(json())
    .action(lazy(() => import('./commands/memory.js'), (m) => m.checkpoint as Action));

  program
    .command('auto')
    .description('drive the loop unattended with the configured runner, judge and editor, following `git tune next`')
    .option('--until <step>', 'stop before a step: `final` stops before the final check')
    .option('--plain', 'plain append-only lines (the default when not on a terminal)')
    .option('--all', 'every tune/* branch that has a config, in turn (switching with git switch), then a table of outcomes')
    .option('--max-cost-usd <usd>', 'a ceiling on what this auto spends, shared by every tuning it drives (each keeps its own budget too)')
    .option('--max-tokens <n>', 'a ceiling on the tokens this auto spends, shared like --max-cost-usd')
    .addOption(json())
    .addHelpText('after', `\nCtrl-C or \`git tune stop\` stops at the next safe point; \`git tune auto\` again carries on from history.`)
    .action(lazy(() => import('./commands/auto.js'), (m) => m.run as Action));

  program
    .command('stop')
    .description('ask a running `git tune auto` to stop at the next safe point')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/auto.js'), (m) => m.stop as Action));

  program
    .command('demo [dir]')
    .description('the main job on the bundled example: a fresh repo, the example agent, tuned to VERIFIED, with a summary (no network, no account)')
    .addOption(json())
    .action(lazy(() => import('./commands/demo.js'), (m) => m.run as Action));

  program
    .command('log')
    .description('the history of the tuning as a table of steps and runs')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/log.js'), (m) => m.run as Action));

  program
    .command('review <batch>')
    .description('the pull-request body for a batch, markdown on stdout: cases, runs, edits as diffs, tokens')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/review.js'), (m) => m.run as Action));

  program
    .command('pr <batch>')
    .description('push a branch for the batch and open or update its pull request (GITHUB_TOKEN or GH_TOKEN)')
    .option('--remote <name>', 'the remote to push to', 'origin')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/pr.js'), (m) => m.run as Action));

  const hooks = program.command('hooks').description('the git hooks git-tune installs (chained with yours, never overwriting them)');
  hooks
    .command('install')
    .description('install the hooks into the repository (respects core.hooksPath)')
    .addOption(json())
    .action(lazy(() => import('./commands/hooks.js'), (m) => m.install as Action));
  hooks
    .command('uninstall')
    .description('remove the hooks and restore the ones that were there')
    .addOption(json())
    .action(lazy(() => import('./commands/hooks.js'), (m) => m.uninstall as Action));
  program
    .command('hook <name> [args...]', { hidden: true })
    .description('run by the installed git hooks')
    .action(lazy(() => import('./commands/hooks.js'), (m) => m.hook as Action));

  program
    .command('push [remote]')
    .description('push the tuning branch with its run tags and logs ref (default remote: origin)')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/sync.js'), (m) => m.push as Action));

  program
    .command('pull [remote]')
    .description('fetch the tuning branch, its run tags and logs; fast-forward the branch')
    .addOption(json())
    .addOption(tuningOpt())
    .action(lazy(() => import('./commands/sync.js'), (m) => m.pull as Action));

  program
    .command('import <dir>')
    .description('turn a folder-based tuning (a finetune/ folder) into a tuning branch whose history replays it')
    .option('--name <name>', 'the tuning name (default: the folder name)')
    .option('--prose <glob...>', 'globs of the prose being tuned, e.g. "agents/**/*.md" (a folder names none)')
    .option('--memory-policy <glob...>', 'globs of the memory-policy files (the only prose a with-memory half may edit)')
    .option('--runner <cmd>', 'the agent command run once per case, e.g. "node agent.js"')
    .option('--judge <cmd>', 'optional rubric judge command')
    .option('--editor <cmd>', 'optional editor command used by `git tune auto`')
    .addOption(json())
    .addHelpText('after', `\nExample:\n  git tune import finetune --prose 'agents/**/*.md' --runner 'node agent.js'`)
    .action(lazy(() => import('./commands/import.js'), (m) => m.run as Action));

  return program;
}

function printError(err: unknown, debug: boolean, wantsJson: boolean): number {
  const io = nestedIO?.();
  const stdout = (text: string) => (io ? io.out(text) : process.stdout.write(text));
  const stderr = (text: string) => (io ? io.err(text) : process.stderr.write(text));
  if (err instanceof TuneError) {
    if (wantsJson) {
      stdout(`${JSON.stringify({ error: { code: err.code, message: err.message, hint: err.hint ?? null, details: err.details } }, null, 2)}\n`);
    }
    stderr(`error: ${err.message}\n`);
    for (const d of err.details) stderr(`  - ${d}\n`);
    if (err.hint) stderr(`fix: ${err.hint}\n`);
    if (debug && err.stack) stderr(`${err.stack}\n`);
    return err.exitCode;
  }
  const e = err as Error;
  stderr(`error: ${e?.message ?? String(err)}\n`);
  stderr(debug ? `${e?.stack ?? ''}\n` : 'run again with --debug for the stack trace\n');
  return EXIT.unexpected;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const debug = argv.includes('--debug');
  try {
    await program.parseAsync(argv);
    // A command that reports its own outcome on stdout (auto, demo) sets a non-zero code without throwing.
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    return printError(err, debug, argv.includes('--json'));
  }
}

/**
 * Runs `git-tune <args>` in this process (auto drives the loop this way): the
 * exit code it would have. With `io`, the command (and its error report)
 * writes through it instead of the process's streams.
 */
export async function runCli(args: readonly string[], io?: () => CommandIO): Promise<number> {
  const outer = { io: nestedIO, exitCode: process.exitCode };
  nestedIO = io ?? outer.io;
  process.exitCode = undefined;
  try {
    return await main(['node', 'git-tune', ...args]);
  } finally {
    nestedIO = outer.io;
    process.exitCode = outer.exitCode;
  }
}
