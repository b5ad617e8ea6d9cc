import * as z from 'zod';

/**
 * `.tune/<name>/config.yaml` (SPEC section 6). Keys are strict: a typo such as
 * `maxbatch` would silently change the method, so unknown keys are refused and
 * the closest known key is named.
 */
const positiveInt = (what: string) =>
  z.number({ error: `must be a whole number (${what})` }).int('must be a whole number').positive('must be at least 1');

export const commandSpecSchema = z
  .strictObject({
    command: z
      .array(z.string(), { error: 'must be a list of arguments, e.g. ["node", "agent.js"]' })
      .min(1, 'must name a program, e.g. ["node", "agent.js"]')
      .optional(),
    shell: z.boolean().default(false),
    timeoutSec: z.number().positive('must be more than 0 seconds').default(600),
    env: z.record(z.string(), z.string()).default({}),
    /** A ready runner of ours instead of `command` (openai-chat, claude-code). */
    preset: z.string().optional(),
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((c) => c.command !== undefined || c.preset !== undefined, {
    message: 'needs `command` (e.g. ["node", "agent.js"]) or a `preset`',
  });
export type CommandSpec = z.infer<typeof commandSpecSchema>;

export const configSchema = z
  .strictObject({
    limit: positiveInt('how many cases this tuning uses').nullable().default(null),
    minBatch: positiveInt('cases in batch 1').default(3),
    maxBatch: positiveInt('largest batch').default(10),
    recheck: z.number().int('must be a whole number').min(0, 'must be 0 or more').default(3),
    concurrency: positiveInt('cases run at once').optional(),
    seed: z.number().int('must be a whole number').min(0, 'must be 0 or more').default(1),
    maxRetries: positiveInt('batches a difficult case may be retried in').default(3),
    maxRuns: positiveInt('runs per half').default(4),
    prose: z.array(z.string().min(1)).default([]),
    memoryPolicy: z.array(z.string().min(1)).default([]),
    runner: commandSpecSchema.nullable().default(null),
    judge: commandSpecSchema.nullable().default(null),
    editor: commandSpecSchema.nullable().default(null),
    memory: z.strictObject({ merge: z.array(z.string()).min(1).nullable().default(null) }).default({ merge: null }),
    budget: z
      .strictObject({
        maxCostUsd: z.number().positive().nullable().default(null),
        maxTokens: z.number().int().positive().nullable().default(null),
      })
      .default({ maxCostUsd: null, maxTokens: null }),
    targets: z
      .array(z.strictObject({ name: z.string().min(1), env: z.record(z.string(), z.string()).default({}) }))
      .default([]),
  })
  .refine((c) => c.maxBatch >= c.minBatch, { message: 'maxBatch must be at least minBatch', path: ['maxBatch'] });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema> & { concurrency: number };

export function withDefaults(parsed: z.output<typeof configSchema>): Config {
  return { ...parsed, concurrency: parsed.concurrency ?? Math.min(parsed.maxBatch + parsed.recheck, 16) };
}

/** Every key a user may set with `git tune config set`, for suggestions. */
export const CONFIG_KEYS = [
  'limit', 'minBatch', 'maxBatch', 'recheck', 'concurrency', 'seed', 'maxRetries', 'maxRuns',
  'prose', 'memoryPolicy',
  'runner', 'runner.command', 'runner.shell', 'runner.timeoutSec', 'runner.env', 'runner.preset', 'runner.options',
  'judge', 'judge.command', 'judge.shell', 'judge.timeoutSec', 'judge.env', 'judge.preset', 'judge.options',
  'editor', 'editor.command', 'editor.shell', 'editor.timeoutSec', 'editor.env', 'editor.preset', 'editor.options',
  'memory', 'memory.merge', 'budget', 'budget.maxCostUsd', 'budget.maxTokens', 'targets',
] as const;

// Defined without zod in values.ts (the core imports it from there); re-exported here as before.
export { missingConfig } from './values.js';
