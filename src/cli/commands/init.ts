import path from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { InstalledWorkflow } from '../../app/ci.js';
import type { InitFlags } from '../../app/init.js';
import { Plan } from '../../app/plan.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from '../render-next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('init <name>')
      .description('start tuning <name>: create branch tune/<name>, write .tune/<name>/config.yaml, switch to it')
      .option('--prose <glob...>', 'globs of the prose being tuned, e.g. "agents/**/*.md"')
      .option('--memory-policy <glob...>', 'globs of the memory-policy files (the only prose a with-memory half may edit)')
      .option('--runner <cmd>', 'the agent command run once per case, e.g. "node agent.js"')
      .option('--judge <cmd>', 'optional rubric judge command')
      .option('--editor <cmd>', 'optional editor command used by `git tune auto`')
      .option('--preset <provider>', 'ready programs for all three roles (runner, judge, editor) over a model API: openai (any OpenAI-compatible endpoint, OPENAI_BASE_URL) or anthropic; --runner/--judge/--editor, when given, win for their own role')
      .option('--model <model>', 'the model --preset talks to, e.g. gpt-4o-mini (required with --preset)')
      .option('--dataset <file>', 'import this dataset right away (JSON, JSONL, YAML, or a folder)')
      .option('--held-out <file>', 'keep these cases apart (same formats): no batch uses them, no edit may quote them; `git tune baseline` and the final check run them (needs --dataset)')
      .option('--github', 'also install the GitHub workflows (final check on pull requests, sharded; a PR comment) into .github/workflows/; alone on an existing tuning, only that')
      .option('--agent-skill', 'add the skill file for coding agents (.claude/skills/git-tune/SKILL.md) to the init commit')
      .option('--no-hooks', 'do not install the git hooks and the merge driver of the generated files (`git tune hooks install` does it later)')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `
Examples:
  git tune init support-desk --prose 'agents/**/*.md' --runner 'node agent.js' --dataset cases.yaml

  # no program of your own: runner, judge and editor are presets over an API
  # (the key comes from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY)
  export OPENAI_BASE_URL=https://api.openai.com/v1   # or a local server: http://localhost:11434/v1 (Ollama)
  git tune init desk --prose 'prompts/*.md' --preset openai --model gpt-4o-mini --dataset cases.jsonl
  git tune auto

  # your own agent, the presets' judge and editor
  git tune init desk --prose 'prompts/*.md' --runner 'node agent.js' --preset anthropic --model claude-sonnet-4-5

Presets and their options: docs/presets.md`),
    run,
  );
}

/** init's flags (src/app/init.ts), and what only the command does with them: the hooks, --json. */
export interface InitOptions extends InitFlags {
  /** `--no-hooks` sets it false: the git hooks are installed unless told not to. */
  hooks?: boolean;
  json?: boolean;
}

/** What `init --github` says about each workflow file, and what to do next. */
export function describeInstalled(installed: readonly InstalledWorkflow[]): string[] {
  const lines = installed.map((w) => w.status === 'written' ? `wrote ${w.path}`
    : w.status === 'unchanged' ? `${w.path} is already there` : `kept ${w.path}: it differs from the template (yours is not overwritten)`);
  lines.push('commit them to the default branch: the comment workflow (workflow_run) runs only from there; add the runner\'s secrets in the final check workflow\'s `env:`');
  return lines;
}

/** Said once, at init: without memory-policy files a with-memory half has no file to edit. */
export const NO_MEMORY_POLICY = 'note: no --memory-policy: no file says what the agent keeps in memory, so a with-memory half has nothing to edit '
  + '(git tune auto ends it at its first run that does not pass); to name one: git tune config set memoryPolicy agents/memory-policy.md';

async function run(io: CommandIO, name: string, opts: InitOptions): Promise<void | Plan> {
  const [{ initTuning }, { installHooks }, { installWorkflows }, { nextFor }, { branchName }] = await Promise.all([
    import('../../app/init.js'), import('../../app/hooks.js'), import('../../app/ci.js'), import('../../app/decide.js'), import('../../core/names.js'),
  ]);
  const outcome = await initTuning(io.cwd, name, opts, io);
  if (outcome instanceof Plan) {
    // The init commit planned: what follows it (the workflows-only dry run says its own).
    return outcome.commits.length > 0
      ? outcome.followedBy(`switch to ${branchName(name)}${opts.dataset ? `, import ${opts.dataset}${opts.heldOut ? ` and the held-out set ${opts.heldOut}` : ''} (a commit)` : ''}${opts.hooks !== false ? ', install the git hooks' : ''}${opts.github ? ', install the GitHub workflows' : ''}`)
      : outcome;
  }
  if (outcome.kind === 'workflows') {
    if (opts.json) printJson(io, { tuning: name, workflows: outcome.workflows });
    else io.out(describeInstalled(outcome.workflows).join('\n'));
    return;
  }
  const { repo, tuning, configPath, skill } = outcome;
  const onBranch = true;
  io.err(`created ${branchName(name)} and switched to it; settings in ${configPath}`);
  if (skill) io.err('path' in skill ? `added the skill file for coding agents: ${skill.path}` : `skill file not added: ${skill.skip}`);
  if (tuning.config && tuning.config.memoryPolicy.length === 0) io.err(NO_MEMORY_POLICY);
  let hooks: Awaited<ReturnType<typeof installHooks>> | null = null;
  if (opts.hooks !== false) {
    try {
      hooks = await installHooks(repo, io.env);
      const chained = hooks.chained.length ? ` (after the hooks that were there: ${hooks.chained.join(', ')})` : '';
      const where = path.relative(repo.dir, hooks.dir);
      const driver = hooks.mergeDriver && hooks.mergeDriver.attributeLines !== 'unchanged'
        ? ', and the merge driver of the generated README.md and USAGE.md (so native git revert and cherry-pick do not conflict in them)'
        : '';
      io.err(`installed git hooks in ${where.startsWith('..') ? hooks.dir : where}${chained}${driver}; \`git tune hooks uninstall\` removes them`);
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
