import { parseCliValue } from '../../app/config-file.js';
import { setConfig } from '../../app/config-set.js';
import { openTuning } from '../../app/tuning.js';
import { splitArgs } from '../../core/argv.js';
import { usageError } from '../../errors.js';
import { stringify } from 'yaml';
import { printJson, type CommandIO } from '../io.js';
import { configPath } from '../../core/paths.js';

export async function show(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  if (!tuning.config) throw usageError('no-config', `${configPath(tuning.dir)} is missing on the branch`, `git tune init ${tuning.name} --prose '<glob>'`);
  if (opts.json) printJson(io, tuning.config);
  else io.out(stringify(tuning.config, { lineWidth: 0 }));
}

/** `command` keys take a command line (`node agent.js`) or a JSON/YAML list. */
function valueFor(key: string, text: string): unknown {
  const parsed = parseCliValue(text);
  if (/^(runner|judge|editor)\.command$|^memory\.merge$/.test(key) && typeof parsed === 'string') return splitArgs(parsed);
  if ((key === 'prose' || key === 'memoryPolicy') && typeof parsed === 'string') return [parsed];
  return parsed;
}

export async function set(io: CommandIO, key: string, text: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const value = valueFor(key, text);
  const { commit, config } = await setConfig(tuning, key, value, io);
  if (commit === null) {
    io.err(`${key} is already ${JSON.stringify(value)}: nothing to commit`);
    return;
  }
  if (opts.json) printJson(io, { key, value, commit, config });
  else io.out(`${key} = ${JSON.stringify(value)}`);
}
