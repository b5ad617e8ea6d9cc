import * as z from 'zod';

/**
 * `.tune/<name>/config.yaml` (docs/contracts.md#config). Keys are strict: a typo such as
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
      .optional()
      .describe('the program and its arguments, e.g. ["node", "agent.js"]'),
    shell: z.boolean().default(false).describe('run `command` joined into one shell line (pipes, globs and $VARS work)'),
    timeoutSec: z.number().positive('must be more than 0 seconds').default(600).describe('seconds the program may run (per case) before it is stopped'),
    env: z.record(z.string(), z.string()).default({}).describe('environment variables added for the program'),
    /** A ready runner of ours instead of `command` (openai-chat, claude-code). */
    preset: z.string().optional().describe('a ready runner instead of `command`: openai-chat or claude-code'),
    options: z.record(z.string(), z.unknown()).optional().describe("the preset's options (model, prompt file, …)"),
  })
  .refine((c) => c.command !== undefined || c.preset !== undefined, {
    message: 'needs `command` (e.g. ["node", "agent.js"]) or a `preset`',
  });
export type CommandSpec = z.infer<typeof commandSpecSchema>;

export const configSchema = z
  .strictObject({
    limit: positiveInt('how many cases this tuning uses').nullable().default(null)
      .describe('how many cases this tuning uses; null = the whole dataset'),
    minBatch: positiveInt('cases in batch 1').default(3)
      .describe('cases in batch 1'),
    maxBatch: positiveInt('largest batch').default(10)
      .describe('the largest a batch grows to (at least minBatch)'),
    recheck: z.number().int('must be a whole number').min(0, 'must be 0 or more').default(3)
      .describe('cases from earlier batches run again in each batch'),
    concurrency: positiveInt('cases run at once').optional()
      .describe('cases run at once; default min(maxBatch + recheck, 16)'),
    seed: z.number().int('must be a whole number').min(0, 'must be 0 or more').default(1)
      .describe('seeds the selection order and the recheck draw'),
    maxRetries: positiveInt('batches a difficult case may be retried in').default(3)
      .describe('batches a difficult case may be retried in before it is stuck'),
    maxRuns: positiveInt('runs per half').default(4)
      .describe('runs per half (no-memory, with-memory) before the batch is stopped'),
    prose: z.array(z.string().min(1)).default([])
      .describe('globs of the prose being tuned (prompts, skills, rules), from the repository root'),
    memoryPolicy: z.array(z.string().min(1)).default([])
      .describe('globs of the memory-policy files: the only prose a with-memory half may edit'),
    runner: commandSpecSchema.nullable().default(null)
      .describe('the agent under tuning: {command: [argv...], shell, timeoutSec, env}'),
    judge: commandSpecSchema.nullable().default(null)
      .describe('optional rubric judge, same shape as runner'),
    editor: commandSpecSchema.nullable().default(null)
      .describe('optional editor used by `git tune auto`, same shape as runner'),
    memory: z
      .strictObject({
        merge: z.array(z.string()).min(1).nullable().default(null)
          .describe('a command (argv list) that merges two memories; null = the file-level merge'),
      })
      .default({ merge: null })
      .describe('merge: optional command that merges memories instead of the file-level merge'),
    budget: z
      .strictObject({
        maxCostUsd: z.number().positive().nullable().default(null)
          .describe('US dollars the whole tuning may spend on runs; null = no limit'),
        maxTokens: z.number().int().positive().nullable().default(null)
          .describe('tokens the whole tuning may spend on runs; null = no limit'),
      })
      .default({ maxCostUsd: null, maxTokens: null })
      .describe('maxCostUsd, maxTokens: the whole tuning stops launching cases past these'),
    targets: z
      .array(
        z.strictObject({
          name: z.string().min(1).describe('the target model, passed to the runner as TUNE_TARGET'),
          env: z.record(z.string(), z.string()).default({}).describe('environment variables added for this target'),
        }),
      )
      .default([])
      .describe('target models: [{name, env}] passed to the runner as TUNE_TARGET and env'),
  })
  .refine((c) => c.maxBatch >= c.minBatch, { message: 'maxBatch must be at least minBatch', path: ['maxBatch'] });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema> & { concurrency: number };

export function withDefaults(parsed: z.output<typeof configSchema>): Config {
  return { ...parsed, concurrency: parsed.concurrency ?? Math.min(parsed.maxBatch + parsed.recheck, 16) };
}

/** A field's schema under its wrappers (default, nullable, optional): an object's keys are settings too. */
function objectShape(field: z.ZodType): Record<string, z.ZodType> | null {
  let t: z.ZodType | undefined = field;
  while (t && !(t instanceof z.ZodObject)) t = (t.def as { innerType?: z.ZodType }).innerType;
  return t instanceof z.ZodObject ? (t.shape as Record<string, z.ZodType>) : null;
}

/**
 * Every setting of config.yaml in the schema's order, with its one-line doc
 * (the schema's `.describe()`, which the JSON Schema carries too): the
 * comments a new config.yaml has above each key.
 */
export const CONFIG_DOCS: ReadonlyArray<readonly [key: string, doc: string]> = Object.entries(configSchema.shape).map(
  ([key, field]) => [key, field.description ?? ''] as const,
);

/** Every key a user may set with `git tune config set` (dotted for a field of an object setting), for suggestions. */
export const CONFIG_KEYS: readonly string[] = Object.entries(configSchema.shape).flatMap(([key, field]) => {
  const shape = objectShape(field);
  return [key, ...(shape ? Object.keys(shape).map((sub) => `${key}.${sub}`) : [])];
});

/** The top-level settings, in the schema's order. */
export const CONFIG_TOP_KEYS: readonly string[] = Object.keys(configSchema.shape);

/**
 * Settings a new config.yaml leaves out (`git tune init`, `import`): rarely
 * changed, their defaults hold until `git tune config set` adds them.
 */
const LEFT_OUT_BY_INIT = new Set(['concurrency', 'memory', 'targets']);

/** The values `git tune init` writes to a new config.yaml: the schema's defaults, fresh on every call. */
export function initConfigValues(): Record<string, unknown> {
  const defaults = configSchema.parse({}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(defaults).filter(([key]) => !LEFT_OUT_BY_INIT.has(key)));
}

// Defined without zod in values.ts (the core imports it from there); re-exported here as before.
export { missingConfig } from './values.js';

/**
 * The JSON Schema of config.yaml (what a user writes: keys with a default may
 * be left out), for editors that validate YAML. `npm run schema` writes it to
 * schema/config.schema.json; a test fails when that file is not what this
 * returns. The schema's refinements (maxBatch at least minBatch; `command` or
 * `preset`) are checked by git-tune only.
 */
export function configJsonSchema(): string {
  const { $schema, ...rest } = z.toJSONSchema(configSchema, { io: 'input' }) as Record<string, unknown>;
  const schema = {
    $schema,
    title: 'git-tune config.yaml',
    description: 'The settings of one tuning: .tune/<name>/config.yaml. `git tune config` prints them with every default filled in.',
    ...rest,
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
