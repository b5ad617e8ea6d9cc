import path from 'node:path';
import { nextFor } from '../../app/decide.js';
import { applyImport, planFolderImport, readFolder, type InitFlags } from '../../app/import.js';
import { loadTuning } from '../../app/tuning.js';
import { branchName, branchRef, isValidTuningName } from '../../core/names.js';
import { usageError } from '../../errors.js';
import { openRepo } from '../../git/open.js';
import { printJson, type CommandIO } from '../io.js';
import { commandSpec } from './init.js';
import { renderNext } from './next.js';

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
function flagsOf(opts: ImportOptions): InitFlags {
  const flags: InitFlags = {};
  if (opts.prose) flags.prose = opts.prose;
  if (opts.memoryPolicy) flags.memoryPolicy = opts.memoryPolicy;
  for (const key of ['runner', 'judge', 'editor'] as const) {
    const spec = commandSpec(key, opts[key]);
    if (spec) flags[key] = spec;
  }
  return flags;
}

/** `git tune import <dir>` (SPEC 10): read the folder, plan its history, write it, say what is next. */
export async function run(io: CommandIO, dir: string, opts: ImportOptions): Promise<void> {
  const name = opts.name ?? path.basename(path.resolve(io.cwd, dir));
  if (!isValidTuningName(name)) {
    throw usageError(
      'bad-tuning-name',
      `"${name}" cannot name a tuning: use letters, digits, . _ - (at most 64), starting with a letter or digit`,
      `git tune import ${dir} --name support-desk`,
    );
  }
  const flags = flagsOf(opts);
  const repo = await openRepo(io.cwd);
  if (await repo.resolveRef(branchRef(name))) {
    throw usageError('tuning-exists', `tuning ${name} already exists (branch ${branchName(name)})`,
      `git tune import ${dir} --name <another-name>   # or: git switch ${branchName(name)}`);
  }
  const input = await readFolder(dir, io.cwd);
  const plan = planFolderImport(input, name, flags);
  const result = await applyImport(repo, plan, io);
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
