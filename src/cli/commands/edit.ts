import { nextFor } from '../../app/decide.js';
import { recordEdit } from '../../app/edit.js';
import { openTuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

export async function run(io: CommandIO, paths: string[] | undefined, opts: { json?: boolean }): Promise<void> {
  const tuning = await openTuning(io.cwd);
  const outcome = await recordEdit(tuning, paths ?? [], io);
  for (const w of outcome.warnings) io.err(`warning: this edit ${w}: it tunes to the test`);
  const after = nextFor(await openTuning(io.cwd));
  if (opts.json) printJson(io, { ...outcome, next: after });
  else {
    io.out(`edit of ${outcome.run} recorded (${outcome.commit.slice(0, 7)}): ${outcome.files.join(', ')}; aims ${outcome.aims.join(', ') || 'none'}`);
    io.err(`\nnext: ${renderNext(after)}`);
  }
}
