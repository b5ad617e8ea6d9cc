import { Command, CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { EXIT, exitCodesHelp, TuneError } from '../errors.js';
import { diskFullError } from '../git/disk-full.js';
import { addExamples } from './examples.js';
import { commandWord } from './command-word.js';
import { writeStderr, writeStdout, type CommandIO } from './io.js';
import { packageVersion } from '../app/version.js';
import { currentNestedIO, setNestedIO } from './command.js';
import * as auto from './commands/auto.js';
import * as baseline from './commands/baseline.js';
import * as batch from './commands/batch.js';
import * as blame from './commands/blame.js';
import * as config from './commands/config.js';
import * as dataset from './commands/dataset.js';
import * as demo from './commands/demo.js';
import * as difficult from './commands/difficult.js';
import * as edit from './commands/edit.js';
import * as final from './commands/final.js';
import * as fleet from './commands/fleet.js';
import * as grade from './commands/grade.js';
import * as hooks from './commands/hooks.js';
import * as importCommand from './commands/import.js';
import * as init from './commands/init.js';
import * as log from './commands/log.js';
import * as memory from './commands/memory.js';
import * as next from './commands/next.js';
import * as pr from './commands/pr.js';
import * as report from './commands/report.js';
import * as revert from './commands/revert.js';
import * as review from './commands/review.js';
import * as run from './commands/run.js';
import * as select from './commands/select.js';
import * as show from './commands/show.js';
import * as status from './commands/status.js';
import * as sync from './commands/sync.js';
import * as undo from './commands/undo.js';

/**
 * The `git-tune` program. Each command file registers its command (and
 * imports its use case only when it runs, so `--version` and `--help` start
 * fast); the order here is the order of `--help`. Beside each file, the
 * top-level words it registers (test/unit/program.test.ts holds them to what
 * the files register).
 */
const version = packageVersion();

export const COMMANDS: ReadonlyArray<readonly [{ register: (program: CommandUnknownOpts) => void }, readonly string[]]> = [
  [init, ['init']], [next, ['next']], [status, ['status']], [config, ['config']], [dataset, ['dataset']], [select, ['select']],
  [batch, ['batch']], [run, ['run']], [final, ['final']], [baseline, ['baseline']], [show, ['show']], [report, ['report']],
  [grade, ['grade']], [edit, ['edit']], [revert, ['revert']], [undo, ['undo']], [difficult, ['difficult']], [memory, ['memory']],
  [auto, ['auto', 'stop']], [fleet, ['fleet']], [demo, ['demo']], [log, ['log']], [blame, ['blame']], [review, ['review']],
  [pr, ['pr']], [hooks, ['hooks', 'hook', 'merge-driver']], [sync, ['push', 'pull']], [importCommand, ['import']],
];

/**
 * The program; given the argv it will parse, with only the command that
 * argv names: declaring all 28 (their options, help texts) was ~2 ms of
 * every start. Anything else (help, no command, a word that names none)
 * gets them all, so help and suggestions stay complete.
 */
export function buildProgram(argv?: readonly string[]) {
  const word = argv && commandWord(argv.slice(2));
  const invoked = word === undefined ? undefined : COMMANDS.find(([, words]) => words.includes(word));
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
    // main() turns `help memory candidate` into `memory candidate --help`: commander's own looks one word deep.
    .helpCommand('help [command...]', 'print the help of a command (`help run`, `help memory candidate`)')
    // Before any subcommand is added, so they inherit them: usage errors exit 2, not 1; help and usage
    // errors are written as every output is (src/cli/io.ts: a reader that stops early ends it quietly).
    .configureOutput({ writeOut: writeStdout, writeErr: writeStderr })
    .exitOverride();

  for (const [command] of invoked ? [invoked] : COMMANDS) command.register(program);
  addExamples(program);
  return program;
}

function printError(thrown: unknown, debug: boolean, wantsJson: boolean): number {
  // A full disk (ENOSPC, EDQUOT) from anywhere, however wrapped, is exit 7 and names the file system, never "unexpected".
  const err = diskFullError(thrown) ?? thrown;
  const io = currentNestedIO()?.();
  const stdout = (text: string) => (io ? io.out(text) : writeStdout(text));
  const stderr = (text: string) => (io ? io.err(text) : writeStderr(text));
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

/**
 * `git tune help memory candidate` as `git tune memory candidate --help`:
 * commander's help command looks one word deep, and a subcommand's help is
 * the text of its man page (`git-tune-memory-candidate`), which git's
 * `--help` would ask `man` for. A word that names no command is left to
 * the help command of the last one that does, which says so (exit 2).
 */
function helpOfSubcommand(program: CommandUnknownOpts, argv: string[]): string[] {
  const [node = 'node', script = 'git-tune', first, ...rest] = argv;
  if (first !== 'help' || rest.length < 2 || rest.some((a) => a.startsWith('-'))) return argv;
  let command = program;
  for (const [i, word] of rest.entries()) {
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) return [node, script, ...rest.slice(0, i), 'help', ...rest.slice(i)];
    command = sub as CommandUnknownOpts;
  }
  return [node, script, ...rest, '--help'];
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram(argv);
  const debug = argv.includes('--debug');
  try {
    await program.parseAsync(helpOfSubcommand(program, argv));
    // A command that reports its own outcome on stdout (auto, demo) sets a non-zero code without throwing.
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // `commander.help` with a non-zero code is `git tune help <no such command>`: the help went to stderr.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0)) return EXIT.ok;
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
  const outer = { io: currentNestedIO(), exitCode: process.exitCode };
  setNestedIO(io ?? outer.io);
  process.exitCode = undefined;
  try {
    return await main(['node', 'git-tune', ...args]);
  } finally {
    setNestedIO(outer.io);
    process.exitCode = outer.exitCode;
  }
}
