import path from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { InitFlags } from '../../app/import.js';
import { Plan } from '../../app/plan.js';
import { branchName, branchRef, isValidTuningName } from '../../core/names.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from '../render-next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('import <dir>')
      .description('turn a folder-based tuning (a finetune/ folder) into a tuning branch whose history replays it')
      .option('--name <name>', 'the tuning name (default: the folder name)')
      .option('--prose <glob...>', 'globs of the prose being tuned, e.g. "agents/**/*.md" (a folder names none)')
      .option('--memory-policy <glob...>', 'globs of the memory-policy files (the only prose a with-memory half may edit)')
      .option('--runner <cmd>', 'the agent command run once per case, e.g. "node agent.js"')
      .option('--judge <cmd>', 'optional rubric judge command')
      .option('--editor <cmd>', 'optional editor command used by `git tune auto`')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nExample:\n  git tune import finetune --prose 'agents/**/*.md' --runner 'node agent.js'`),
    run,
  );
}

export interface ImportOptions {
  name?: string;
  prose?: string[];
  memoryPolicy?: string[];
  runner?: string;
  judge?: string;
  editor?: string;
  json?: boolean;
}

/** init's flags, checked as init checks them: what a folder never names. */
function flagsOf(opts: ImportOptions, commandSpec: (flag: string, line: string | undefined) => { command: string[] } | null): InitFlags {
  const flags: InitFlags = {};
  if (opts.prose) flags.prose = opts.prose;
  if (opts.memoryPolicy) flags.memoryPolicy = opts.memoryPolicy;
  for (const key of ['runner', 'judge', 'editor'] as const) {
    const spec = commandSpec(key, opts[key]);
    if (spec) flags[key] = spec;
  }
  return flags;
}

/** `git tune import <dir>` (docs/import.md): read the folder, plan its history, write it (or, in a dry run, print it), say what is next. */
async function run(io: CommandIO, dir: string, opts: ImportOptions): Promise<void | Plan> {
  const [{ nextFor }, { applyImport, planFolderImport, readFolder }, { commandSpec }, { loadTuning }, { openRepo }] = await Promise.all([
    import('../../app/decide.js'), import('../../app/import.js'), import('../../app/init.js'), import('../../app/tuning.js'), import('../../git/open.js'),
  ]);
  const name = opts.name ?? path.basename(path.resolve(io.cwd, dir));
  if (!isValidTuningName(name)) {
    throw usageError(
      'bad-tuning-name',
      `"${name}" cannot name a tuning: use letters, digits, . _ - (at most 64), starting with a letter or digit`,
      `git tune import ${dir} --name support-desk`,
    );
  }
  const flags = flagsOf(opts, commandSpec);
  const repo = await openRepo(io.cwd);
  if (await repo.resolveRef(branchRef(name))) {
    throw usageError('tuning-exists', `tuning ${name} already exists (branch ${branchName(name)})`,
      `git tune import ${dir} --name <another-name>   # or: git switch ${branchName(name)}`);
  }
  const input = await readFolder(dir, io.cwd);
  const plan = planFolderImport(input, name, flags);
  const result = await applyImport(repo, plan, io);
  if (result instanceof Plan) {
    for (const w of plan.warnings) io.err(`warning: ${w}`);
    return result;
  }
  const tuning = await loadTuning(repo, name);
  const step = nextFor(tuning);
  for (const w of plan.warnings) io.err(`warning: ${w}`);
  io.err(
    `imported ${input.shown} as ${branchName(name)} (${result.commits.length} commits, ${result.tags.length} run tag${result.tags.length === 1 ? '' : 's'}) and switched to it`,
  );
  if (opts.json) {
    printJson(io, {
      tuning: name, branch: branchName(name), tip: result.tip, commits: result.commits.length,
      tags: result.tags, warnings: plan.warnings, next: step,
    });
  } else io.out(renderNext(step));
}
