import type { BatchPlan } from '../contracts/files.js';
import { planBatch } from '../core/plan.js';
import { commitStep, targetOf, type WriteContext } from './commit.js';
import { nextInputFor } from './decide.js';
import { requireOnBranch } from './guards.js';
import { requireIntactHistory } from './rewritten.js';
import type { Tuning } from './tuning.js';
import { batchPlanPath } from '../core/paths.js';

/** `git tune batch`: plan the next batch (docs/method.md#batches) and record it, one commit. */
export const batchFile = (tuning: Tuning, batch: number) => batchPlanPath(tuning.dir, batch);

export function planNextBatch(tuning: Tuning, size?: number): BatchPlan | null {
  const input = nextInputFor(tuning);
  return planBatch({
    state: tuning.state,
    selection: input.selection,
    complexity: input.complexity,
    settings: tuning.config!,
    ...(size === undefined ? {} : { size }),
  });
}

export async function writePlan(tuning: Tuning, plan: BatchPlan, ctx: WriteContext): Promise<string> {
  requireOnBranch(tuning);
  await requireIntactHistory(tuning);
  return commitStep(
    targetOf(tuning),
    {
      step: {
        step: 'plan', tuning: tuning.name, batch: plan.batch, size: plan.size, kind: plan.kind,
        new: plan.new, recheck: plan.recheck, difficult: [],
      },
      subject: `tune(${tuning.name}): plan batch ${plan.batch} (${plan.new.length} ${plan.kind} + ${plan.recheck.length} recheck)`,
      body: plan.why,
      changes: new Map([[batchFile(tuning, plan.batch), { content: `${JSON.stringify(plan, null, 2)}\n` }]]),
    },
    ctx,
  );
}
