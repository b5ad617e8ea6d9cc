import path from 'node:path';
import { describeInstalled, installWorkflows } from '../../app/ci.js';
import { commitStep } from '../../app/commit.js';
import { installHooks, skillToInstall } from '../../app/hooks.js';
import { parseConfig, renderConfig } from '../../app/config-file.js';
import { initConfigValues } from '../../contracts/config.js';
import { importDataset } from '../../app/dataset.js';
import { assertCleanGitState, loadTuning } from '../../app/tuning.js';
import { splitArgs } from '../../core/argv.js';
import { branchName, branchRef, isValidTuningName } from '../../core/names.js';
import { configPath, tuningDir } from '../../core/paths.js';
import { usageError } from '../../errors.js';
import { openRepo } from '../../git/open.js';
import { renderNext } from './next.js';
import { nextFor } from '../../app/decide.js';
import { printJson, type CommandIO } from '../io.js';

export interface InitOptions {
  prose?: string[];
  memoryPolicy?: string[];
  runner?: string;
  judge?: string;
  editor?: string;
  dataset?: string;
  /** Also install the GitHub workflow templates (the final check, the PR comment). */
  github?: boolean;
  /** `--no-hooks` sets it false: the git hooks are installed unless told not to. */
  hooks?: boolean;
  /** Add the skill file for coding agents to the init commit. */
  agentSkill?: boolean;
  json?: boolean;
}

/** A command flag (`--runner 'node agent.js'`) as config.yaml holds it; import takes the same flags. */
export function commandSpec(flag: string, line: string | undefined) {
  if (line === undefined) return null;
  let command: string[];
  try {
    command = splitArgs(line);
  } catch (err) {
    throw usageError('bad-command-line', `--${flag}: ${(err as Error).message}`, `--${flag} 'node agent.js'`);
  }
  if (command.length === 0) throw usageError('bad-command-line', `--${flag} is empty`, `--${flag} 'node agent.js'`);
  return { command };
}

export async function run(io: CommandIO, name: string, opts: InitOptions): Promise<void> {
  if (!isValidTuningName(name)) {
    throw usageError('bad-tuning-name', `"${name}" cannot name a tuning: use letters, digits, . _ - (at most 64), starting with a letter or digit`, 'git tune init support-desk --prose "agents/**/*.md"');
  }
  const repo = await openRepo(io.cwd);
  const ref = branchRef(name);
  if (await repo.resolveRef(ref)) {
    // `init <name> --github` alone, on a tuning that exists: only the workflow templates.
    if (opts.github && !opts.prose && !opts.memoryPolicy && !opts.runner && !opts.judge && !opts.editor && !opts.dataset) {
      const installed = await installWorkflows(repo.dir, await loadTuning(repo, name), io.env);
      if (opts.json) printJson(io, { tuning: name, workflows: installed });
      else io.out(describeInstalled(installed).join('\n'));
      return;
    }
    throw usageError('tuning-exists', `tuning ${name} already exists (branch ${branchName(name)})`, `git switch ${branchName(name)} && git tune next`);
  }
  // init switches HEAD to the new branch: never in the middle of a merge, rebase, …
  await assertCleanGitState(repo);
  const headRef = await repo.headRef();
  const base = headRef ? await repo.resolveRef(headRef) : await repo.resolveRef('HEAD');
  const values: Record<string, unknown> = {
    ...initConfigValues(),
    prose: opts.prose ?? [],
    memoryPolicy: opts.memoryPolicy ?? [],
    runner: commandSpec('runner', opts.runner),
    judge: commandSpec('judge', opts.judge),
    editor: commandSpec('editor', opts.editor),
  };
  const dir = tuningDir(name);
  const text = renderConfig(values);
  parseConfig(text, configPath(dir)); // refuses a bad value before anything is written
  // The dataset is read and checked before the first write, too.
  const prepared = opts.dataset ? await importDataset.prepare(opts.dataset, io.cwd) : null;
  const skill = opts.agentSkill ? await skillToInstall(repo, base) : null;

  const onBranch = true;
  // Like `git switch -c`: the new branch starts at HEAD's commit, so the working tree already matches.
  // Under index.lock from the first write to the checkout, so an index git-tune
  // cannot update is refused before the branch exists.
  await repo.withIndexLock(async () => {
    const tip = await commitStep(
      { repo, ref, parent: base, expected: null, tuning: name, onBranch: false },
      {
        step: { step: 'init', tuning: name, difficult: [] },
        subject: `tune(${name}): init`,
        body: `Start tuning ${name}.`,
        changes: new Map([[configPath(dir), { content: text }], ...(skill && 'path' in skill ? [[skill.path, { content: skill.content }] as const] : [])]),
      },
      io,
    );
    await repo.setHeadRef(ref);
    // Every file the init commit wrote: config.yaml, README.md, USAGE.md (and the skill file).
    await repo.checkoutPaths(tip, await repo.changedPaths(tip));
  });
  let tuning = await loadTuning(repo, name);
  if (prepared) {
    await importDataset.apply(tuning, prepared, io);
    tuning = await loadTuning(repo, name);
  }
  io.err(`created ${branchName(name)} and switched to it; settings in ${configPath(dir)}`);
  if (skill) io.err('path' in skill ? `added the skill file for coding agents: ${skill.path}` : `skill file not added: ${skill.skip}`);
  let hooks: Awaited<ReturnType<typeof installHooks>> | null = null;
  if (opts.hooks !== false) {
    try {
      hooks = await installHooks(repo, io.env);
      const chained = hooks.chained.length ? ` (after the hooks that were there: ${hooks.chained.join(', ')})` : '';
      const where = path.relative(repo.dir, hooks.dir);
      io.err(`installed git hooks in ${where.startsWith('..') ? hooks.dir : where}${chained}; \`git tune hooks uninstall\` removes them`);
      for (const s of hooks.skipped) io.err(`warning: git hook ${s.hook} not installed: ${s.why}`);
    } catch (err) {
      io.err(`warning: git hooks not installed (${(err as Error).message}); \`git tune hooks install\` tries again`);
    }
  }
  const workflows = opts.github ? await installWorkflows(repo.dir, tuning, io.env) : null;
  if (workflows && !opts.json) io.err(describeInstalled(workflows).join('\n'));
  const step = nextFor(tuning);
  if (opts.json) printJson(io, { tuning: name, branch: branchName(name), onBranch, next: step, ...(workflows ? { workflows } : {}), hooks: hooks?.dir ?? null, agentSkill: skill && 'path' in skill ? skill.path : null });
  else io.out(renderNext(step));
}
