import { commitStep, targetOf } from '../../app/commit.js';
import { CONFIG_FILE, parseCliValue, setConfigValue } from '../../app/config-file.js';
import { requireOnBranch } from '../../app/guards.js';
import { openTuning } from '../../app/tuning.js';
import { splitArgs } from '../../core/argv.js';
import { usageError } from '../../errors.js';
import { stringify } from 'yaml';
import { printJson, type CommandIO } from '../io.js';

export async function show(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  if (!tuning.config) throw usageError('no-config', `${tuning.dir}/${CONFIG_FILE} is missing on the branch`, `git tune init ${tuning.name} --prose '<glob>'`);
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
  requireOnBranch(tuning);
  const file = `${tuning.dir}/${CONFIG_FILE}`;
  const value = valueFor(key, text);
  const { text: newText, config } = setConfigValue(tuning.configText ?? '', key, value, file);
  if (newText === tuning.configText) {
    io.err(`${key} is already ${JSON.stringify(value)}: nothing to commit`);
    return;
  }
  const oid = await commitStep(
    targetOf(tuning),
    {
      step: { step: 'config', tuning: tuning.name, keys: [key], difficult: [] },
      subject: `tune(${tuning.name}): config ${key} = ${JSON.stringify(value)}`,
      changes: new Map([[file, { content: newText }]]),
    },
    io,
  );
  if (opts.json) printJson(io, { key, value, commit: oid, config });
  else io.out(`${key} = ${JSON.stringify(value)}`);
}
