import { fleetReport, type FleetReport, type FleetRow, type PickRule } from '../core/fleet.js';
import { finalLine } from '../core/final-rate.js';
import { viewDifficult } from '../core/difficult.js';
import type { RunState } from '../core/fold.js';
import { compareIds } from '../core/difficult.js';
import { branchName, branchRef, fleetTuningName, isValidTargetName, isValidTuningName, parseFleetTuning } from '../core/names.js';
import { configPath, datasetPath, selectionPath, tuningDir } from '../core/paths.js';
import { usageError } from '../errors.js';
import { openRepo } from '../git/open.js';
import type { GitRepo } from '../git/types.js';
import { commitSteps, planSteps, type StepCommit, type WriteContext } from './commit.js';
import { setConfigValue } from './config-file.js';
import { nextFor } from './decide.js';
import { Plan, type DryRunnable } from './plan.js';
import { loadTuning, readText, startTuning, type Tuning } from './tuning.js';
import { listTunings } from './tuning-name.js';

/**
 * A fleet of target models (docs/auto.md, Fleets): one tuning per target,
 * `<fleet>@<target>` on branch `tune/<fleet>@<target>`, all started from the
 * tip of tuning `<fleet>`, each with its config pinned to its target (every
 * run passes TUNE_TARGET and the target's env). Nothing is merged on its own:
 * the report names the best and the command that takes it.
 */
export interface FleetMember {
  target: string;
  tuning: string;
  branch: string;
}

/** The fleet's tunings, by target. */
export async function fleetMembers(repo: GitRepo, fleet: string): Promise<FleetMember[]> {
  const out: FleetMember[] = [];
  for (const name of await listTunings(repo)) {
    const parsed = parseFleetTuning(name);
    if (parsed?.fleet === fleet) out.push({ target: parsed.target, tuning: name, branch: branchName(name) });
  }
  return out.sort((a, b) => compareIds(a.target, b.target));
}

/** The fleet's tunings, or a usage error naming the fleets there are. */
export async function requireFleet(repo: GitRepo, fleet: string): Promise<FleetMember[]> {
  const members = await fleetMembers(repo, fleet);
  if (members.length > 0) return members;
  const fleets = [...new Set((await listTunings(repo)).map((n) => parseFleetTuning(n)?.fleet).filter((f): f is string => Boolean(f)))].sort();
  throw usageError('no-such-fleet', `there is no fleet ${fleet} (no branch tune/${fleet}@<target>)${fleets.length ? `; fleets here: ${fleets.join(', ')}` : ''}`,
    `git tune fleet ${fleet} --targets <a>,<b>   # targets defined in tune/${fleet}'s config`);
}

/** `--targets a,b,c` as a list: trimmed, each once, at least one. */
export function parseTargets(text: string): string[] {
  const targets = [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))];
  if (targets.length === 0) throw usageError('bad-options', `--targets names the target models, comma-separated (got ${JSON.stringify(text)})`, 'git tune fleet support --targets gpt-4o,claude-sonnet');
  return targets;
}

export interface FleetCreated {
  fleet: string;
  /** The commit every target's branch starts from: the tip of tune/<fleet>. */
  base: string;
  members: Array<FleetMember & { tip: string }>;
}

/**
 * `git tune fleet <name> --targets a,b,c`: for each target, branch
 * tune/<name>@<target> from tune/<name>'s tip with an init commit (its
 * config: <name>'s, `target` set), then <name>'s dataset and selection when
 * it has them. Everything is checked before the first write; HEAD stays.
 */
export async function createFleet(cwd: string, fleet: string, targets: readonly string[], ctx: WriteContext): Promise<FleetCreated>;
export async function createFleet(cwd: string, fleet: string, targets: readonly string[], ctx: DryRunnable<WriteContext>): Promise<FleetCreated | Plan>;
export async function createFleet(cwd: string, fleet: string, targets: readonly string[], ctx: DryRunnable<WriteContext>): Promise<FleetCreated | Plan> {
  const repo = await openRepo(cwd);
  if (parseFleetTuning(fleet)) {
    throw usageError('bad-tuning-name', `${fleet} is already one target's tuning of a fleet; a fleet starts from a plain tuning`, `git tune fleet ${parseFleetTuning(fleet)!.fleet} --targets <a>,<b>`);
  }
  const source = await startTuning(repo, fleet);
  if (!source.config || source.configText === null) {
    throw usageError('no-config', `tuning ${fleet} has no config.yaml: a fleet copies it`, `git tune init ${fleet} --prose '<glob>' --runner '<command>'`);
  }
  const defined = source.config.targets.map((t) => t.name);
  for (const target of targets) {
    if (!isValidTargetName(target) || !isValidTuningName(fleetTuningName(fleet, target))) {
      throw usageError('bad-target-name', `target "${target}" cannot be part of a branch name: use letters, digits, . _ - (starting with a letter or digit; ${fleet}@${target} at most 129 characters)`,
        `git tune fleet ${fleet} --targets gpt-4o,claude-sonnet`);
    }
  }
  const missing = targets.filter((t) => !defined.includes(t));
  if (missing.length > 0) {
    const example = JSON.stringify([...source.config.targets.map((t) => ({ name: t.name, env: t.env })), ...missing.map((name) => ({ name, env: {} }))]);
    throw usageError('no-such-target', `tuning ${fleet}'s config defines no target ${missing.join(', ')} (targets: ${defined.join(', ') || 'none'})`,
      `git switch ${branchName(fleet)} && git tune config set targets '${example}'`);
  }
  const taken: string[] = [];
  for (const target of targets) if (await repo.resolveRef(branchRef(fleetTuningName(fleet, target)))) taken.push(branchName(fleetTuningName(fleet, target)));
  if (taken.length > 0) {
    throw usageError('fleet-exists', `the fleet already has ${taken.join(', ')}`, `git tune fleet ${fleet} --report   # or drive it: git tune auto --fleet ${fleet}`);
  }

  const [dataset, selection] = await Promise.all([
    readText(repo, source.tip, datasetPath(source.dir)),
    readText(repo, source.tip, selectionPath(source.dir)),
  ]);
  const chains = targets.map((target) => ({ target, tuning: fleetTuningName(fleet, target), commits: chainFor(source, fleetTuningName(fleet, target), target, dataset, selection) }));
  // A dry run plans each branch's chain: the commits the loop below writes.
  if (ctx.dryRun) {
    const planned = await Promise.all(chains.map((chain) => planSteps(newBranch(repo, chain.tuning, source.tip), chain.commits)));
    return new Plan(planned.flat(), `create ${chains.map((c) => branchName(c.tuning)).join(', ')} at ${source.tip.slice(0, 7)}; HEAD stays where it is`);
  }
  const members: FleetCreated['members'] = [];
  try {
    for (const chain of chains) {
      const oids = await commitSteps(newBranch(repo, chain.tuning, source.tip), chain.commits, ctx);
      members.push({ target: chain.target, tuning: chain.tuning, branch: branchName(chain.tuning), tip: oids[oids.length - 1]! });
    }
  } catch (err) {
    // All of the fleet or none: the branches made before the failure go again.
    for (const m of members) await repo.deleteRef(branchRef(m.tuning), m.tip).catch(() => undefined);
    throw err;
  }
  return { fleet, base: source.tip, members };
}

const newBranch = (repo: GitRepo, tuning: string, base: string) =>
  ({ repo, ref: branchRef(tuning), parent: base, expected: null, tuning, onBranch: false });

/** A target's first steps: init with the pinned config, then the source's dataset and selection as they are. */
function chainFor(source: Tuning, tuning: string, target: string, dataset: string | null, selection: string | null): StepCommit[] {
  const dir = tuningDir(tuning);
  const { text } = setConfigValue(source.configText!, 'target', target, configPath(dir));
  const commits: StepCommit[] = [{
    step: { step: 'init', tuning, difficult: [] },
    subject: `tune(${tuning}): init, fleet ${source.name} for target ${target}`,
    body: `Start tuning ${tuning}: ${source.name}'s config, dataset and selection at ${source.tip.slice(0, 7)}, every run on target ${target}.`,
    changes: new Map([[configPath(dir), { content: text }]]),
  }];
  const state = source.state;
  if (dataset !== null && state.dataset) {
    commits.push({
      step: { step: 'dataset', tuning, cases: state.dataset.cases, rev: state.dataset.rev, difficult: [] },
      subject: `tune(${tuning}): dataset of ${state.dataset.cases} cases (from ${source.name})`,
      changes: new Map([[datasetPath(dir), { content: dataset }]]),
    });
  }
  if (selection !== null && state.selection && source.selection) {
    commits.push({
      step: { step: 'select', tuning, selected: state.selection.selected, total: state.selection.total, difficult: [] },
      subject: `tune(${tuning}): select ${state.selection.selected} cases (as ${source.name})`,
      changes: new Map([[selectionPath(dir), { content: selection }]]),
    });
  }
  return commits;
}

/** The run a target is judged by: the latest graded final check, else the latest graded run. */
function checkedRun(tuning: Tuning): RunState | null {
  const graded = (runs: readonly RunState[]) => [...runs].reverse().find((r) => r.grade !== null && r.void === null && r.grade.verdict !== 'VOID') ?? null;
  const batches = [...tuning.state.runs.values()].filter((r) => r.half !== null).sort((a, b) => a.startIndex - b.startIndex);
  return graded(tuning.state.final) ?? graded(batches);
}

export function fleetRow(member: FleetMember, tuning: Tuning): FleetRow {
  const step = nextFor(tuning);
  const run = checkedRun(tuning);
  const state = tuning.state;
  return {
    target: member.target,
    tuning: member.tuning,
    state: step.kind,
    message: step.message,
    checked: run ? {
      run: run.name, verdict: run.grade!.verdict, cases: run.cases.length,
      right: run.cases.length - run.grade!.wrong.length, tokens: run.tokens, costUsd: run.costUsd,
    } : null,
    heldOut: run?.grade?.heldOut ? { right: run.grade.heldOut.right, cases: run.grade.heldOut.cases } : null,
    tokens: state.usage.tokens,
    costUsd: state.usage.costUsd,
    runs: [...state.runs.values()].filter((r) => r.finished).length,
    editsKept: state.edits.filter((e) => e.status === 'confirmed' || e.status === 'kept').length,
    final: finalOf(tuning, run),
  };
}

/** The final check's line for the report: right / wrong / stuck with ids, from its grade and the difficult list. */
function finalOf(tuning: Tuning, run: RunState | null): string | null {
  if (!run?.grade || run.half !== null) return null;
  const stuck = viewDifficult(tuning.state, tuning.config?.maxRetries ?? 3).filter((e) => e.status === 'stuck' && run.cases.includes(e.id)).map((e) => e.id);
  const right = run.cases.length - run.grade.wrong.length;
  return finalLine({ verdict: run.grade.verdict, right, total: run.cases.length, wrong: run.grade.wrong.filter((id) => !stuck.includes(id)), stuck });
}

/** `git tune fleet <name> --report`: every target's row and the best by `pick`. Reads only. */
export async function reportFleet(cwd: string, fleet: string, pick: PickRule): Promise<FleetReport> {
  const repo = await openRepo(cwd);
  const members = await requireFleet(repo, fleet);
  const rows: FleetRow[] = [];
  for (const m of members) rows.push(fleetRow(m, await loadTuning(repo, m.tuning)));
  return fleetReport(fleet, rows, pick);
}
