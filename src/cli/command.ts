import { Option, type Command, type OptionValues } from '@commander-js/extra-typings';
import type { Plan } from '../app/plan.js';
import { printJson, processIO, type CommandIO } from './io.js';
import { renderPlan } from './dry-run.js';

/**
 * How a command file plugs into the program: `register(program)` declares
 * the command and its flags, `act(command, run)` attaches `run`. The
 * arguments and options `run` takes are checked against the declared ones
 * (commander's extra typings infer them from the flags), so a flag renamed or
 * retyped fails the build. A `run` that returns a Plan was a dry run: `act`
 * prints the plan (src/app/plan.ts). Command files import their use cases
 * inside `run` (`await import(...)`): `--help` and `--version` load no
 * command body, no git library, no zod.
 */

/**
 * Set while `runCli` runs a command with an IO of its caller's (`git tune
 * auto` and `demo` run steps in-process, quietly: their output goes to the
 * caller's narration, not to this process's stdout).
 */
let nestedIO: (() => CommandIO) | null = null;

export function currentNestedIO(): (() => CommandIO) | null {
  return nestedIO;
}

export function setNestedIO(io: (() => CommandIO) | null): void {
  nestedIO = io;
}

export function act<Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(
  command: Command<Args, Opts, Globals>,
  run: (io: CommandIO, ...args: NoInfer<[...Args, ReturnType<Command<Args, Opts, Globals>['optsWithGlobals']>]>) => Promise<void | Plan>,
): void {
  command.action(async (...all) => {
    // commander passes the arguments, then the options and the command: the arguments are the first ones.
    const args = all.slice(0, command.registeredArguments.length) as Args;
    const opts = { ...command.optsWithGlobals() };
    const base = (nestedIO ?? processIO)();
    const io: CommandIO = 'dryRun' in opts && opts.dryRun === true ? { ...base, dryRun: true } : base;
    const plan = await run(io, ...args, opts);
    if (!plan) return;
    if ('json' in opts && opts.json === true) printJson(io, { dryRun: true, commits: plan.commits, then: plan.then });
    else io.out(renderPlan(plan));
  });
}

export const json = () => new Option('--json', 'print machine-readable JSON on stdout');
export const tuningOpt = () => new Option('-t, --tuning <name>', 'the tuning to read (default: the checked-out tune/<name> branch)');
export const dryRunOpt = () => new Option('--dry-run', 'print what it would commit, and write nothing');
