import * as z from 'zod';
import { isApiPreset, PRESET_NAMES, presetOptionsSchema, presetProblem, type Role } from './presets.js';

/**
 * `.tune/<name>/config.yaml` (docs/contracts.md#config). Keys are strict: a typo such as
 * `maxbatch` would silently change the method, so unknown keys are refused and
 * the closest known key is named.
 */
const positiveInt = (what: string) =>
  z.number({ error: `must be a whole number (${what})` }).int('must be a whole number').positive('must be at least 1');

/** Globs over TUNE_WORKSPACE naming the files a runner leaves there that the logs ref keeps. */
const keepSchema = z
  .array(z.string().min(1, 'must be a glob, e.g. "*.md"'), { error: 'must be a list of globs, e.g. ["*.md"]' })
  .optional()
  .describe('files the runner leaves in TUNE_WORKSPACE to keep in the logs ref, as globs relative to it, e.g. ["*.md"] (each capped at 1 MiB, secrets redacted; git tune show <run> <case> --log)');

/**
 * A runner, judge or editor: a program of the user's (`command`) or a ready
 * one of ours (`preset` + `options`, docs/presets.md). A preset is valid only
 * in its own role, and its options are checked against the preset's schema
 * here, so a typo fails when config.yaml is read, not on the first case.
 */
export function commandSpecSchema<R extends Role>(role: R) {
  return z.strictObject(commandSpecFields(role)).superRefine(checkCommandSpec(role));
}

/** The runner's spec: a command spec, and the workspace files to keep. */
const runnerSpecSchema = z.strictObject({ ...commandSpecFields('runner'), keep: keepSchema }).superRefine(checkCommandSpec('runner'));

/** The judge's spec: a command spec, and how many times it is asked about one answer (docs/method.md#noise). */
const judgeSpecSchema = z.strictObject({
  ...commandSpecFields('judge'),
  repeats: positiveInt('times the judge is asked about one answer').default(1)
    .describe('times the judge is asked about one answer; with more than 1 the majority verdict stands (a tie is wrong) and disagreements are recorded next to the case'),
}).superRefine(checkCommandSpec('judge'));

function commandSpecFields<R extends Role>(role: R) {
  const names = PRESET_NAMES[role] as unknown as readonly [(typeof PRESET_NAMES)[R][number], ...(typeof PRESET_NAMES)[R][number][]];
  return {
    command: z
      .array(z.string(), { error: 'must be a list of arguments, e.g. ["node", "agent.js"]' })
      .min(1, 'must name a program, e.g. ["node", "agent.js"]')
      .optional()
      .describe('the program and its arguments, e.g. ["node", "agent.js"]'),
    shell: z.boolean().default(false).describe('run `command` joined into one shell line (pipes, globs and $VARS work)'),
    timeoutSec: z.number().positive('must be more than 0 seconds').default(600).describe('seconds the program may run (per case) before it is stopped'),
    env: z.record(z.string(), z.string()).default({}).describe('environment variables added for the program'),
    preset: z
      .enum(names, { error: (issue) => presetProblem(role, String(issue.input)) ?? `must be one of: ${names.join(', ')}` })
      .optional()
      .describe(`a ready ${role} of ours instead of \`command\`: ${names.join(', ')} (docs/presets.md)`),
    options: z.record(z.string(), z.unknown()).optional().describe("the preset's options, e.g. {model: gpt-4o-mini} (docs/presets.md)"),
  };
}

function checkCommandSpec(role: Role) {
  const names = PRESET_NAMES[role];
  return (spec: { command?: string[] | undefined; preset?: string | undefined; options?: Record<string, unknown> | undefined }, ctx: z.RefinementCtx) => {
    if (spec.command === undefined && spec.preset === undefined) {
      ctx.addIssue({ code: 'custom', message: `needs \`command\` (e.g. ["node", "agent.js"]) or a \`preset\` (${names.join(', ')})` });
      return;
    }
    if (spec.command !== undefined && spec.preset !== undefined) {
      ctx.addIssue({
        code: 'custom', path: ['preset'],
        message: `cannot be set together with \`command\`: which one runs would be ambiguous; keep one (\`git tune config set ${role}.preset ${spec.preset}\` drops the command)`,
      });
      return;
    }
    if (spec.preset === undefined) {
      if (spec.options !== undefined) ctx.addIssue({ code: 'custom', path: ['options'], message: `belong to a preset, and this ${role} runs \`command\` (a preset with its options: git tune config set ${role} '{preset: ${names[0]}, options: {model: gpt-4o-mini}}')` });
      return;
    }
    const parsed = presetOptionsSchema(spec.preset).safeParse(spec.options ?? {});
    if (parsed.success) return;
    const known = Object.keys(presetOptionsSchema(spec.preset).shape);
    for (const issue of parsed.error.issues) {
      const at = ['options', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          ctx.addIssue({ code: 'custom', path: [...at, key], message: `is not an option of the ${spec.preset} preset (its options: ${known.join(', ')})` });
        }
        continue;
      }
      const missingModel = isApiPreset(spec.preset) && issue.path.length === 1 && issue.path[0] === 'model' && spec.options?.model === undefined;
      ctx.addIssue({
        code: 'custom', path: at,
        message: missingModel ? `must name the model: the ${spec.preset} preset needs it (git tune config set ${role}.options.model gpt-4o-mini)` : issue.message,
      });
    }
  };
}

/** A runner, judge or editor as config.yaml holds it (a preset valid in the role it is in). */
export interface CommandSpec {
  command?: string[] | undefined;
  shell: boolean;
  timeoutSec: number;
  env: Record<string, string>;
  preset?: string | undefined;
  options?: Record<string, unknown> | undefined;
  /** Runner only: globs of TUNE_WORKSPACE files kept in the logs ref. */
  keep?: string[] | undefined;
  /** Judge only: times it is asked about one answer (the majority stands). */
  repeats?: number | undefined;
}

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
    maxStuckShare: z.number({ error: 'must be a share of the selection, e.g. 0.2' }).min(0, 'must be 0 or more').max(1, 'must be at most 1').default(0.2)
      .describe('the share of the selection that may end stuck before the final check cannot be VERIFIED (0.2 = a fifth)'),
    maxEditorIdle: positiveInt('halves in a row the editor may leave unchanged').default(2)
      .describe('halves in a row the editor may end by changing nothing before `git tune auto` stops for a person (editor-idle)'),
    noise: z
      .strictObject({
        repeats: z.number({ error: 'must be a whole number (repeats of a case whose single answer would decide)' }).int('must be a whole number').min(0, 'must be 0 or more').default(3)
          .describe('times a case is re-run on the same prose when one answer would decide (a flip, a final-check failure); the majority decides, and a majority that contradicts the case\'s last graded answer is re-run as many times again to be reproduced; 0: never (an agent that answers the same every time)'),
      })
      .default({ repeats: 3 })
      .describe('repeats: how a noisy agent is re-run before a decision (docs/method.md#noise)'),
    prose: z.array(z.string().min(1)).default([])
      .describe('globs of the prose being tuned (prompts, skills, rules), from the repository root'),
    memoryPolicy: z.array(z.string().min(1)).default([])
      .describe('globs of the memory-policy files: the only prose a with-memory half may edit'),
    runner: runnerSpecSchema.nullable().default(null)
      .describe('the agent under tuning: {command: [argv...], shell, timeoutSec, env}'),
    judge: judgeSpecSchema.nullable().default(null)
      .describe('optional rubric judge, same shape as runner'),
    editor: commandSpecSchema('editor').nullable().default(null)
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
    heldOut: z
      .strictObject({
        maxDrop: z.number({ error: 'must be a whole number of cases, e.g. 1' }).int('must be a whole number of cases').min(0, 'must be 0 or more').default(0)
          .describe('held-out cases the tuned prose may get right fewer than the baseline did before the final check fails; 0 = none'),
      })
      .default({ maxDrop: 0 })
      .describe('maxDrop: the noise allowed on the held-out set (cases) before the final check fails'),
    targets: z
      .array(
        z.strictObject({
          name: z.string().min(1).describe('the target model, passed to the runner as TUNE_TARGET'),
          env: z.record(z.string(), z.string()).default({}).describe('environment variables added for this target'),
        }),
      )
      .default([])
      .describe('target models: [{name, env}] passed to the runner as TUNE_TARGET and env'),
    target: z.string().min(1).optional()
      .describe('the target every run of this tuning uses (one of `targets`; `git tune fleet` sets it)'),
  })
  .refine((c) => c.maxBatch >= c.minBatch, { message: 'maxBatch must be at least minBatch', path: ['maxBatch'] })
  .refine((c) => c.target === undefined || c.targets.some((t) => t.name === c.target), {
    message: 'must name one of `targets`', path: ['target'],
  });

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
const LEFT_OUT_BY_INIT = new Set(['concurrency', 'memory', 'heldOut', 'targets', 'target', 'maxStuckShare', 'maxEditorIdle', 'noise']);

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
 * `preset`, not both; a preset's options) are checked by git-tune only.
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
