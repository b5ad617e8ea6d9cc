import { Document, isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { CONFIG_DOCS, CONFIG_KEYS, configSchema, withDefaults, type Config } from '../contracts/config.js';
import { describeValue, formatProblem, pathText, type Problem } from '../contracts/problems.js';
import { isApiPreset } from '../contracts/presets.js';
import { PARSED_ONCE } from '../contracts/values.js';
import { TuneError, usageError } from '../errors.js';

/**
 * config.yaml as text: rendered with a comment on every key, parsed with
 * line numbers in every problem, and changed key by key with its comments kept.
 */

const HEADER = `# git-tune settings for this tuning (git-tune's docs/contracts.md, Config). Change a key with
#   git tune config set <key> <value>
# and see every value, defaults filled in, with
#   git tune config
`;

export function renderConfig(values: Record<string, unknown>): string {
  const ordered: Record<string, unknown> = {};
  for (const [key] of CONFIG_DOCS) if (key in values) ordered[key] = values[key];
  const doc = new Document(ordered);
  const map = doc.contents;
  if (isMap(map)) {
    for (const pair of map.items) {
      const key = String((pair.key as { value?: unknown }).value ?? pair.key);
      const docText = CONFIG_DOCS.find(([k]) => k === key)?.[1];
      if (docText && pair.key && typeof pair.key === 'object') {
        (pair.key as { commentBefore?: string }).commentBefore = ` ${docText}`;
      }
    }
  }
  return HEADER + doc.toString({ lineWidth: 0 });
}

function lineOf(doc: Document, counter: LineCounter, path: readonly PropertyKey[]): string | undefined {
  let node: unknown = doc.contents;
  let last = node;
  for (const part of path) {
    if (isMap(node)) node = node.items.find((p) => (p.key as { value?: unknown })?.value === part)?.value;
    else if (isSeq(node) && typeof part === 'number') node = node.items[part];
    else break;
    if (node) last = node;
  }
  const range = (last as { range?: [number, number, number] } | undefined)?.range;
  return range ? `line ${counter.linePos(range[0]).line}` : undefined;
}

export function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestScore) {
      bestScore = d;
      best = c;
    }
  }
  return best !== null && bestScore <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

export function parseConfig(text: string, file: string): { config: Config; raw: Record<string, unknown> } {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const problems: Problem[] = doc.errors.map((e) => ({
    file,
    where: e.linePos ? `line ${e.linePos[0].line}` : undefined,
    message: `is not valid YAML: ${e.message.split('\n')[0]}`,
  }));
  if (problems.length === 0) {
    const raw = (doc.toJS() ?? {}) as unknown;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push({ file, message: 'must be a YAML mapping of settings, e.g. `maxBatch: 10`', received: describeValue(raw) });
    } else {
      const parsed = configSchema.safeParse(raw, PARSED_ONCE);
      if (parsed.success) return { config: withDefaults(parsed.data), raw: raw as Record<string, unknown> };
      for (const issue of parsed.error.issues) problems.push(...configProblem(issue, raw, doc, counter, file));
    }
  }
  throw usageError(
    'bad-config',
    `${file} is not a valid config (${problems.length} problem${problems.length === 1 ? '' : 's'})`,
    `git log -p -1 -- ${file}   # the commit that changed it last; fix the lines listed (or put back what it changed), then commit ${file}`,
    problems.map(formatProblem),
  );
}

function configProblem(issue: z.core.$ZodIssue, raw: unknown, doc: Document, counter: LineCounter, file: string): Problem[] {
  const where = lineOf(doc, counter, issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const full = [...issue.path.map(String), key].join('.');
      const guess = closest(full, CONFIG_KEYS);
      return {
        file, where: lineOf(doc, counter, [...issue.path, key]), field: full,
        message: `is not a setting${guess ? `; did you mean \`${guess}\`?` : ''}`,
      };
    });
  }
  let value: unknown = raw;
  for (const part of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[part];
  return [{ file, where, field: pathText(issue.path) || undefined, message: issue.message, received: describeValue(value) }];
}

/** Parses a value given on the command line: YAML/JSON scalars and lists. */
export function parseCliValue(text: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return text;
  return doc.toJS();
}

/** Keys under a role's `options` or `env` (`runner.options.model`): any name, checked by the preset's options schema. */
const OPEN_KEY = /^(runner|judge|editor)\.(options|env)\.[^.]+(\.[^.]+)*$/;

/**
 * Sets `key` (dotted) in the config text, keeping its comments; validates the
 * result. A role runs either its `command` or a `preset`: setting one drops
 * the other (and a preset's `options` go with it, as they do when an API
 * preset gives way to an agent CLI's or back), named in `dropped`.
 */
export function setConfigValue(text: string, key: string, value: unknown, file: string): { text: string; config: Config; dropped: string[] } {
  return setConfigValues(text, [[key, value]], file);
}

/**
 * Several settings at once, validated together once all are set: a preset
 * and its model (`judge.preset openai-chat judge.options.model gpt-4o-mini`)
 * are one change, neither valid alone.
 */
export function setConfigValues(text: string, pairs: ReadonlyArray<readonly [key: string, value: unknown]>, file: string): { text: string; config: Config; dropped: string[] } {
  for (const [key] of pairs) {
    if (!(CONFIG_KEYS as readonly string[]).includes(key) && !OPEN_KEY.test(key)) {
      const guess = closest(key, CONFIG_KEYS);
      throw usageError('unknown-config-key', `\`${key}\` is not a setting${guess ? `; did you mean \`${guess}\`?` : ''}`,
        `git tune config   # lists every key with its value`, [`the settings: ${CONFIG_KEYS.join(', ')}`]);
    }
  }
  const doc = parseDocument(text);
  const dropped: string[] = [];
  for (const [key, value] of pairs) {
    const path = key.split('.');
    // Every missing mapping on the way is created (runner.options.model on a runner without options).
    for (let i = 1; i < path.length; i++) {
      const at = doc.getIn(path.slice(0, i));
      if (at === null || at === undefined) doc.setIn(path.slice(0, i), doc.createNode({}));
    }
    const [role, field] = path;
    if (path.length === 2 && (role === 'runner' || role === 'judge' || role === 'editor') && value !== null && value !== undefined) {
      const others = field === 'preset' ? ['command'] : field === 'command' ? ['preset', 'options'] : [];
      // An API preset's options (model, …) mean nothing to an agent CLI's and back: they go with the old preset.
      const old = doc.getIn([role, 'preset']);
      if (field === 'preset' && typeof old === 'string' && typeof value === 'string' && isApiPreset(old) !== isApiPreset(value)) others.push('options');
      for (const other of others) {
        if (doc.hasIn([role, other])) {
          doc.deleteIn([role, other]);
          dropped.push(`${role}.${other}`);
        }
      }
    }
    doc.setIn(path, value === null ? null : doc.createNode(value));
  }
  const out = doc.toString({ lineWidth: 0 });
  try {
    return { text: out, config: parseConfig(out, file).config, dropped };
  } catch (err) {
    // A preset set without its model: the model's hint alone cannot be followed (the preset is not saved), so both at once.
    const bare = pairs.find(([key, value]) => /^(runner|judge|editor)\.preset$/.test(key) && typeof value === 'string' && isApiPreset(value));
    const role = bare?.[0].split('.')[0];
    if (bare && err instanceof TuneError && err.details?.some((d) => d.includes(`\`${role}.options.model\``))) {
      const value = String(bare[1]);
      throw usageError('bad-config', `${role}.preset ${value} needs a model too (options.model)`,
        `git tune config set ${role}.preset ${value} ${role}.options.model ${value === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini'}`);
    }
    // Nothing was written: the fix is a value that reads, and the help lists every key with what it takes.
    if (err instanceof TuneError && err.code === 'bad-config') {
      throw usageError('bad-config', `${err.message}; nothing was written`, 'git tune config set --help   # every key with what it takes; then set it again', err.details);
    }
    throw err;
  }
}
