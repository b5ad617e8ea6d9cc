import { datasetRev, type Case } from '../contracts/dataset.js';
import { commitStep, targetOf, type WriteContext } from './commit.js';
import { datasetPath } from '../core/paths.js';
import { formatDatasetJsonl, readDatasetInput } from './dataset-file.js';
import { requireOnBranch } from './guards.js';
import type { Tuning } from './tuning.js';

/** `git tune dataset import`: read and check everything, then one commit. */
export const importDataset = {
  prepare(input: string, cwd: string): Promise<Case[]> {
    return readDatasetInput(input, cwd);
  },

  async apply(tuning: Tuning, cases: Case[], ctx: WriteContext): Promise<{ oid: string; rev: string; changed: boolean }> {
    requireOnBranch(tuning);
    const rev = datasetRev(cases);
    if (tuning.state.dataset?.rev === rev) return { oid: tuning.tip, rev, changed: false };
    const classes = new Set(cases.map((c) => c.class)).size;
    const oid = await commitStep(
      targetOf(tuning),
      {
        step: { step: 'dataset', tuning: tuning.name, cases: cases.length, rev, difficult: [] },
        subject: `tune(${tuning.name}): dataset of ${cases.length} cases in ${classes} class${classes === 1 ? '' : 'es'}`,
        changes: new Map([[datasetPath(tuning.dir), { content: formatDatasetJsonl(cases) }]]),
      },
      ctx,
    );
    return { oid, rev, changed: true };
  },
};
