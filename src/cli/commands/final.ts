import path from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { FinalReport } from '../../app/final.js';
import type { RunContext } from '../../app/run.js';
import type { Tuning } from '../../app/tuning.js';
import { Plan } from '../../app/plan.js';
import type { Shard } from '../../core/shard.js';
import { EXIT, TuneError, usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { go, type RunCommandOptions } from './run.js';
import { promises as fs } from 'node:fs';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('final')
      .description('run the final check: the whole selection with the last good memory, nothing changed')
      .option('--concurrency <n>', 'cases at once (default: config concurrency)')
      .option('--target <name>', 'run against one of the configured target models')
      .option('--all-targets', 'run the final check once per configured target and name the best')
      .option('--ci', 'non-interactive CI mode: check the history is all there, write the job summary and outputs, exit 0 only when VERIFIED')
      .option('--shard <i/n>', 'run a deterministic share of the selection and write its results as a file set')
      .option('--collect <dirs...>', 'merge shard result sets into one final-check result')
      .option('--commit', 'with --collect: record the merged result as the final-check run commit and tag')
      .option('--out <dir>', 'with --shard: where to write the shard result set')
      .addOption(dryRunOpt())
      .addOption(json()),
    run,
  );
}

/**
 * `git tune final`: the final check (docs/method.md#final-check, docs/ci.md).
 * - plain: run it and record it (run-start and run commits, tag), as `git tune run` does;
 * - `--ci`: check the history is all there, run it without recording it
 *   (a result set; a re-check when history already holds one), grade it
 *   from checks and the judge, write the job summary and outputs, exit 0
 *   only when VERIFIED; `--ci --commit` records it and its grade instead;
 * - `--shard i/n`: one share of the selection, as a result set;
 * - `--collect <dirs…>`: merge result sets into one final check (per
 *   target), graded; `--commit` records it as the final-check run and grades it;
 * - `--all-targets`: once per configured target, each a result set, the best named.
 */
export interface FinalOptions extends RunCommandOptions {
  allTargets?: boolean;
  ci?: boolean;
  shard?: string;
  collect?: string[];
  commit?: boolean;
  out?: string;
}

function parseConcurrency(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw usageError('bad-concurrency', `--concurrency must be a whole number of at least 1 (got ${text})`, 'git tune final --concurrency 8');
  return n;
}

function checkOptions(opts: FinalOptions, parseShard: typeof import('../../core/shard.js').parseShard): Shard | null {
  const shard = opts.shard === undefined ? null : parseShard(opts.shard);
  if (opts.shard !== undefined && !shard) {
    throw usageError('bad-shard', `--shard takes i/n with 1 ≤ i ≤ n (got ${opts.shard})`, 'git tune final --shard 2/5');
  }
  const clash = (a: string, b: string) => usageError('bad-options', `${a} and ${b} do not go together`, 'git tune final --help');
  if (opts.collect && opts.shard) throw clash('--collect', '--shard');
  if (opts.collect && opts.allTargets) throw usageError('bad-options', '--collect reports every target its result sets hold; --all-targets is for running them', 'git tune final --collect <dir>…');
  if (opts.target && opts.allTargets) throw clash('--target', '--all-targets');
  if (opts.commit && opts.shard) throw usageError('bad-options', 'a shard is part of a final check: record the collected shards', 'git tune final --collect <every shard dir> --commit');
  if (opts.commit && opts.allTargets) throw usageError('bad-options', 'a tuning records one final check: pick the target to record', 'git tune final --ci --commit --target <name>');
  const plain = !opts.ci && !opts.shard && !opts.collect && !opts.allTargets;
  if (plain && opts.out) throw usageError('bad-options', '--out is where a result set goes (--ci, --shard, --collect, --all-targets); a plain final check is recorded as a commit', 'git tune final --ci --out <dir>');
  return shard;
}

function context(io: CommandIO, interrupted: { value: boolean }): RunContext {
  return { env: io.env, now: io.now, clock: io.clock, err: io.err, isTTY: io.isTTY, interrupted };
}

const absolute = (io: CommandIO, dir: string) => path.resolve(io.cwd, dir);

/** The command that runs the same shard again (it resumes). */
function rerunLine(opts: FinalOptions, shard: Shard, target: string | null): string {
  return ['git tune final', opts.ci ? '--ci' : '', shard.count > 1 || opts.shard ? `--shard ${shard.index}/${shard.count}` : '', target ? `--target ${target}` : '', opts.out ? `--out ${opts.out}` : '']
    .filter(Boolean).join(' ');
}

async function runSets(io: CommandIO, tuning: Tuning, opts: FinalOptions, shard: Shard, ctx: RunContext): Promise<{ reports: FinalReport[]; root: string }> {
  const [{ reportOfSet, runResultSet }, { defaultSetDir, safeSegment }, { shardFolder }] = await Promise.all([
    import('../../app/final.js'), import('../../app/result-set.js'), import('../../core/shard.js'),
  ]);
  const targets = opts.allTargets ? tuning.config?.targets.map((t) => t.name) ?? [] : [opts.target ?? null];
  if (opts.allTargets && targets.length === 0) {
    throw usageError('no-targets', 'no targets are configured', `git tune config set targets '[{name: model-a, env: {MODEL: a}}, {name: model-b, env: {MODEL: b}}]'`);
  }
  const many = targets.length > 1;
  // Several targets: one folder holding a result set per target (and the summary of them all).
  const manyRoot = opts.out ? absolute(io, opts.out) : path.join(path.dirname(defaultSetDir(tuning, shard, null)), `all-targets-${shardFolder(shard)}`);
  const out = (target: string | null) => {
    if (many) return path.join(manyRoot, safeSegment(target!));
    return opts.out ? absolute(io, opts.out) : defaultSetDir(tuning, shard, target);
  };
  const reports: FinalReport[] = [];
  for (const target of targets) {
    if (many) io.err(`target ${target}:`);
    const set = await runResultSet(tuning, { shard, target: target ?? undefined, concurrency: parseConcurrency(opts.concurrency), out: out(target), rerun: rerunLine(opts, shard, target) }, ctx);
    reports.push(await reportOfSet(tuning, set, io.env));
  }
  const root = many ? manyRoot : out(targets[0]!);
  return { reports, root };
}

async function run(io: CommandIO, opts: FinalOptions): Promise<void | Plan> {
  const [
    { openCompleteTuning, outputsOf, writeGithubFiles }, { pickBest, recordResultSet, reportLine, reportOfSet, runAndRecordFinal }, { collectResultSets, defaultSetDir, safeSegment, SET_FILES },
    { interruptOnSignals }, { openTuning }, { parseShard, WHOLE },
  ] = await Promise.all([
    import('../../app/ci.js'), import('../../app/final.js'), import('../../app/result-set.js'), import('../../app/run.js'), import('../../app/tuning.js'), import('../../core/shard.js'),
  ]);
  const { renderPlain, renderSummary } = await import('../final-report.js');
  const shard = checkOptions(opts, parseShard);
  if (!opts.ci && !opts.shard && !opts.collect && !opts.allTargets) return go(io, opts, true);
  // A dry run stops before the first write: --ci --commit plans its run-start commit; the others
  // write result sets (and --collect merges them into one) before any commit.
  if (io.dryRun && (!opts.commit || opts.collect)) {
    return new Plan([], opts.collect
      ? `merge ${opts.collect.length} result set${opts.collect.length === 1 ? '' : 's'} into one and report it${opts.commit ? ', then record it as the final-check run (a tagged commit) and its grade' : ' (no commit)'}`
      : 'run the final check\'s cases with the runner as a result set and report it (no commit)');
  }
  const interrupted = { value: false };
  const release = interruptOnSignals(interrupted, io.err);
  let reports: FinalReport[];
  let root: string | null = null;
  let recorded = false;
  try {
    const ctx = context(io, interrupted);
    const tuning = opts.ci ? await openCompleteTuning(io.cwd, io.env) : await openTuning(io.cwd);
    if (opts.collect) {
      const collectedRoot = opts.out ? absolute(io, opts.out) : defaultSetDir(tuning, 'collected', null);
      const sets = await collectResultSets(tuning, opts.collect.map((d) => absolute(io, d)), (target, many) =>
        many ? path.join(collectedRoot, safeSegment(target ?? 'no-target')) : collectedRoot);
      root = collectedRoot;
      if (opts.commit) {
        const chosen = opts.target ? sets.filter((s) => s.manifest.target === opts.target) : sets;
        if (chosen.length !== 1) {
          throw usageError('bad-options', chosen.length === 0 ? `the result sets hold no target ${opts.target}` : `the result sets hold ${sets.length} targets: pick the one to record`,
            `git tune final --collect ${opts.collect.join(' ')} --commit --target ${sets[0]!.manifest.target ?? '<name>'}`);
        }
        reports = [(await recordResultSet(tuning, chosen[0]!, ctx)).report];
        recorded = true;
      } else {
        reports = [];
        for (const set of sets) reports.push(await reportOfSet(tuning, set, io.env));
      }
    } else if (opts.ci && opts.commit) {
      const report = await runAndRecordFinal(io.cwd, { concurrency: parseConcurrency(opts.concurrency), target: opts.target }, io.dryRun ? { ...ctx, dryRun: true } : ctx);
      if (report instanceof Plan) return report;
      reports = [report];
      recorded = true;
    } else {
      ({ reports, root } = await runSets(io, tuning, opts, shard ?? WHOLE, ctx));
    }
  } finally {
    release();
  }

  const best = pickBest(reports);
  const summary = renderSummary(reports, best);
  if (root) await fs.writeFile(path.join(root, SET_FILES.summary), summary).catch(() => {});
  const written = opts.ci ? await writeGithubFiles(io.env, summary, outputsOf(reports, best, root)) : [];
  if (opts.json) {
    printJson(io, {
      verdict: reports.length === 1 ? reports[0]!.verdict : outputsOf(reports, best, root)[0]![1],
      best: best?.target ?? null,
      resultDir: root,
      reports: reports.map(({ findings: _findings, ...r }) => ({ ...r, summary: reportLine(r) })),
    });
  } else io.out(renderPlain(reports, best));
  if (written.length) io.err(`wrote the ${written.join(' and ')} for GitHub Actions`);
  const first = reports[0]!;
  if (!recorded && root && first.mode === 'final' && first.shard.count === 1 && reports.length === 1) {
    io.err(`record it as the final check: git tune final --collect ${path.relative(io.cwd, root) || '.'} --commit`);
  } else if (!recorded && first.shard.count > 1) {
    io.err(`this is shard ${first.shard.index} of ${first.shard.count} (in ${path.relative(io.cwd, root ?? '') || '.'}); merge all ${first.shard.count}: git tune final --collect <the ${first.shard.count} result set dirs>`);
  }
  const failed = reports.filter((r) => r.verdict !== 'VERIFIED');
  if (failed.length > 0) {
    throw new TuneError('not-verified', reports.length === 1
      ? `the final check${first.shard.count > 1 ? ` (shard ${first.shard.index}/${first.shard.count})` : ''} is ${first.verdict}, not VERIFIED`
      : `the final check is not VERIFIED for ${failed.map((r) => `${r.target} (${r.verdict})`).join(', ')}`, { exitCode: EXIT.notVerified });
  }
}
