import { nextFor } from '../../app/decide.js';
import { revertEdits } from '../../app/revert.js';
import { openTuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

export async function run(io: CommandIO, commit: string | undefined, opts: { json?: boolean }): Promise<void> {
  const tuning = await openTuning(io.cwd);
  const outcome = await revertEdits(tuning, commit, io);
  const after = nextFor(await openTuning(io.cwd));
  if (opts.json) {
    printJson(io, {
      reverted: outcome.reverted.map((r, i) => ({ edit: r.edit.oid, status: r.edit.status, files: r.files, commit: outcome.commits[i] })),
      kept: outcome.kept.map((k) => ({ edit: k.edit.oid, why: k.why })),
      next: after,
    });
    return;
  }
  if (outcome.reverted.length === 0) io.out('nothing to revert: no unconfirmed or pending edit in this half');
  for (const r of outcome.reverted) io.out(`reverted ${r.edit.oid.slice(0, 7)} (${r.edit.status === 'pending' ? 'pending' : `unconfirmed by ${r.edit.settledBy}`}): ${r.files.join(', ') || 'no prose file'}`);
  for (const k of outcome.kept) io.out(`kept ${k.edit.oid.slice(0, 7)}: ${k.why}`);
  io.err(`\nnext: ${renderNext(after)}`);
}
