import { datasetRev, type Case } from '../contracts/dataset.js';
import { heldOutClashes } from '../core/held-out.js';
import { datasetPath, heldOutPath } from '../core/paths.js';
import { usageError } from '../errors.js';
import { landStep, targetOf, type WriteContext } from './commit.js';
import { formatDatasetJsonl, readDatasetInput } from './dataset-file.js';
import { requireWriter } from './guards.js';
import { Plan, type DryRunnable } from './plan.js';
import type { Tuning } from './tuning.js';

/** What `dataset import` (or `init --dataset/--held-out`) read: either may be absent, not both. */
export interface DatasetImport {
  cases: Case[] | null;
  heldOut: Case[] | null;
}

export interface DatasetImportResult {
  oid: string;
  rev: string;
  changed: boolean;
  /** The held-out set after the import (its size and rev), or null when the tuning has none. */
  heldOut: { cases: number; rev: string; changed: boolean } | null;
}

/**
 * `git tune dataset import [<file>] [--held-out <file>]`: read and check
 * everything, then one commit. A held-out set that shares an id or an input
 * with the dataset (the one given, or the tuning's) is refused whole, each
 * clash named (docs/held-out.md).
 */
export const importDataset = {
  async prepare(input: string | undefined, cwd: string, heldOut?: string): Promise<DatasetImport> {
    const cases = input === undefined ? null : await readDatasetInput(input, cwd);
    const held = heldOut === undefined ? null : await readDatasetInput(heldOut, cwd, 'the held-out set');
    return { cases, heldOut: held };
  },

  /** Refuses a held-out set that shares a case with the dataset, both as given (init checks before its first write). */
  check(prepared: DatasetImport): void {
    if (prepared.cases && prepared.heldOut) refuseClashes(heldOutClashes(prepared.cases, prepared.heldOut));
  },

  async apply(tuning: Tuning, prepared: DatasetImport, ctx: DryRunnable<WriteContext>): Promise<DatasetImportResult | Plan> {
    await requireWriter(tuning);
    const cases = prepared.cases ?? (tuning.state.dataset ? await tuning.loadDataset() : null);
    if (cases === null) {
      throw usageError('no-dataset', 'a held-out set is kept beside a dataset, and this tuning has none yet',
        'git tune dataset import cases.jsonl --held-out held-out.jsonl   # both at once');
    }
    const heldOut = prepared.heldOut ?? (await tuning.loadHeldOut());
    refuseClashes(heldOutClashes(cases, heldOut));
    const rev = datasetRev(cases);
    const heldRev = heldOut.length > 0 ? datasetRev(heldOut) : null;
    const oldHeld = await tuning.loadHeldOut();
    const heldChanged = prepared.heldOut !== null && (oldHeld.length === 0 ? heldOut.length > 0 : datasetRev(oldHeld) !== heldRev);
    const dataChanged = tuning.state.dataset?.rev !== rev;
    const heldInfo = heldRev === null ? null : { cases: heldOut.length, rev: heldRev };
    if (!dataChanged && !heldChanged) return { oid: tuning.tip, rev, changed: false, heldOut: heldInfo && { ...heldInfo, changed: false } };
    const classes = new Set(cases.map((c) => c.class)).size;
    const changes = new Map<string, { content: string }>();
    if (dataChanged) changes.set(datasetPath(tuning.dir), { content: formatDatasetJsonl(cases) });
    if (heldChanged) changes.set(heldOutPath(tuning.dir), { content: formatDatasetJsonl(heldOut) });
    const held = heldInfo ? `; held-out set of ${heldInfo.cases} case${heldInfo.cases === 1 ? '' : 's'}` : '';
    const oid = await landStep(
      targetOf(tuning),
      {
        step: { step: 'dataset', tuning: tuning.name, cases: cases.length, rev, ...(heldInfo ? { heldOut: heldInfo } : {}), difficult: [] },
        subject: `tune(${tuning.name}): dataset of ${cases.length} cases in ${classes} class${classes === 1 ? '' : 'es'}${held}`,
        changes,
      },
      ctx,
    );
    if (oid instanceof Plan) return oid;
    return { oid, rev, changed: dataChanged, heldOut: heldInfo && { ...heldInfo, changed: heldChanged } };
  },
};

function refuseClashes(clashes: readonly string[]): void {
  if (clashes.length === 0) return;
  throw usageError('held-out-clash',
    `the held-out set shares ${clashes.length === 1 ? 'a case' : `${clashes.length} cases`} with the dataset: a held-out case must be new to the tuning, or it shows nothing about overfitting; nothing was written`,
    'remove each case named from the held-out set (or from the dataset), then import again', [...clashes]);
}
