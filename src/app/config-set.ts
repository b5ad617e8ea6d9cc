import type { Config } from '../contracts/config.js';
import { commitStep, targetOf, type WriteContext } from './commit.js';
import { configPath } from '../core/paths.js';
import { setConfigValue } from './config-file.js';
import { requireOnBranch } from './guards.js';
import type { Tuning } from './tuning.js';

/** `git tune config set <key> <value>`: one setting changed with a commit; null when it already had that value. */
export async function setConfig(tuning: Tuning, key: string, value: unknown, ctx: WriteContext): Promise<{ commit: string | null; config: Config }> {
  requireOnBranch(tuning);
  const file = configPath(tuning.dir);
  const { text, config } = setConfigValue(tuning.configText ?? '', key, value, file);
  if (text === tuning.configText) return { commit: null, config };
  const commit = await commitStep(
    targetOf(tuning),
    {
      step: { step: 'config', tuning: tuning.name, keys: [key], difficult: [] },
      subject: `tune(${tuning.name}): config ${key} = ${JSON.stringify(value)}`,
      changes: new Map([[file, { content: text }]]),
    },
    ctx,
  );
  return { commit, config };
}
