import * as z from 'zod';

/** What a judge writes to TUNE_OUTPUT (docs/contracts.md#judge). Unknown extra keys are kept. */
export const proposalSchema = z.looseObject({
  file: z.string().min(1, 'must name the prose file to change'),
  change: z.string().min(1, 'must say what to change'),
  why: z.string().default(''),
  expect: z.string().default(''),
});
export type Proposal = z.infer<typeof proposalSchema>;

/**
 * A judge that exits with this code cannot work at all (its key is refused:
 * HTTP 401/403): calling it again would fail the same way, so it is not
 * retried (sysexits' EX_UNAVAILABLE). Any other failure is retried.
 */
export const JUDGE_EXIT_DOWN = 69;

export const RUBRIC_MARKS = ['met', 'partial', 'missed'] as const;

export const judgeOutputSchema = z.looseObject({
  right: z.boolean({ error: 'must be true or false' }),
  rubric: z.record(z.string(), z.enum(RUBRIC_MARKS, { error: 'must be met, partial or missed' })).default({}),
  evidence: z.record(z.string(), z.string()).default({}),
  summary: z.string().default(''),
  caseOnly: z.boolean().default(false),
  proposals: z.array(proposalSchema).default([]),
});
export type JudgeOutput = z.infer<typeof judgeOutputSchema>;

/**
 * The judge's verdicts of a run, kept with it: case id → output, or the error
 * that replaced it (the case is VOID for the judge) with how many times the
 * judge was called. `undone`: files of the repository the judge changed
 * while judging that case, put back by git-tune.
 */
export const judgeErrorSchema = z.object({ error: z.string(), tries: z.number().int().positive().optional(), undone: z.array(z.string()).optional() });
export const judgeFileSchema = z.record(
  z.string(),
  z.union([judgeOutputSchema, judgeErrorSchema]),
);
export type JudgeFile = z.infer<typeof judgeFileSchema>;
