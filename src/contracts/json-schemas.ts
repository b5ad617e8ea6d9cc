import * as z from 'zod';
import { configJsonSchema } from './config.js';
import { caseSchema } from './dataset.js';
import { judgeOutputSchema } from './judge.js';
import { runnerResultSchema } from './result.js';

/**
 * The JSON Schemas of the public contracts (docs/contracts.md), generated
 * from their zod schemas, which stay the source of truth: `npm run schema`
 * writes them to schema/ (checked in and shipped, for editors and for
 * runners, judges and datasets written in other languages), and a unit test
 * fails when a file there is not what this gives today.
 *
 * What JSON Schema cannot say is checked by git-tune only: a case id is not
 * `.` or `..`; `input` and `answer` must be present but may be any JSON
 * value (zod reads them as `unknown`, so the generated schema is told they
 * are required here).
 */
interface Contract {
  file: string;
  title: string;
  description: string;
  schema: z.ZodType;
  required?: string[];
  /** Properties whose generated schema gets more (a pattern zod's refinement holds). */
  extra?: Record<string, Record<string, unknown>>;
}

const CONTRACTS: Contract[] = [
  {
    file: 'case.schema.json',
    title: 'git-tune dataset case',
    description: 'One case of a dataset (git tune dataset import): a dataset file is a list of these, or an object with a `cases` list, in JSON or YAML, or one per line in JSONL. Unknown extra keys are kept. docs/contracts.md#dataset',
    schema: caseSchema,
    required: ['input'],
    extra: { id: { pattern: '^[A-Za-z0-9._-]+$' } },
  },
  {
    file: 'runner-result.schema.json',
    title: 'git-tune runner result',
    description: 'What a runner writes to the file TUNE_OUTPUT names, once per case. Unknown extra keys are kept; counts left out are 0. docs/contracts.md#runner',
    schema: runnerResultSchema,
    required: ['answer'],
  },
  {
    file: 'judge-output.schema.json',
    title: 'git-tune judge output',
    description: 'What a judge writes to the file TUNE_OUTPUT names, once per case. Unknown extra keys are kept. docs/contracts.md#judge',
    schema: judgeOutputSchema,
  },
];

function render(contract: Contract): string {
  const { $schema, ...rest } = z.toJSONSchema(contract.schema, { io: 'input' }) as Record<string, unknown> & { properties: Record<string, Record<string, unknown>>; required?: string[] };
  for (const [key, more] of Object.entries(contract.extra ?? {})) Object.assign(rest.properties[key]!, more);
  const required = [...new Set([...(rest.required ?? []), ...(contract.required ?? [])])];
  const order = Object.keys(rest.properties);
  const schema = {
    $schema,
    title: contract.title,
    description: contract.description,
    ...rest,
    required: required.sort((a, b) => order.indexOf(a) - order.indexOf(b)),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/**
 * A whole dataset file as `dataset import` reads it (JSON or YAML): a list
 * of cases, or an object with a `cases` list; each case as
 * case.schema.json says, by reference, so an editor mapping cases.yaml to
 * this file validates every case.
 */
function datasetFileSchema(): string {
  const cases = { type: 'array', items: { $ref: 'case.schema.json' } };
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'git-tune dataset file',
    description: 'A dataset file for git tune dataset import, JSON or YAML: a list of cases, or an object with a `cases` list (JSONL holds one case per line instead). docs/contracts.md#dataset',
    anyOf: [cases, { type: 'object', properties: { cases }, required: ['cases'] }],
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** Every file of schema/: its name and its text. */
export function contractJsonSchemas(): Array<{ file: string; text: string }> {
  return [
    ...CONTRACTS.map((c) => ({ file: c.file, text: render(c) })),
    { file: 'dataset.schema.json', text: datasetFileSchema() },
    { file: 'config.schema.json', text: configJsonSchema() },
  ];
}
