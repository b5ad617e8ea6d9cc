import * as z from 'zod';

/**
 * What a runner writes to TUNE_OUTPUT (docs/contracts.md#runner). Unknown extra keys
 * are kept. Numbers a runner cannot know may be left out (they count as 0).
 */
export const usageSchema = z.looseObject({
  model: z.string().min(1, 'must name the model'),
  inputTokens: z.number().nonnegative().default(0),
  outputTokens: z.number().nonnegative().default(0),
  cachedTokens: z.number().nonnegative().default(0),
  costUsd: z.number().nonnegative().default(0),
});
export type Usage = z.infer<typeof usageSchema>;

export const runnerResultSchema = z.looseObject({
  answer: z.unknown().refine((v) => v !== undefined, 'is required: a string or any JSON value'),
  usage: z.array(usageSchema).default([]),
  llmCalls: z.number().int().nonnegative().default(0),
  toolCalls: z.number().int().nonnegative().default(0),
  memoryReads: z.number().int().nonnegative().default(0),
  durationMs: z.number().nonnegative().optional(),
  error: z.string().optional(),
  void: z.string().optional(),
  sandboxDown: z.string().optional(),
});
export type RunnerResult = z.infer<typeof runnerResultSchema>;

export const checkOutcomeSchema = z.object({
  type: z.string(),
  pass: z.boolean(),
  detail: z.string().optional(),
});
export type CheckOutcome = z.infer<typeof checkOutcomeSchema>;

export const memoryWriteSchema = z.object({
  path: z.string(),
  op: z.enum(['added', 'changed', 'deleted']),
  /** utf8 text, or base64 when `encoding` is base64; absent for deletions. */
  content: z.string().optional(),
  encoding: z.enum(['utf8', 'base64']).optional(),
  savedTwice: z.boolean(),
});
export type MemoryWrite = z.infer<typeof memoryWriteSchema>;

/** One case of a run as the run commit records it (compact: no logs). */
const caseAnswerSchema = z.object({
  id: z.string(),
  rev: z.string(),
  status: z.enum(['ok', 'error', 'void']),
  answer: z.unknown().optional(),
  /** From the case's checks; null when it has none (the judge decides). */
  right: z.boolean().nullable(),
  checks: z.array(checkOutcomeSchema),
  usage: z.array(usageSchema),
  tokens: z.number(),
  costUsd: z.number(),
  llmCalls: z.number(),
  toolCalls: z.number(),
  memoryReads: z.number(),
  memoryWrites: z.object({ added: z.number(), changed: z.number(), deleted: z.number(), savedTwice: z.number(), refused: z.array(z.string()) }),
  durationMs: z.number(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  error: z.string().optional(),
  void: z.string().optional(),
  sandboxDown: z.string().optional(),
  startedAt: z.string(),
});

/**
 * A repeat: the same case run again in the same run, on the same prose and
 * memory, because one answer would have decided something (docs/method.md#noise).
 * The same fields as the case's first answer; `n` counts from 2 (the first answer is 1).
 * `round` 2: a repeat of the second round, run because the first round's
 * majority still contradicted the case's last graded answer; it must
 * reproduce that (absent: round 1).
 */
export const caseRepeatSchema = caseAnswerSchema.omit({ id: true, rev: true }).extend({ n: z.number().int().min(2), round: z.literal(2).optional() });
export type CaseRepeat = z.infer<typeof caseRepeatSchema>;

/** One case of a run: its first answer, and its repeats when there were any (absent = none). */
export const caseResultSchema = caseAnswerSchema.extend({ repeats: z.array(caseRepeatSchema).optional() });
export type CaseResult = z.infer<typeof caseResultSchema>;

export const runMetaSchema = z.looseObject({
  run: z.string(),
  tuning: z.string(),
  cases: z.array(z.string()),
  concurrency: z.number(),
  runner: z.array(z.string()),
  target: z.string().nullable(),
  machine: z.object({ platform: z.string(), arch: z.string(), cpus: z.number(), node: z.string() }),
  startedAt: z.string(),
  finishedAt: z.string(),
  void: z.string().nullable(),
  stopped: z.string().nullable(),
});
export type RunMeta = z.infer<typeof runMetaSchema>;

export function tokensOf(usage: readonly Usage[]): number {
  return usage.reduce((sum, u) => sum + u.inputTokens + u.outputTokens, 0);
}

export function costOf(usage: readonly Usage[]): number {
  return usage.reduce((sum, u) => sum + u.costUsd, 0);
}
