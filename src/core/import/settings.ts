import { CONFIG_TOP_KEYS, configSchema, initConfigValues, withDefaults, type Config } from '../../contracts/config.js';
import { datasetRev } from '../../contracts/dataset.js';
import type { Selection } from '../../contracts/files.js';
import { describeValue, pathText } from '../../contracts/problems.js';
import { splitArgs } from '../argv.js';
import { selectCases } from '../select.js';
import type { FolderReader } from './folder.js';
import { batchIdsOf, isObject, normKey, num } from './values.js';

/**
 * A folder's settings and selection: config.json over `git tune init`'s
 * defaults, init's flags for what a folder never names, and selection.json
 * in the folder's order. Pure.
 */
/** `git tune init`'s flags, which fill what a folder never names (prose globs, the runner). */
export interface InitFlags {
  prose?: string[];
  memoryPolicy?: string[];
  runner?: { command: string[] };
  judge?: { command: string[] };
  editor?: { command: string[] };
}

/** The concurrency the folder method runs at when config.json names none (next.mjs). */
export const FOLDER_CONCURRENCY = 16;

function commandValue(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      return { command: splitArgs(value) };
    } catch {
      return value;
    }
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return { command: value };
  if (isObject(value) && typeof value.command === 'string') {
    try {
      return { ...value, command: splitArgs(value.command) };
    } catch {
      return value;
    }
  }
  return value;
}

export interface ReadConfig {
  config: Config;
  /** The values config.yaml is rendered from. */
  values: Record<string, unknown>;
  /** The concurrency the folder's runs ran at when their batch.json does not say. */
  folderConcurrency: number;
}

/** config.json → the values of config.yaml, over the defaults `git tune init` writes; init's flags win. */
export function readConfig(r: FolderReader, flags: InitFlags): ReadConfig {
  const file = r.shown('config.json');
  const values = initConfigValues();
  const raw = r.json('config.json');
  if (!r.input.files.has('config.json')) r.warnings.push(`${file} is missing: the settings are git tune init's defaults`);
  else if (raw !== undefined && !isObject(raw)) {
    r.problems.push({ file, message: 'must be an object of settings, e.g. {"maxBatch": 10}', received: describeValue(raw) });
  } else if (isObject(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      const known = CONFIG_TOP_KEYS.find((k) => normKey(k) === normKey(key));
      if (!known) {
        r.warnings.push(`${file}: \`${key}\` is not a git-tune setting: left out`);
        continue;
      }
      let v = value;
      if (known === 'runner' || known === 'judge' || known === 'editor') v = commandValue(v);
      if ((known === 'prose' || known === 'memoryPolicy') && typeof v === 'string') v = [v];
      values[known] = v;
    }
  }
  for (const key of ['prose', 'memoryPolicy', 'runner', 'judge', 'editor'] as const) {
    if (flags[key] !== undefined) values[key] = flags[key];
  }
  const concurrency = num(values.concurrency);
  const folderConcurrency = concurrency !== null && concurrency >= 1 ? concurrency : FOLDER_CONCURRENCY;
  const parsed = configSchema.safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      let received: unknown = values;
      for (const part of issue.path) received = (received as Record<PropertyKey, unknown> | undefined)?.[part];
      r.problems.push({ file, field: pathText(issue.path) || undefined, message: issue.message, received: describeValue(received) });
    }
    return { config: withDefaults(configSchema.parse(initConfigValues())), values, folderConcurrency };
  }
  return { config: withDefaults(parsed.data), values, folderConcurrency };
}

/**
 * selection.json (`{batch: [{id, …}]}`, a list of ids, `{ids: [...]}`) in the
 * folder's order. Without one: no selection yet (`next` says select), unless
 * runs follow, which ran from `git tune select`'s order.
 */
export function readSelection(r: FolderReader, config: Config, hasRuns: boolean): Selection | null {
  const file = r.shown('selection.json');
  const cases = r.input.cases;
  let ids: string[] = [];
  const raw = r.json('selection.json');
  if (raw === undefined) {
    if (r.input.files.has('selection.json')) return null; // not JSON: a problem already
    if (!hasRuns) return null;
    ids = selectCases(cases, config.seed, config.limit);
    r.warnings.push(`${file} is missing: the selection is git tune select's order`);
  } else {
    const list = batchIdsOf(raw, ['ids', 'selection', 'cases']);
    if (list === null) r.problems.push({ file, message: 'must be {"batch": [{"id": …}, …]}, a list of case ids, or {"ids": [...]}', received: describeValue(raw) });
    else {
      ids = list;
      const seen = new Set<string>();
      list.forEach((id, i) => {
        if (seen.has(id)) r.problems.push({ file, where: `item ${i}`, message: 'repeats an id; the selection holds each case once', received: describeValue(id) });
        seen.add(id);
      });
      r.knownIds(list, file, 'ids');
    }
  }
  const complex = new Set(cases.filter((c) => c.complexity === 'complex').map((c) => c.id));
  return {
    seed: config.seed, limit: ids.length, total: cases.length, datasetRev: datasetRev(cases),
    ids, complex: ids.filter((id) => complex.has(id)),
  };
}

