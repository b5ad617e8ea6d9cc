import { datasetRev, type Case } from '../contracts/dataset.js';
import { BASELINE_HINT, type HeldOutInput } from '../core/held-out.js';
import type { Tuning } from './tuning.js';

/**
 * The held-out set as the final check reads it (docs/held-out.md): its
 * cases, and the baseline to compare them with when it ran on this very set.
 */
export async function heldOutInput(tuning: Tuning): Promise<HeldOutInput | undefined> {
  const heldOut = await tuning.loadHeldOut();
  if (heldOut.length === 0) return undefined;
  const baseline = tuning.state.baseline;
  const rev = datasetRev(heldOut);
  const unchecked = baseline === null
    ? `no baseline yet (${BASELINE_HINT.split('   #')[0]} runs the original prose on it)`
    : baseline.heldOut === null || baseline.heldOutRev !== rev
      ? `the baseline (${baseline.oid.slice(0, 7)}) ran another held-out set; run ${BASELINE_HINT.split('   #')[0]} again`
      : null;
  return {
    ids: heldOut.map((c) => c.id),
    baseline: baseline && { selection: baseline.selection, heldOut: baseline.heldOut },
    maxDrop: tuning.config?.heldOut.maxDrop ?? 0,
    unchecked,
  };
}

/** The cases the final check runs: the selection, then the held-out set. */
export async function finalCases(tuning: Tuning): Promise<string[]> {
  return [...(tuning.selection?.ids ?? []), ...(await tuning.loadHeldOut()).map((c) => c.id)];
}

/** Every case a run may name: the dataset's and the held-out set's. */
export async function casesById(tuning: Tuning): Promise<Map<string, Case>> {
  return new Map([...(await tuning.loadDataset()), ...(await tuning.loadHeldOut())].map((c) => [c.id, c]));
}
