import type { Selection } from '../contracts/files.js';
import { datasetRev } from '../contracts/dataset.js';
import { selectCases } from '../core/select.js';
import { usageError } from '../errors.js';
import { commitStep, targetOf, type WriteContext } from './commit.js';
import { requireOnBranch } from './guards.js';
import { requireIntactHistory } from './rewritten.js';
import { type Tuning } from './tuning.js';
import { selectionPath } from '../core/paths.js';

/** `git tune select`: the selection order of docs/method.md#selection, one commit. */
export async function computeSelection(tuning: Tuning): Promise<Selection> {
  const cases = await tuning.loadDataset();
  if (cases.length === 0) {
    throw usageError('no-dataset', `tuning ${tuning.name} has no dataset yet`, 'git tune dataset import <file>');
  }
  const config = tuning.config!;
  const ids = selectCases(cases, config.seed, config.limit);
  const complexIds = new Set(cases.filter((c) => c.complexity === 'complex').map((c) => c.id));
  return {
    seed: config.seed,
    limit: ids.length,
    total: cases.length,
    datasetRev: datasetRev(cases),
    ids,
    complex: ids.filter((id) => complexIds.has(id)),
  };
}

export async function writeSelection(tuning: Tuning, selection: Selection, ctx: WriteContext): Promise<string> {
  requireOnBranch(tuning);
  await requireIntactHistory(tuning);
  const cut = selection.limit < selection.total ? ` (limit ${selection.limit} of ${selection.total})` : '';
  return commitStep(
    targetOf(tuning),
    {
      step: { step: 'select', tuning: tuning.name, selected: selection.limit, total: selection.total, difficult: [] },
      subject: `tune(${tuning.name}): select ${selection.limit} cases${cut}`,
      changes: new Map([[selectionPath(tuning.dir), { content: `${JSON.stringify(selection, null, 2)}\n` }]]),
    },
    ctx,
  );
}
