import * as z from 'zod';

/**
 * `manifest.json` of a final-check result set: what `git tune final --shard`
 * (or `--ci`) wrote, and what `--collect` checks before it merges shards.
 * Unknown extra keys are kept, as in every file other tools may write.
 */
export const RESULT_SET_FORMAT = 'git-tune-result-set/1';

const shardSchema = z.object({
  index: z.number().int().positive(),
  count: z.number().int().positive(),
});

export const resultSetManifestSchema = z.looseObject({
  format: z.literal(RESULT_SET_FORMAT, { error: `must be "${RESULT_SET_FORMAT}"` }),
  tuning: z.string().min(1),
  branch: z.string().min(1),
  /** The tuning branch's tip the cases ran at: prose, memory, config and selection all come from it. */
  tip: z.string().regex(/^[0-9a-f]{40,64}$/, 'must be a full commit id'),
  run: z.string().min(1),
  /** `final`: the final check was due; `recheck`: the final check was already in history. */
  mode: z.enum(['final', 'recheck']),
  seed: z.number().int(),
  selection: z.object({ hash: z.string().min(1), cases: z.number().int().nonnegative() }),
  shard: shardSchema,
  /** The cases of this set, in selection order. */
  cases: z.array(z.string()),
  runner: z.array(z.string()),
  target: z.string().nullable(),
  concurrency: z.number().int().positive(),
  machine: z.looseObject({ platform: z.string(), arch: z.string(), cpus: z.number(), node: z.string() }),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** Whether judge.json holds the configured judge's verdicts of these cases. */
  judged: z.boolean(),
  /** A collected set: the shards it was merged from. */
  from: z.array(z.looseObject({ shard: shardSchema, concurrency: z.number(), machine: z.looseObject({}), startedAt: z.string(), finishedAt: z.string() })).optional(),
});
export type ResultSetManifest = z.infer<typeof resultSetManifestSchema>;
