import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { DemoSummary } from '../../app/demo.js';
import { EXIT, TuneError } from '../../errors.js';
import { act, json } from '../command.js';
import { printJson, table, type CommandIO } from '../io.js';
import { autoOptions, autoView, interruptAuto, quietCli } from './auto.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('demo [dir]')
      .description('the main job on the bundled example: a fresh repo, the example agent, tuned to VERIFIED, with a summary (no network, no account)')
      .addOption(json()),
    run,
  );
}

const n = (x: number) => x.toLocaleString('en-US');

function runsCell(verdicts: string[]): string {
  return verdicts.length === 0 ? '–' : `${verdicts.length} (${verdicts.join(', ')})`;
}

export function renderDemo(s: DemoSummary): string {
  const head = s.final?.verdict
    ? `git tune demo: tune/${s.tuning} is ${s.final.verdict} after ${s.seconds} s, in ${s.dir}`
    : `git tune demo: tune/${s.tuning} stopped (${s.outcome}: ${s.message}) after ${s.seconds} s, in ${s.dir}`;
  const rows = s.batches.map((b) => [
    b.batch, `${b.cases}${b.kind === 'difficult' ? ' (difficult)' : ''}`, runsCell(b.nomem), runsCell(b.mem),
    b.tokensWithout !== null && b.tokensWith !== null
      ? `${n(b.tokensWithout)} → ${n(b.tokensWith)}${b.tokensWithout > 0 ? ` (−${Math.round((1 - b.tokensWith / b.tokensWithout) * 100)}%)` : ''}`
      : '–',
  ]);
  const difficult = s.difficult.length === 0
    ? 'none'
    : s.difficult.map((d) => `${d.id} (${d.reason}, ${d.status}${d.status === 'fixed' ? '' : `, ${d.retries} ${d.retries === 1 ? 'retry' : 'retries'}`})`).join(', ');
  const lines = [
    head,
    '',
    'The example agent (a deterministic stand-in for an LLM agent) was tuned by `git tune auto` with its runner, judge and editor:',
    '',
    table(['batch', 'cases', 'no-memory runs', 'with-memory runs', 'tokens without → with memory'], rows),
    '',
    `batches    ${s.batches.length}`,
    `runs       ${s.runs.nomem} without memory, ${s.runs.mem} with memory, ${s.runs.final} final check`,
    `edits      ${s.edits.made} made: ${s.edits.confirmed} confirmed, ${s.edits.unconfirmed} unconfirmed, ${s.edits.reverted} reverted${s.edits.pending ? `, ${s.edits.pending} pending` : ''}`,
    `difficult  ${difficult}`,
    `tokens     ${n(s.tokens.withoutMemory)} without memory → ${n(s.tokens.withMemory)} with memory on the same cases${s.tokens.saving !== null ? ` (−${s.tokens.saving}%)` : ''}; ${n(s.tokens.total)} tokens, $${s.tokens.costUsd.toFixed(4)} in all`,
    s.final
      ? `final      ${s.final.verdict ?? 'not graded'}: ${s.final.right} of ${s.final.cases} right${s.final.stuck.length ? `; stuck (reported, not counted): ${s.final.stuck.join(', ')}` : ''}`
      : `final      not run (${s.outcome}: ${s.message})`,
    '',
    'Where to look:',
    ...s.look.map((l) => `  ${l}`),
  ];
  return lines.join('\n');
}

async function run(io: CommandIO, dirArg: string | undefined, opts: { json?: boolean; plain?: boolean }): Promise<void> {
  const [{ autoTuning, newSession }, { createDemoRepo, demoInitArgs, DEMO_IDENTITY, demoDir, summarizeDemo }] = await Promise.all([
    import('../../app/auto.js'), import('../../app/demo.js'),
  ]);
  const started = io.clock().getTime();
  const dir = await demoDir(io.cwd, dirArg);
  const view = autoView(io, 'git tune demo', Boolean(opts.plain));
  const session = newSession();
  const release = interruptAuto(session, (line) => view.log(line));
  const options = autoOptions(io, view, session);
  let summary: DemoSummary;
  try {
    view.log(`git tune demo: a new repository in ${dir} with the example agent`);
    const { identitySet } = await createDemoRepo(dir, io.env);
    if (identitySet) view.log(`no git identity is configured: set user.name "${DEMO_IDENTITY.name}" in ${dir}/.git/config`);
    const init = await quietCli(io, dir, view)(demoInitArgs(dir));
    if (init.code !== EXIT.ok) throw new TuneError('demo-init-failed', `git tune init failed in ${dir}: ${init.error ?? `exit ${init.code}`}`, { exitCode: EXIT.unexpected });
    const result = await autoTuning(dir, options);
    const { tuneInvocation } = await import('../invocation.js');
    summary = await summarizeDemo(dir, result, Math.round((io.clock().getTime() - started) / 1000), tuneInvocation(io.env));
    process.exitCode = result.exitCode;
  } finally {
    release();
    view.close();
  }
  if (opts.json) printJson(io, summary);
  else io.out(renderDemo(summary));
}
