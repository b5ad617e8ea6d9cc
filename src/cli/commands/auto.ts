import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isatty } from 'node:tty';
import type { AllResult, AutoOptions, AutoResult, AutoSession } from '../../app/auto.js';
import type { FleetAutoResult } from '../../app/auto-fleet.js';
import { Plan } from '../../app/plan.js';
import { EXIT, usageError } from '../../errors.js';
import { killAll } from '../../run/process.js';
import { act, dryRunOpt, json, tuningOpt } from '../command.js';
import { createFleetView, createLiveView, type LiveView } from '../live.js';
import { printJson, table, writeStderr, type CommandIO } from '../io.js';
import { nextAfter } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('auto')
      .description('drive the loop unattended with the configured runner, judge and editor, following `git tune next`')
      .option('--until <step>', 'stop before a step: `final` stops before the final check')
      .option('--plain', 'plain append-only lines (the default when not on a terminal)')
      .option('--all', 'every tune/* branch that has a config, in turn (switching with git switch), then a table of outcomes')
      .option('--only <glob>', 'with --all: only the tunings whose name matches the glob (e.g. \'support*\')')
      .option('--fleet <name>', 'every target of fleet <name> at once (`git tune fleet`), under one shared budget')
      .option('--max-cost-usd <usd>', 'a ceiling on what this auto spends, shared by every tuning it drives (each keeps its own budget too)')
      .option('--max-tokens <n>', 'a ceiling on the tokens this auto spends, shared like --max-cost-usd')
      .option('--max-minutes <n>', 'a wall-clock limit: once N minutes have passed, stop at the next step boundary (exit 3; auto again resumes)')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `
Ctrl-C or \`git tune stop\` stops at the next safe point; \`git tune auto\` again carries on from history.
One auto drives a tuning at a time: while it runs, a second auto or a command that writes the tuning's
steps (run, grade, edit, config set, …) is refused (exit 4, naming its pid); reads (next, status, log) work.
--max-minutes never stops a step midway: a run once started finishes its cases.

Examples:
  git tune auto --max-minutes 30
  git tune auto --all --only 'support*' --max-cost-usd 10
  git tune auto --fleet support          # then: git tune fleet support --report`),
    run,
  );
  act(
    program
      .command('stop')
      .description('ask a running `git tune auto` to stop at the next safe point')
      .option('--fleet <name>', 'every target of fleet <name> (`git tune auto --fleet`)')
      .option('--now', 'kill the running runners, judge and editor at once: what they were doing is not recorded, and `git tune auto` does it again')
      .addOption(json())
      .addOption(tuningOpt()),
    stop,
  );
}

export interface AutoCommandOptions {
  until?: string;
  json?: boolean;
  plain?: boolean;
  all?: boolean;
  only?: string;
  fleet?: string;
  maxCostUsd?: string;
  maxTokens?: string;
  maxMinutes?: string;
}

/** The live view on stderr: redrawn in place on a terminal, plain lines otherwise (stdout is data, stderr is narration). */
export function autoView(io: CommandIO, title: string, plain: boolean): LiveView {
  return createLiveView({ title, ...onStderr(io, plain) });
}

/** Where a live view writes: stderr, in order with the command's other narration (io.err); redrawn only on a terminal. */
function onStderr(io: CommandIO, plain: boolean) {
  const tty = !plain && isatty(2) && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
  return { write: writeStderr, tty, columns: () => process.stderr.columns || 100, clock: io.clock };
}

export interface CliOutcome {
  code: number;
  /** The `error:` line the command printed, if it failed. */
  error: string | null;
}

/**
 * A command run in this process before auto starts (the demo's `git tune
 * init`), its output sent to the view, indented; its `next:` line dropped.
 */
export function quietCli(io: CommandIO, cwd: string, view: LiveView): (args: string[]) => Promise<CliOutcome> {
  return async (args) => {
    let error: string | null = null;
    const nested = (): CommandIO => ({
      cwd, env: io.env, now: io.clock(), clock: io.clock, isTTY: false,
      out: (text) => view.log(text, '  '),
      err: (text) => {
        if (/^\n*next: /.test(text) || text.startsWith('finish it (verdict heading')) return;
        const line = /^error: (.*)$/m.exec(text);
        if (line && error === null) error = line[1]!;
        view.log(text, '  ');
      },
    });
    const { runCli } = await import('../program.js');
    const code = await runCli(args, nested);
    return { code, error };
  };
}

/** Ctrl-C once: finish the step (running cases finish and are kept), then stop; twice: kill the cases; thrice: exit. */
export function interruptAuto(session: AutoSession, say: (line: string) => void): () => void {
  let count = 0;
  const handler = () => {
    count++;
    session.interrupted.value = true;
    if (count === 1) say('stopping after this step: running cases finish and are kept; `git tune auto` carries on (Ctrl-C again to kill them)');
    else if (count === 2) killAll('SIGKILL');
    else process.exit(EXIT.interrupted);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export function autoOptions(io: CommandIO, view: LiveView, session: AutoSession, until?: 'final'): AutoOptions {
  return {
    until,
    env: io.env,
    session,
    say: (line) => view.log(line),
    onStep: (step, tuning, n) => view.step(`${tuning.name} · step ${n} · ${step.kind}: ${step.message}`, tuning.state.usage),
    detail: (text) => view.log(text, '  '),
    onCase: (event) => view.caseEvent(event),
    clock: io.clock,
  };
}

function parseCeiling(text: string | undefined, flag: string, integer: boolean): number | null {
  if (text === undefined) return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw usageError('bad-ceiling', `${flag} takes a ${integer ? 'whole ' : ''}number above 0 (got ${text})`, `git tune auto ${flag} ${integer ? '500000' : '5'}`);
  }
  return n;
}

const usd = (n: number) => `$${n.toFixed(4)}`;

function renderAll(result: AllResult): string {
  const rows = result.tunings.map((r) => [r.tuning, r.outcome.replace('-', ' '), r.steps.length, r.spent.tokens.toLocaleString('en-US'), usd(r.spent.costUsd), r.final ? `${r.message}; ${r.final}` : r.message]);
  rows.push(['total (this auto)', '', '', result.spent.tokens.toLocaleString('en-US'), usd(result.spent.costUsd), '']);
  const lines = [table(['tuning', 'outcome', 'steps', 'tokens', 'cost', 'why'], rows)];
  for (const s of result.skipped) lines.push(`skipped tune/${s.tuning}: ${s.why}`);
  return lines.join('\n');
}

/** The closing line: the tokens and cost are what this auto spent, not the tuning's total (`git tune status` has that). */
export const renderOne = (r: AutoResult) =>
  `${r.tuning}: ${r.outcome}: ${r.message} (${r.steps.length} step${r.steps.length === 1 ? '' : 's'}, ${r.spent.tokens.toLocaleString('en-US')} tokens and ${usd(r.spent.costUsd)} spent by this auto)${r.final ? `; ${r.final}` : ''}`;

/** `--max-minutes N`: a number of minutes above 0 (fractions allowed). */
export function parseMinutes(text: string | undefined): number | null {
  if (text === undefined) return null;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw usageError('bad-minutes', `--max-minutes takes a number of minutes above 0 (got ${text})`, 'git tune auto --max-minutes 30');
  }
  return n;
}

async function run(io: CommandIO, opts: AutoCommandOptions): Promise<void | Plan> {
  if (opts.until !== undefined && opts.until !== 'final') {
    throw usageError('bad-until', `--until takes \`final\` (got ${opts.until})`, 'git tune auto --until final');
  }
  if (opts.only !== undefined && !opts.all) throw usageError('bad-options', '--only filters the tunings --all drives', `git tune auto --all --only '${opts.only}'`);
  if (opts.fleet !== undefined && opts.all) throw usageError('bad-options', '--fleet drives one fleet; --all every tuning in turn: give one of them', `git tune auto --fleet ${opts.fleet}`);
  const minutes = parseMinutes(opts.maxMinutes);
  if (io.dryRun) {
    // Every step auto takes starts a runner, judge or editor, or follows one: a dry run says the first and stops.
    if (opts.all || opts.fleet) throw usageError('bad-options', '--dry-run says the next step of one tuning: run it on that tuning\'s branch', 'git tune auto --dry-run');
    const step = await nextAfter(io, undefined);
    return new Plan([], `follow \`git tune next\`: ${step.message}${step.command ? ` (${step.command})` : ''}; then the steps after it, until ${opts.until === 'final' ? 'the final check' : 'the tuning is done or needs a person'}`);
  }
  const { autoAll, autoTuning, newSession } = await import('../../app/auto.js');
  const session = newSession({
    maxCostUsd: parseCeiling(opts.maxCostUsd, '--max-cost-usd', false),
    maxTokens: parseCeiling(opts.maxTokens, '--max-tokens', true),
  });
  if (minutes !== null) session.deadline = { at: io.clock().getTime() + minutes * 60_000, minutes };
  if (opts.fleet !== undefined) return runFleet(io, opts, opts.fleet, session);
  const view = autoView(io, opts.all ? 'git tune auto --all' : 'git tune auto', Boolean(opts.plain));
  const release = interruptAuto(session, (line) => view.log(line));
  const options = autoOptions(io, view, session, opts.until === 'final' ? 'final' : undefined);
  let result: AllResult | AutoResult;
  try {
    result = opts.all ? await autoAll(io.cwd, { ...options, only: opts.only }) : await autoTuning(io.cwd, options);
  } finally {
    release();
    view.close();
  }
  if (opts.json) printJson(io, result);
  else io.out('tunings' in result ? renderAll(result) : renderOne(result));
  process.exitCode = result.exitCode;
}

/** `git tune auto --fleet <name>`: every target at once, one live line each, then a table and the fleet's report. */
async function runFleet(io: CommandIO, opts: AutoCommandOptions, fleet: string, session: AutoSession): Promise<void> {
  const [{ autoFleet }, { openRepo }, { requireFleet }, { renderFleetReport }] = await Promise.all([
    import('../../app/auto-fleet.js'), import('../../git/open.js'), import('../../app/fleet.js'), import('../../core/fleet.js'),
  ]);
  const members = await requireFleet(await openRepo(io.cwd), fleet);
  const view = createFleetView({ title: `git tune auto --fleet ${fleet}`, ...onStderr(io, opts.plain ?? false) }, members.map((m) => m.target));
  const release = interruptAuto(session, (line) => view.log(line));
  let result: FleetAutoResult;
  try {
    result = await autoFleet(io.cwd, fleet, {
      session, env: io.env, say: (line) => view.log(line),
      optionsFor: (m) => autoOptions(io, view.target(m.target), session, opts.until === 'final' ? 'final' : undefined),
    });
  } finally {
    release();
    view.close();
  }
  if (opts.json) printJson(io, result);
  else {
    io.out(renderAll({ tunings: result.tunings, skipped: result.skipped, spent: result.spent, ceiling: result.ceiling, exitCode: result.exitCode }));
    for (const dir of result.kept) io.out(`kept ${path.relative(io.cwd, dir)}: it holds changes not yet recorded (auto --fleet again records them)`);
    io.out(`\n${renderFleetReport(result.report).trimEnd()}`);
  }
  process.exitCode = result.exitCode;
}

/** `git tune stop`: ask a running auto to stop at the next safe point. */
async function stop(io: CommandIO, opts: { json?: boolean; tuning?: string; fleet?: string; now?: boolean }): Promise<void> {
  const [{ stopFile, stopNowLine }, { openTuning }] = await Promise.all([import('../../app/auto.js'), import('../../app/tuning.js')]);
  const request = opts.now ? stopNowLine(io.now) : `${io.now.toISOString()}\n`;
  const what = opts.now ? 'running cases are killed and not kept (they run again), then it exits' : 'running cases finish and are kept, then it exits';
  if (opts.fleet !== undefined) {
    const [{ openRepo }, { requireFleet }] = await Promise.all([import('../../git/open.js'), import('../../app/fleet.js')]);
    const repo = await openRepo(io.cwd);
    const members = await requireFleet(repo, opts.fleet);
    for (const m of members) {
      const file = stopFile(repo.gitdir, m.tuning);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, request);
    }
    if (opts.json) printJson(io, { fleet: opts.fleet, tunings: members.map((m) => m.tuning), requested: true, now: Boolean(opts.now) });
    else io.out(`asked auto on fleet ${opts.fleet} (${members.map((m) => m.target).join(', ')}) to stop: ${what}`);
    return;
  }
  const tuning = await openTuning(io.cwd, opts.tuning);
  const file = stopFile(tuning.repo.gitdir, tuning.name);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, request);
  if (opts.json) printJson(io, { tuning: tuning.name, requested: true, now: Boolean(opts.now) });
  else io.out(`asked auto on ${tuning.name} to stop: ${what}`);
}
