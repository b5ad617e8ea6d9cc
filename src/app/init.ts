import { shellQuote, splitArgs } from '../core/argv.js';
import { branchName, branchRef, isValidTuningName } from '../core/names.js';
import { configPath as configPathOf, tuningDir } from '../core/paths.js';
import { initConfigValues } from '../contracts/config.js';
import type { ApiPreset } from '../contracts/presets.js';
import { TuneError, usageError } from '../errors.js';
import { openRepo } from '../git/open.js';
import type { GitRepo } from '../git/types.js';
import { installWorkflows, type InstalledWorkflow } from './ci.js';
import { landStep, type WriteContext } from './commit.js';
import { parseConfig, renderConfig } from './config-file.js';
import { importDataset } from './dataset.js';
import { skillToInstall } from './hooks.js';
import { Plan, type DryRunnable } from './plan.js';
import { assertCleanGitState, loadTuning, type Tuning } from './tuning.js';

/** What `git tune init` is told (its flags, parsed). */
export interface InitFlags {
  prose?: string[];
  memoryPolicy?: string[];
  runner?: string;
  judge?: string;
  editor?: string;
  /** One API preset for all three roles (`openai` or `anthropic`); --runner/--judge/--editor win for their own role. */
  preset?: string;
  /** The model the preset's roles use (required with `preset`). */
  model?: string;
  dataset?: string;
  /** Keep these cases apart as the held-out set (docs/held-out.md); needs `dataset`. */
  heldOut?: string;
  /** Also install the GitHub workflow templates (the final check, the PR comment). */
  github?: boolean;
  /** Add the skill file for coding agents to the init commit. */
  agentSkill?: boolean;
  /** `--no-hooks` (the CLI installs the hooks after init): only repeated in the command lines init prints. */
  hooks?: boolean;
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

/** `--preset` names the provider; each role's preset of that provider (the preset's own name is taken too). */
export const INIT_PRESETS: Record<string, ApiPreset> = { openai: 'openai-chat', anthropic: 'anthropic' };
const PRESET_ALIASES: Record<string, ApiPreset> = { 'openai-chat': 'openai-chat' };

const INIT_PRESET_EXAMPLE = "git tune init desk --prose 'prompts/*.md' --preset openai --model gpt-4o-mini";

/**
 * What `--preset`/`--model` give every role not set by its own flag: the
 * provider's preset with the model (null when --preset is not given).
 */
export function presetSpec(flags: Pick<InitFlags, 'preset' | 'model'>): { preset: ApiPreset; options: { model: string } } | null {
  if (flags.preset === undefined) {
    if (flags.model !== undefined) throw usageError('bad-options', '--model goes with --preset: it names the model the preset talks to', INIT_PRESET_EXAMPLE);
    return null;
  }
  const preset = Object.hasOwn(INIT_PRESETS, flags.preset) ? INIT_PRESETS[flags.preset] : PRESET_ALIASES[flags.preset];
  if (!preset) {
    throw usageError('unknown-preset', `--preset ${flags.preset}: not a provider (--preset takes ${Object.keys(INIT_PRESETS).join(' or ')})`, INIT_PRESET_EXAMPLE);
  }
  if (!flags.model) {
    throw usageError('bad-options', `--preset ${flags.preset} needs --model: the model every role talks to`,
      flags.preset === 'anthropic' ? "git tune init desk --prose 'prompts/*.md' --preset anthropic --model claude-sonnet-4-5" : INIT_PRESET_EXAMPLE);
  }
  return { preset, options: { model: flags.model } };
}

export type InitOutcome =
  /** `init <name> --github` alone, on a tuning that exists: only the workflow templates. */
  | { kind: 'workflows'; workflows: InstalledWorkflow[] }
  | { kind: 'created'; repo: GitRepo; tuning: Tuning; configPath: string; skill: Awaited<ReturnType<typeof skillToInstall>> | null };

/**
 * `git tune init <name>`: branch tune/<name> from HEAD with one init commit
 * (config.yaml, README.md, USAGE.md, the skill file when asked), switched to,
 * then the dataset imported when given. Every value and the dataset are
 * checked before the first write.
 */
export async function initTuning(cwd: string, name: string, flags: InitFlags, ctx: DryRunnable<WriteContext>): Promise<InitOutcome | Plan> {
  if (!isValidTuningName(name)) {
    throw usageError('bad-tuning-name', `"${name}" cannot name a tuning: use letters, digits, . _ - (at most 64), starting with a letter or digit`, 'git tune init support-desk --prose "agents/**/*.md"');
  }
  const repo = await openRepo(cwd);
  const ref = branchRef(name);
  if (await repo.resolveRef(ref)) {
    if (flags.github && !flags.prose && !flags.memoryPolicy && !flags.runner && !flags.judge && !flags.editor && !flags.dataset && !flags.heldOut && !flags.preset && !flags.model) {
      if (ctx.dryRun) return new Plan([], 'install the GitHub workflows into .github/workflows/ (files, no commit)');
      return { kind: 'workflows', workflows: await installWorkflows(repo.dir, await loadTuning(repo, name), ctx.env) };
    }
    throw usageError('tuning-exists', `tuning ${name} already exists (branch ${branchName(name)})`, `git switch ${branchName(name)} && git tune next`);
  }
  // init switches HEAD to the new branch: never in the middle of a merge, rebase, …
  await assertCleanGitState(repo);
  const headRef = await repo.headRef();
  const base = headRef ? await repo.resolveRef(headRef) : await repo.resolveRef('HEAD');
  const preset = presetSpec(flags);
  const values: Record<string, unknown> = {
    ...initConfigValues(),
    prose: flags.prose ?? [],
    memoryPolicy: flags.memoryPolicy ?? [],
    // A copy per role: one object thrice would be written as a YAML anchor and aliases.
    runner: commandSpec('runner', flags.runner) ?? structuredClone(preset),
    judge: commandSpec('judge', flags.judge) ?? structuredClone(preset),
    editor: commandSpec('editor', flags.editor) ?? structuredClone(preset),
  };
  const dir = tuningDir(name);
  const text = renderConfig(values);
  parseConfig(text, configPathOf(dir)); // refuses a bad value before anything is written
  // The dataset is read and checked before the first write, too.
  if (flags.heldOut && !flags.dataset) {
    throw usageError('no-dataset', '--held-out is kept beside a dataset: give --dataset too',
      `git tune init ${name} --dataset cases.jsonl --held-out ${flags.heldOut}`);
  }
  // Refused before the branch exists, so the fix is this init without the dataset (the dataset import comes after it).
  const prepared = flags.dataset ? await importDataset.prepare(flags.dataset, cwd, flags.heldOut).catch((err: unknown) => { throw withInitFix(err, name, flags); }) : null;
  // A held-out set sharing a case with the dataset is refused before the branch exists.
  if (prepared) {
    try {
      importDataset.check(prepared);
    } catch (err) {
      throw withInitFix(err, name, flags);
    }
  }
  const skill = flags.agentSkill ? await skillToInstall(repo, base) : null;

  // Like `git switch -c`: the new branch starts at HEAD's commit, so the working tree already matches.
  // Under index.lock from the first write to the checkout, so an index git-tune
  // cannot update is refused before the branch exists.
  const planned = await repo.withIndexLock(async () => {
    const tip = await landStep(
      { repo, ref, parent: base, expected: null, tuning: name, onBranch: false },
      {
        step: { step: 'init', tuning: name, difficult: [] },
        subject: `tune(${name}): init`,
        body: `Start tuning ${name}.`,
        changes: new Map([[configPathOf(dir), { content: text }], ...(skill && 'path' in skill ? [[skill.path, { content: skill.content }] as const] : [])]),
      },
      ctx,
    );
    if (tip instanceof Plan) return tip;
    await repo.setHeadRef(ref);
    // Every file the init commit wrote: config.yaml, README.md, USAGE.md (and the skill file).
    await repo.checkoutPaths(tip, await repo.changedPaths(tip));
    return null;
  });
  if (planned) return planned;
  let tuning = await loadTuning(repo, name);
  if (prepared) {
    const imported = await importDataset.apply(tuning, prepared, ctx);
    if (imported instanceof Plan) return imported;
    tuning = await loadTuning(repo, name);
  }
  return { kind: 'created', repo, tuning, configPath: configPathOf(dir), skill };
}

/** This init's command line without `--dataset` and `--held-out`: it works with nothing written yet. */
export function initLineWithoutDataset(name: string, flags: InitFlags): string {
  const words = ['git', 'tune', 'init', name];
  const multi = (flag: string, values: readonly string[] | undefined) => { if (values?.length) words.push(flag, ...values); };
  const one = (flag: string, value: string | undefined) => { if (value !== undefined) words.push(flag, value); };
  multi('--prose', flags.prose);
  multi('--memory-policy', flags.memoryPolicy);
  one('--runner', flags.runner);
  one('--judge', flags.judge);
  one('--editor', flags.editor);
  one('--preset', flags.preset);
  one('--model', flags.model);
  if (flags.github) words.push('--github');
  if (flags.agentSkill) words.push('--agent-skill');
  if (flags.hooks === false) words.push('--no-hooks');
  return words.map((w, i) => (i < 3 ? w : shellQuote(w))).join(' ');
}

/**
 * A dataset init was given and refused: init wrote nothing, so `git tune
 * dataset import` (the import's own fix) would find no tuning. The fix is
 * the init without it, then the import of a file that reads.
 */
function withInitFix(err: unknown, name: string, flags: InitFlags): unknown {
  if (!(err instanceof TuneError) || err.exitCode !== 2) return err;
  const then = flags.heldOut ? 'git tune dataset import <file> --held-out <file>' : 'git tune dataset import <file>';
  return usageError(err.code, /nothing was written/.test(err.message) ? err.message : `${err.message}; nothing was written`, `${initLineWithoutDataset(name, flags)}   # then, with the dataset fixed: ${then}`, err.details);
}
