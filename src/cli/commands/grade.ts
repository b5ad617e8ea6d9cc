import { nextFor } from '../../app/decide.js';
import { recordGrade, writeDraft } from '../../app/grade.js';
import { openTuning } from '../../app/tuning.js';
import { isFinalRun } from '../../core/names.js';
import { EXIT, TuneError } from '../../errors.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

export interface GradeOptions {
  draft?: boolean;
  verdict?: string;
  run?: string;
  force?: boolean;
  keep?: string[];
  why?: string;
  json?: boolean;
}

export async function run(io: CommandIO, opts: GradeOptions): Promise<void> {
  const tuning = await openTuning(io.cwd);
  if (opts.draft) {
    const { run, draft, file } = await writeDraft(tuning, opts.run, { env: io.env, force: Boolean(opts.force) });
    if (opts.json) {
      printJson(io, { run: run.name, file, verdict: draft.verdict, wrong: [...draft.verdicts].filter(([, v]) => v === 'wrong').map(([id]) => id), difficult: draft.difficult, proposals: draft.proposals });
      return;
    }
    io.out(`wrote ${file}: proposed verdict ${draft.verdict}`);
    io.err(`finish it (verdict heading, result column, ## Difficult lines), then record it: git tune grade`);
    return;
  }
  const outcome = await recordGrade(tuning, opts.run, { verdict: opts.verdict, keep: opts.keep, why: opts.why, ctx: io });
  const after = nextFor(await openTuning(io.cwd));
  if (opts.json) printJson(io, { ...outcome, next: after });
  else {
    for (const r of outcome.reverted) io.out(`reverted ${r.edit.slice(0, 7)} with ${r.commit.slice(0, 7)} (${r.why}): ${r.files.join(', ') || 'no prose file'}`);
    for (const k of outcome.kept) io.out(`kept ${k.edit.slice(0, 7)} (unconfirmed) on purpose: ${k.why} (${k.by})`);
    io.out(`${outcome.run}: ${outcome.verdict}${outcome.wrong.length ? ` (wrong: ${outcome.wrong.join(', ')})` : ''}`);
    for (const d of outcome.difficult) io.out(`  difficult ${d.op} ${d.id}${d.op === 'add' ? ` (${d.reason})` : ''}`);
    io.err(`\nnext: ${renderNext(after)}`);
  }
  if (isFinalRun(outcome.run) && outcome.verdict !== 'VERIFIED') {
    throw new TuneError('not-verified', `the final check is ${outcome.verdict}, not VERIFIED`, { exitCode: EXIT.notVerified });
  }
}
