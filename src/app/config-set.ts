import type { Config } from '../contracts/config.js';
import { splitArgs } from '../core/argv.js';
import { landStep, targetOf, type WriteContext } from './commit.js';
import { configPath } from '../core/paths.js';
import { parseCliValue, setConfigValues } from './config-file.js';
import { requireWriter } from './guards.js';
import { Plan, type DryRunnable } from './plan.js';
import type { Tuning } from './tuning.js';

/** A value as `config set` reads it: YAML, and `command` keys take a command line (`node agent.js`) or a list. */
export function configValue(key: string, text: string): unknown {
  const parsed = parseCliValue(text);
  if (/^(runner|judge|editor)\.command$|^memory\.merge$/.test(key) && typeof parsed === 'string') return splitArgs(parsed);
  if ((key === 'prose' || key === 'memoryPolicy') && typeof parsed === 'string') return [parsed];
  if (/^(runner|editor)\.options\.args$/.test(key) && typeof parsed === 'string') return splitArgs(parsed);
  return parsed;
}

/**
 * `git tune config set <key> <value> [<key> <value>…]`: settings changed with
 * one commit; null when they already had those values. `dropped`: a role's
 * `command` or `preset` the new value replaces (a role runs one of them).
 */
export interface ConfigSet {
  commit: string | null;
  config: Config;
  dropped: string[];
}

export async function setConfig(tuning: Tuning, key: string, value: unknown, ctx: WriteContext, more?: ReadonlyArray<readonly [string, unknown]>): Promise<ConfigSet>;
export async function setConfig(tuning: Tuning, key: string, value: unknown, ctx: DryRunnable<WriteContext>, more?: ReadonlyArray<readonly [string, unknown]>): Promise<ConfigSet | Plan>;
export async function setConfig(tuning: Tuning, key: string, value: unknown, ctx: DryRunnable<WriteContext>, more: ReadonlyArray<readonly [string, unknown]> = []): Promise<ConfigSet | Plan> {
  await requireWriter(tuning);
  const file = configPath(tuning.dir);
  const pairs = [[key, value] as const, ...more];
  const { text, config, dropped } = setConfigValues(tuning.configText ?? '', pairs, file);
  if (text === tuning.configText) return { commit: null, config, dropped };
  const commit = await landStep(
    targetOf(tuning),
    {
      step: { step: 'config', tuning: tuning.name, keys: pairs.map(([k]) => k), difficult: [] },
      subject: `tune(${tuning.name}): config ${pairs.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')}${dropped.length ? ` (drops ${dropped.join(', ')})` : ''}`,
      changes: new Map([[file, { content: text }]]),
    },
    ctx,
  );
  if (commit instanceof Plan) return commit;
  return { commit, config, dropped };
}
