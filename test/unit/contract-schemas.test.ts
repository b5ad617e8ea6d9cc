import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { caseSchema } from '../../src/contracts/dataset.js';
import { contractJsonSchemas } from '../../src/contracts/json-schemas.js';
import { judgeOutputSchema } from '../../src/contracts/judge.js';
import { runnerResultSchema } from '../../src/contracts/result.js';
import { isValidCaseId } from '../../src/core/names.js';

/**
 * schema/ holds the JSON Schemas of the public contracts (docs/contracts.md),
 * generated from the zod schemas by `npm run schema`: checked in, so they go
 * stale when a zod schema changes and nobody regenerates them.
 */
const dir = new URL('../../schema/', import.meta.url);
const generated = contractJsonSchemas();
type JsonSchema = { title: string; properties: Record<string, { pattern?: string }>; required: string[] };
const schemaOf = (file: string) => JSON.parse(generated.find((g) => g.file === file)!.text) as JsonSchema;

describe('the contracts\' JSON Schemas in schema/', () => {
  it('are what the zod schemas generate today, and nothing else is there (run `npm run schema` after changing a contract)', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.json')).sort()).toEqual(generated.map((g) => g.file).sort());
    for (const { file, text } of generated) expect(readFileSync(new URL(file, dir), 'utf8'), `schema/${file} is stale: run npm run schema`).toBe(text);
  });

  it('say what zod reads as required, even where zod takes any JSON value (input, answer, right)', () => {
    expect(schemaOf('case.schema.json').required).toEqual(['id', 'class', 'input']);
    expect(schemaOf('runner-result.schema.json').required).toEqual(['answer']);
    expect(schemaOf('judge-output.schema.json').required).toEqual(['right']);
    expect(() => caseSchema.parse({ id: 'a', class: 'b' })).toThrow(/input/);
    expect(() => runnerResultSchema.parse({})).toThrow(/answer/);
    expect(() => judgeOutputSchema.parse({})).toThrow();
  });

  it('a case id\'s pattern agrees with the id rule git-tune applies (but for "." and "..", which only git-tune refuses)', () => {
    const pattern = new RegExp(schemaOf('case.schema.json').properties.id!.pattern!);
    for (const id of ['billing-refund-03', 'a.b_c', 'x', 'has space', 'slash/in', 'ünï', '.', '..', '...']) {
      expect(pattern.test(id) && id !== '.' && id !== '..', id).toBe(isValidCaseId(id));
    }
  });

  it('a dataset file is a list of cases or {cases: [...]}, each case by reference to the case schema', () => {
    const file = JSON.parse(generated.find((g) => g.file === 'dataset.schema.json')!.text) as { anyOf: Array<Record<string, unknown>> };
    expect(file.anyOf).toEqual([
      { type: 'array', items: { $ref: 'case.schema.json' } },
      { type: 'object', properties: { cases: { type: 'array', items: { $ref: 'case.schema.json' } } }, required: ['cases'] },
    ]);
  });

  it('every key of the example dataset\'s cases is a property of the case schema', () => {
    const { cases } = parse(readFileSync(new URL('../../templates/example/cases.yaml', import.meta.url), 'utf8')) as { cases: Array<Record<string, unknown>> };
    const properties = Object.keys(schemaOf('case.schema.json').properties);
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) for (const key of Object.keys(c)) expect(properties, `${String(c.id)}.${key}`).toContain(key);
  });
});
