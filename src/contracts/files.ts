import * as z from 'zod';

/** Files the tool writes on the tuning branch, besides config and dataset. */
export const selectionSchema = z.looseObject({
  seed: z.number().int(),
  limit: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  datasetRev: z.string(),
  ids: z.array(z.string()),
  /** The selected ids whose complexity is `complex`: the recheck draw needs only these. */
  complex: z.array(z.string()).default([]),
});
export type Selection = z.infer<typeof selectionSchema>;

export const BATCH_KINDS = ['new', 'difficult'] as const;
export const batchPlanSchema = z.looseObject({
  batch: z.number().int().positive(),
  size: z.number().int().nonnegative(),
  why: z.string(),
  kind: z.enum(BATCH_KINDS),
  new: z.array(z.string()),
  recheck: z.array(z.string()),
});
export type BatchPlan = z.infer<typeof batchPlanSchema>;

// Defined without zod in values.ts (the core imports them from there); re-exported here as before.
import { DIFFICULT_REASONS, type DifficultReason } from './values.js';
export { DIFFICULT_REASONS, type DifficultReason };

export const difficultFileSchema = z.array(
  z.looseObject({
    id: z.string(),
    reason: z.enum(DIFFICULT_REASONS),
    batch: z.number().int().nonnegative(),
    fixed: z.boolean(),
    notes: z.array(z.string()).default([]),
  }),
);
export type DifficultFile = z.infer<typeof difficultFileSchema>;
