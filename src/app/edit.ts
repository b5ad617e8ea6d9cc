import { promises as fs } from 'node:fs';
import path from 'node:path';
import { diffLines } from 'diff';
import { editedFiles, editRun, freshChanges, namesCaseId, parseAims, planEdit, notProseRefusal, tuningToTheTest } from '../core/edit.js';
import { defaultAims } from '../core/fold.js';
import { describeQuote, heldOutQuotes, type AddedText } from '../core/held-out.js';
import { usageError } from '../errors.js';
import type { FileChange } from '../git/types.js';
import { landStep, targetOf, type WriteContext } from './commit.js';
import { nextFor } from './decide.js';
import { requireWriter } from './guards.js';
import { Plan, type DryRunnable } from './plan.js';
import { uncommittedProse } from './prose.js';
import { orRefuse, refuseIf } from './refuse.js';
import { readText, type Tuning } from './tuning.js';
import { RUN_FILES, runFilePath } from '../core/paths.js';

/**
 * `git tune edit`: the prose edits made after a graded run and that run's
 * changes.md, one commit (docs/method.md#edits). In a with-memory half only
 * memory-policy files may change.
 */
export const changesPath = (tuning: Tuning, run: string) => runFilePath(tuning.dir, run, RUN_FILES.changes);

export { namesCaseId, parseAims, tuningToTheTest };

export interface EditOutcome {
  run: string;
  files: string[];
  aims: string[];
  warnings: string[];
  commit: string;
}

export async function recordEdit(tuning: Tuning, paths: readonly string[], ctx: WriteContext): Promise<EditOutcome>;
export async function recordEdit(tuning: Tuning, paths: readonly string[], ctx: DryRunnable<WriteContext>): Promise<EditOutcome | Plan>;
export async function recordEdit(tuning: Tuning, paths: readonly string[], ctx: DryRunnable<WriteContext>): Promise<EditOutcome | Plan> {
  await requireWriter(tuning);
  const config = tuning.config!;
  const run = orRefuse(editRun(tuning.state, () => nextFor(tuning)));
  refuseIf(notProseRefusal(config, paths));
  const dirty = await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  const edited = orRefuse(editedFiles(config, run, paths, dirty, tuning.tip));
  const changesFile = changesPath(tuning, run.name);
  const changes = await fs.readFile(path.join(tuning.repo.dir, changesFile), 'utf8').catch(() => null);
  const fresh = orRefuse(freshChanges(changesFile, changes, await readText(tuning.repo, tuning.tip, changesFile)));
  const dataset = await tuning.loadDataset();

  const files = new Map<string, FileChange>();
  let added = '';
  const addedByFile: AddedText[] = [];
  for (const file of edited) {
    const content = await fs.readFile(path.join(tuning.repo.dir, file)).catch(() => null);
    files.set(file, content === null ? null : { content });
    const before = (await readText(tuning.repo, tuning.tip, file)) ?? '';
    const blocks: AddedText['blocks'] = [];
    let line = 1;
    for (const part of diffLines(before, content?.toString('utf8') ?? '')) {
      if (part.added) {
        added += part.value;
        blocks.push({ line, text: part.value });
      }
      if (!part.removed) line += part.count ?? part.value.split('\n').length - 1;
    }
    addedByFile.push({ file, blocks });
  }
  refuseHeldOutQuotes(heldOutQuotes(addedByFile, await tuning.loadHeldOut()));
  files.set(changesFile, { content: changes! });
  const plan = orRefuse(planEdit({ tuning: tuning.name, run, files: edited, changesFile, fresh, dataset, added }));
  const commit = await landStep(targetOf(tuning), {
    step: plan.step, subject: plan.subject, body: plan.body,
    changes: files,
    fromWorktree: new Set(files.keys()),
  }, ctx);
  if (commit instanceof Plan) return commit;
  return { run: run.name, files: edited, aims: plan.aims ?? defaultAims(run), warnings: plan.warnings, commit };
}

/**
 * Prose that names a held-out case or quotes its input is refused, not
 * warned about (docs/held-out.md): the held-out set is the evidence against
 * overfitting, and an edit that learned it spoils that evidence.
 */
function refuseHeldOutQuotes(quotes: ReturnType<typeof heldOutQuotes>): void {
  if (quotes.length === 0) return;
  // The places in the message too: `git tune auto` shows a step's error message, not its details.
  const shown = quotes.slice(0, 3).map(describeQuote).join('; ') + (quotes.length > 3 ? `; and ${quotes.length - 3} more` : '');
  throw usageError('held-out-quoted',
    `the edit quotes the held-out set (${shown}): held-out cases must stay unseen by the prose, or the final check cannot show overfitting; nothing was written`,
    'take the lines named out of the prose (say the rule in general words), then git tune edit again', quotes.map(describeQuote));
}
