import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_PICK, PICK_DOCS, PICK_RULES, type PickRule } from '../../core/fleet.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('fleet <name>')
      .description('a fleet of target models: one tuning per target (tune/<name>@<target>) from tune/<name>\'s tip; --report compares them')
      .option('--targets <list>', 'the target models, comma-separated, each defined in tune/<name>\'s config `targets`')
      .option('--report', 'compare the fleet\'s targets (markdown; --json for machines) and name the best')
      .option('--out <file>', 'with --report: also write the markdown to <file> (in GitHub Actions it goes into the job summary too)')
      .option('--pick <rule>', `how --report names the best: ${PICK_RULES.join(', ')} (default ${DEFAULT_PICK})`)
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `
Each target's tuning starts from the same commit with tune/<name>'s config (pinned
to the target: every run passes TUNE_TARGET and the target's env), dataset and
selection. Drive them all at once under one shared budget with
\`git tune auto --fleet <name>\`. Nothing is merged on its own: --report says
which branch to merge.

Rules for --pick:
${PICK_RULES.map((r) => `  ${r.padEnd(17)}${PICK_DOCS[r]}`).join('\n')}

Examples:
  git tune config set targets '[{name: small, env: {MODEL: gpt-4o-mini}}, {name: large, env: {MODEL: gpt-4o}}]'
  git tune fleet support --targets small,large
  git tune auto --fleet support --max-cost-usd 20
  git tune fleet support --report --pick cost`),
    run,
  );
}

interface FleetOptions {
  targets?: string;
  report?: boolean;
  pick?: string;
  out?: string;
  json?: boolean;
}

function pickRule(text: string | undefined): PickRule {
  if (text === undefined) return DEFAULT_PICK;
  if ((PICK_RULES as readonly string[]).includes(text)) return text as PickRule;
  throw usageError('bad-pick', `--pick takes one of ${PICK_RULES.join(', ')} (got ${text})`, 'git tune fleet support --report --pick cost');
}

async function run(io: CommandIO, name: string, opts: FleetOptions): Promise<void | Plan> {
  if (opts.report) {
    if (opts.targets) throw usageError('bad-options', '--report compares the fleet there is; --targets creates one: give one of them', `git tune fleet ${name} --report`);
    const [{ reportFleet }, { renderFleetReport }] = await Promise.all([import('../../app/fleet.js'), import('../../core/fleet.js')]);
    const report = await reportFleet(io.cwd, name, pickRule(opts.pick));
    const markdown = renderFleetReport(report);
    // In GitHub Actions the comparison goes into the job summary too.
    if (io.env.GITHUB_STEP_SUMMARY) await fs.appendFile(io.env.GITHUB_STEP_SUMMARY, `${markdown}\n`);
    if (opts.out) await fs.writeFile(path.resolve(io.cwd, opts.out), markdown);
    if (opts.json) printJson(io, report);
    else io.out(markdown.trimEnd());
    return;
  }
  if (opts.out) throw usageError('bad-options', '--out goes with --report', `git tune fleet ${name} --report --out fleet.md`);
  if (opts.pick) throw usageError('bad-options', '--pick goes with --report', `git tune fleet ${name} --report --pick ${opts.pick}`);
  if (!opts.targets) {
    throw usageError('bad-options', 'give --targets to create the fleet, or --report to compare it', `git tune fleet ${name} --targets small,large`);
  }
  const { createFleet, parseTargets } = await import('../../app/fleet.js');
  const created = await createFleet(io.cwd, name, parseTargets(opts.targets), io);
  if (created instanceof Plan) return created;
  if (opts.json) {
    printJson(io, created);
    return;
  }
  io.out(created.members.map((m) => `created ${m.branch} (target ${m.target}) at ${created.base.slice(0, 7)}`).join('\n'));
  io.err(`next: git tune auto --fleet ${name}   # drives every target at once; then: git tune fleet ${name} --report`);
}
