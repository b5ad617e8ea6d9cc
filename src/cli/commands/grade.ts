import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { EXIT, TuneError, usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('grade')
      .description('grade the latest run: --draft writes its findings; without it, validates and records findings.md')
      .option('--draft', 'write the findings draft (per-case table, comparison, reviews, proposals) for you to finish')
      .option('--verdict <verdict>', 'set the verdict heading (PASSED, PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT, VOID) and record it')
      .option('--run <run>', 'the run to grade (default: the latest run)')
      .option('--force', 'with --draft: overwrite findings.md even if you edited it')
      .option('--keep <commit>', 'keep an edit this grade would revert (unconfirmed) on purpose; repeat for several', (v: string, acc: string[] = []) => [...acc, v])
      .option('--why <reason>', 'with --keep: why it is kept (recorded with who kept it)')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nThe first level-2 heading of findings.md is the verdict. PASSED is refused when it\nbreaks a rule of the method; the error names the rule and the command that fixes it.\nRecording a grade reverts, each with its own revert commit before the grade commit,\nthe edits its run did not confirm (and those made between batches), unless kept.`),
    run,
  );
}

export interface GradeOptions {
  draft?: boolean;
  verdict?: string;
  run?: string;
  force?: boolean;
  keep?: string[];
  why?: string;
  json?: boolean;
}

async function run(io: CommandIO, opts: GradeOptions): Promise<void | Plan> {
  const [{ recordGrade, writeDraft }, { openTuning }, { isFinalRun }] = await Promise.all([
    import('../../app/grade.js'), import('../../app/tuning.js'), import('../../core/names.js'),
  ]);
  const tuning = await openTuning(io.cwd);
  if (opts.draft) {
    if (io.dryRun) throw usageError('bad-options', '--draft writes findings.md in the working tree, not a step: --dry-run goes with recording a grade', 'git tune grade --dry-run');
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
  if (outcome instanceof Plan) return outcome;
  await printDone(io, opts, outcome, [
    ...outcome.reverted.map((r) => `reverted ${r.edit.slice(0, 7)} with ${r.commit.slice(0, 7)} (${r.why}): ${r.files.join(', ') || 'no prose file'}`),
    ...outcome.kept.map((k) => `kept ${k.edit.slice(0, 7)} (unconfirmed) on purpose: ${k.why} (${k.by})`),
    outcome.final ? `${outcome.run}: ${outcome.final}` : `${outcome.run}: ${outcome.verdict}${outcome.wrong.length ? ` (wrong: ${outcome.wrong.join(', ')})` : ''}`,
    ...(outcome.passesOn ? [outcome.passesOn.run
      ? `  the half passes on ${outcome.passesOn.run}, the run of the prose the branch holds (wrong there: ${outcome.passesOn.wrong.join(', ') || 'none'}); the candidate memory comes from it`
      : '  no run of the half has seen the prose the branch holds (its edits were reverted): it runs before the half passes (git tune next: rerun)'] : []),
    ...outcome.difficult.map((d) => `  difficult ${d.op} ${d.id}${d.op === 'add' ? ` (${d.reason})` : ''}`),
    ...(outcome.heldOut ?? []).map((line) => `  ${line}`),
  ]);
  if (isFinalRun(outcome.run) && outcome.verdict !== 'VERIFIED') {
    throw new TuneError('not-verified', `the final check is ${outcome.verdict}, not VERIFIED`, { exitCode: EXIT.notVerified });
  }
}
