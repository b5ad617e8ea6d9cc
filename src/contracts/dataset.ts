import { createHash } from 'node:crypto';
import * as z from 'zod';
import { isValidCaseId } from '../core/names.js';
import { canonical } from './canonical.js';

/** A case of the dataset (docs/contracts.md#dataset). Unknown extra keys are kept. */
export const COMPLEXITIES = ['simple', 'medium', 'complex'] as const;
export type Complexity = (typeof COMPLEXITIES)[number];

const caseId = z
  .string({ error: 'must be a string like "billing-refund-03"' })
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .refine(isValidCaseId, 'must use only A-Z a-z 0-9 . _ - and not be "." or ".." (it names a folder)');

export const rubricItemSchema = z.looseObject({
  id: z.string().min(1, 'must not be empty'),
  text: z.string().min(1, 'must not be empty'),
});

const commandArgs = z.array(z.string()).min(1, 'must name a program, e.g. ["node", "check.js"]');

export const checkSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('equals'), value: z.unknown() }),
    z.looseObject({ type: z.literal('contains'), value: z.string() }),
    z.looseObject({ type: z.literal('not-contains'), value: z.string() }),
    z.looseObject({ type: z.literal('regex'), value: z.string(), flags: z.string().optional() }),
    z.looseObject({ type: z.literal('json'), path: z.string().startsWith('$', 'must start with $, e.g. "$.plan.steps[0]"'), value: z.unknown() }),
    z.looseObject({ type: z.literal('command'), command: commandArgs }),
  ],
  { error: 'type must be one of equals, contains, not-contains, regex, json, command' },
);

export const caseSchema = z.looseObject({
  id: caseId,
  class: z.string({ error: 'must be a string naming the class, e.g. "billing"' }).min(1, 'must not be empty'),
  input: z.unknown().refine((v) => v !== undefined, 'is required: text, or any JSON value the runner understands'),
  complexity: z.enum(COMPLEXITIES, { error: 'must be simple, medium or complex' }).default('medium'),
  rubric: z.array(rubricItemSchema).optional(),
  checks: z.array(checkSchema).optional(),
  expected: z.unknown().optional(),
  notes: z.unknown().optional(),
  rev: z.string().optional(),
});

export { canonical };

export type Case = z.infer<typeof caseSchema> & { rev: string };
export type Check = z.infer<typeof checkSchema>;

/** `rev` is a hash of the case's content, so a changed case is noticed. */
export function caseRev(item: Record<string, unknown>): string {
  const { rev: _ignored, ...rest } = item;
  return createHash('sha256').update(canonical(rest)).digest('hex').slice(0, 12);
}

export function datasetRev(cases: readonly Case[]): string {
  const hash = createHash('sha256');
  for (const c of cases) hash.update(`${c.id}:${c.rev}\n`);
  return hash.digest('hex').slice(0, 12);
}
