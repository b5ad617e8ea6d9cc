import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { DifficultListing, DifficultOutcome, DifficultRow } from '../../app/difficult.js';
import { Plan } from '../../app/plan.js';
import { retriesText } from '../../core/difficult.js';
import type { DifficultReason } from '../../contracts/files.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json, tuningOpt } from '../command.js';
import { printJson, table, type CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  const difficult = program
    .command('difficult')
    .description('the difficult list: open, fixed and stuck cases with retries and notes')
    .addOption(json())
    .addOption(tuningOpt());
  act(difficult, list);
  act(
    difficult
      .command('add <id>')
      .description('put a case on the difficult list, with a reason (a commit)')
      .requiredOption('--why <reason>', 'wrong, regressed, flaky, memory or costly')
      .option('--note <text>', 'a note kept with the entry')
      .addOption(dryRunOpt())
      .addOption(json()),
    add,
  );
  act(
    difficult
      .command('fix <id>')
      .description('mark a difficult case fixed (a commit)')
      .option('--note <text>', 'a note kept with the entry')
      .addOption(dryRunOpt())
      .addOption(json()),
    fix,
  );
}

interface ListOptions {
  json?: boolean;
  tuning?: string;
}

interface ChangeOptions {
  why?: string;
  note?: string;
  json?: boolean;
  tuning?: string;
}

const STATUS_ORDER = { open: 0, stuck: 1, fixed: 2 } as const;

export function renderListing(listing: DifficultListing): string {
  if (listing.entries.length === 0) return 'the difficult list is empty';
  const rows = [...listing.entries].sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status]);
  const lines = [
    table(
      ['id', 'status', 'reason', 'added in', 'retries'],
      rows.map((e) => [e.id, e.status, e.reason, e.batch === 0 ? 'before batch 1' : `batch ${e.batch}`, retriesText(e, listing.maxRetries)]),
    ),
  ];
  const noted = rows.filter((e) => e.notes.length > 0);
  if (noted.length > 0) {
    lines.push('', 'notes:');
    for (const e of noted) for (const n of e.notes) lines.push(`  ${e.id}: ${n}`);
  }
  const counts = (['open', 'stuck', 'fixed'] as const).map((s) => `${rows.filter((e) => e.status === s).length} ${s}`);
  lines.push('', counts.join(', '));
  return lines.join('\n');
}

async function list(io: CommandIO, opts: ListOptions): Promise<void> {
  const [{ listDifficult }, { openTuning }] = await Promise.all([import('../../app/difficult.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const listing = await listDifficult(tuning);
  for (const w of listing.warnings) io.err(`warning: ${w}`);
  if (opts.json) printJson(io, listing);
  else io.out(renderListing(listing));
}

function describe(entry: DifficultRow): string {
  const where = entry.batch === 0 ? 'before batch 1' : `in batch ${entry.batch}`;
  return `${entry.id}: ${entry.status}, ${entry.reason}, added ${where}, ${entry.retries} retries${entry.notes.length ? `, ${entry.notes.length} note(s)` : ''}`;
}

async function printOutcome(io: CommandIO, opts: ChangeOptions, outcome: DifficultOutcome, done: string): Promise<void> {
  await printDone(io, opts, outcome, [`${done}\n${describe(outcome.entry)}`]);
}

async function add(io: CommandIO, id: string, opts: ChangeOptions): Promise<void | Plan> {
  const [{ recordDifficult }, { openTuning }, { DIFFICULT_REASONS }] = await Promise.all([
    import('../../app/difficult.js'), import('../../app/tuning.js'), import('../../contracts/files.js'),
  ]);
  const why = (opts.why ?? '').trim().toLowerCase();
  if (!(DIFFICULT_REASONS as readonly string[]).includes(why)) {
    throw usageError('bad-reason', `--why must be one of ${DIFFICULT_REASONS.join(', ')} (found "${opts.why ?? ''}")`, `git tune difficult add ${id} --why wrong`, [
      'wrong: still wrong after a run that tried to fix it',
      'regressed: a recheck case that failed',
      'flaky: right before, wrong now, no edit aimed at it',
      'memory: memory made it worse',
      'costly: more than 2× the run\'s median llm calls',
    ]);
  }
  const tuning = await openTuning(io.cwd, opts.tuning);
  const outcome = await recordDifficult(tuning, { op: 'add', id, reason: why as DifficultReason }, opts.note, io);
  if (outcome instanceof Plan) return outcome;
  const done = outcome.change === null ? `noted on ${id}` : `added ${id} to the difficult list (${why})`;
  await printOutcome(io, opts, outcome, done);
}

async function fix(io: CommandIO, id: string, opts: ChangeOptions): Promise<void | Plan> {
  const [{ recordDifficult }, { openTuning }] = await Promise.all([import('../../app/difficult.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const outcome = await recordDifficult(tuning, { op: 'fix', id }, opts.note, io);
  if (outcome instanceof Plan) return outcome;
  await printOutcome(io, opts, outcome, `marked ${id} fixed`);
}
