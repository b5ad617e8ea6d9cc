import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig, renderConfig, setConfigValue } from '../../src/app/config-file.js';
import { configKeysHelp } from '../../src/cli/config-help.js';
import { CONFIG_DOCS, CONFIG_KEYS, CONFIG_TOP_KEYS, configJsonSchema, configSchema, initConfigValues, withDefaults } from '../../src/contracts/config.js';
import { TuneError } from '../../src/errors.js';

type JsonSchema = { description?: string; default?: unknown; properties?: Record<string, JsonSchema>; anyOf?: JsonSchema[]; items?: JsonSchema };
const jsonSchema = JSON.parse(configJsonSchema()) as JsonSchema;
const FILE = '.tune/desk/config.yaml';

describe('the config settings come from the zod schema', () => {
  it('the settable keys are the schema\'s fields and the fields of its object settings, as the hand-kept list had them', () => {
    expect(CONFIG_TOP_KEYS).toEqual(Object.keys(jsonSchema.properties!));
    expect(CONFIG_KEYS).toEqual([
      'limit', 'minBatch', 'maxBatch', 'recheck', 'concurrency', 'seed', 'maxRetries', 'maxRuns',
      'maxStuckShare', 'maxEditorIdle', 'noise', 'noise.repeats',
      'prose', 'memoryPolicy',
      'runner', 'runner.command', 'runner.shell', 'runner.timeoutSec', 'runner.env', 'runner.preset', 'runner.options', 'runner.keep',
      'judge', 'judge.command', 'judge.shell', 'judge.timeoutSec', 'judge.env', 'judge.preset', 'judge.options', 'judge.repeats',
      'editor', 'editor.command', 'editor.shell', 'editor.timeoutSec', 'editor.env', 'editor.preset', 'editor.options',
      'memory', 'memory.merge', 'budget', 'budget.maxCostUsd', 'budget.maxTokens', 'heldOut', 'heldOut.maxDrop', 'targets', 'target',
    ]);
  });

  it('every key `config set` takes is one the schema reads; any other is refused with the settings listed', () => {
    const text = renderConfig({ ...initConfigValues(), prose: ['agents/*.md'], runner: { command: ['node', 'agent.js'] } });
    for (const key of CONFIG_KEYS) {
      try {
        setConfigValue(text, key, null, FILE);
      } catch (err) {
        // A null may be a bad value for the key, never an unknown key.
        expect((err as TuneError).code, key).toBe('bad-config');
      }
    }
    const refused = (() => {
      try {
        setConfigValue(text, 'runner.timeoutSecs', 5, FILE);
      } catch (err) {
        return err as TuneError;
      }
      throw new Error('accepted a key that is not a setting');
    })();
    expect(refused.code).toBe('unknown-config-key');
    expect(refused.message).toBe('`runner.timeoutSecs` is not a setting; did you mean `runner.timeoutSec`?');
    expect(refused.details).toEqual([`the settings: ${CONFIG_KEYS.join(', ')}`]);
  });

  it('noise.repeats may be 0 (repeats off, for an agent that answers the same every time), never negative or fractional', () => {
    expect(configSchema.parse({ noise: { repeats: 0 } }).noise.repeats).toBe(0);
    expect(configSchema.parse({}).noise.repeats).toBe(3);
    expect(configSchema.safeParse({ noise: { repeats: -1 } }).success).toBe(false);
    expect(configSchema.safeParse({ noise: { repeats: 1.5 } }).success).toBe(false);
  });

  it('every setting, nested ones too, has a one-line description', () => {
    const walk = (schema: JsonSchema, at: string): void => {
      for (const [key, field] of Object.entries(schema.properties ?? {})) {
        expect(field.description, `${at}${key}`).toMatch(/^[^\n]{8,}$/);
        for (const inner of [field, ...(field.anyOf ?? []), ...(field.items ? [field.items] : [])]) {
          if (inner !== field || !field.anyOf) walk(inner, `${at}${key}.`);
        }
      }
    };
    walk(jsonSchema, '');
    expect(CONFIG_DOCS.map(([key, doc]) => [key, doc])).toEqual(
      Object.entries(jsonSchema.properties!).map(([key, field]) => [key, field.description]),
    );
  });

  it('init writes the schema\'s defaults: config.yaml parses to the same settings as an empty one, each key with its doc above it', () => {
    const values = initConfigValues();
    for (const [key, value] of Object.entries(values)) expect(value, key).toEqual(jsonSchema.properties![key]!.default);
    const text = renderConfig(values);
    expect(parseConfig(text, FILE).config).toEqual(withDefaults(configSchema.parse({})));
    const doc = parseDocument(text);
    for (const key of Object.keys(values)) {
      const doc_ = CONFIG_DOCS.find(([k]) => k === key)![1];
      expect(text, key).toContain(`# ${doc_}\n${key}:`);
      expect(doc.has(key)).toBe(true);
    }
    // Fresh on every call: a caller that changes its copy changes no other's.
    (initConfigValues().prose as string[]).push('x');
    expect(initConfigValues().prose).toEqual([]);
  });

  it('schema/config.schema.json is what the zod schema generates today (run `npm run schema` after changing the settings)', () => {
    const checkedIn = readFileSync(new URL('../../schema/config.schema.json', import.meta.url), 'utf8');
    expect(checkedIn).toBe(configJsonSchema());
  });

  it('`config set --help` lists every settable key with its description', () => {
    const help = configKeysHelp();
    const rows = help.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.trim().split(/\s{2,}/));
    expect(rows.map(([key]) => key)).toEqual(CONFIG_KEYS);
    for (const [key, doc] of CONFIG_DOCS) expect(rows.find(([k]) => k === key)?.[1]).toBe(doc);
  });
});
