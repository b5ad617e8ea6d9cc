import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { configPath } from '../../core/paths.js';
import { configKeysHelp } from '../config-help.js';

export function register(program: CommandUnknownOpts): void {
  const config = program
    .command('config')
    .description('print the settings with every default filled in; `config set <key> <value> [<key> <value>...]` changes them')
    .addOption(json())
    .addOption(tuningOpt())
    .addHelpText('after', configKeysHelp);
  act(config, show);
  act(
    config
      .command('set <key> <value> [more...]')
      .description('change settings with one commit: <key> <value>, more pairs after it (values are YAML: 10, true, null, ["node", "agent.js"])')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nExamples:\n  git tune config set maxBatch 8\n  git tune config set runner.command 'node agent.js'\n  git tune config set budget.maxCostUsd 20\n  git tune config set judge.preset openai-chat judge.options.model gpt-4o-mini   # two keys, one commit\n  git tune config set runner.options.model gpt-4o   # any option of a preset (docs/presets.md)`)
      .addHelpText('after', configKeysHelp),
    set,
  );
}

async function show(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ openTuning }, { stringify }] = await Promise.all([import('../../app/tuning.js'), import('yaml')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  if (!tuning.config) throw usageError('no-config', `${configPath(tuning.dir)} is missing on the branch`, `git tune init ${tuning.name} --prose '<glob>'`);
  if (opts.json) printJson(io, tuning.config);
  else io.out(stringify(tuning.config, { lineWidth: 0 }));
}

async function set(io: CommandIO, key: string, text: string, more: string[], opts: { json?: boolean; tuning?: string }): Promise<void | Plan> {
  if (more.length % 2 !== 0) {
    throw usageError('bad-options', `\`${more.at(-1)}\` has no value: config set takes <key> <value> pairs`, 'git tune config set judge.preset openai-chat judge.options.model gpt-4o-mini');
  }
  const [{ configValue, setConfig }, { openTuning }] = await Promise.all([import('../../app/config-set.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const value = configValue(key, text);
  const rest: Array<[string, unknown]> = [];
  for (let i = 0; i < more.length; i += 2) rest.push([more[i]!, configValue(more[i]!, more[i + 1]!)]);
  const landed = await setConfig(tuning, key, value, io, rest);
  if (landed instanceof Plan) return landed;
  const { commit, config, dropped } = landed;
  const said = [[key, value] as const, ...rest].map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ');
  if (commit === null) {
    io.err(`${rest.length ? said.replaceAll(' = ', ' is already ') : `${key} is already ${JSON.stringify(value)}`}: nothing to commit`);
    return;
  }
  if (opts.json) printJson(io, { key, value, ...(rest.length ? { more: Object.fromEntries(rest) } : {}), commit, config, dropped });
  else io.out(`${said}${dropped.length ? ` (dropped ${dropped.join(', ')}: a role runs its command or a preset, and a preset takes its own options)` : ''}`);
}
