import path from 'node:path';
import { DEFAULT_PICK, fleetReport, type FleetReport, type PickRule } from '../core/fleet.js';
import { localPath } from '../core/paths.js';
import { EXIT, usageError, type ExitCode } from '../errors.js';
import { openLinkedWorktree, removeLinkedWorktreeIfClean } from '../git/linked-worktree.js';
import { withDriverLock } from '../git/lock-owner.js';
import { gitOnPath } from '../git/find-repo.js';
import { openRepo } from '../git/open.js';
import type { GitRepo } from '../git/types.js';
import { autoTuningIn, configured, type AutoOptions, type AutoResult, type AutoSession, type Usage } from './auto.js';
import { fleetRow, requireFleet, type FleetMember } from './fleet.js';
import { loadTuning } from './tuning.js';
import { spentSoFar } from './repeats.js';

/**
 * `git tune auto --fleet <name>`: every target's tuning of the fleet driven
 * at once, one driver per target in this process, each in its own working
 * tree (the fleet's worktree `.git/tune/<fleet>@<target>/worktree`, a linked
 * worktree of native git; the checked-out tuning in the main one), all under
 * one shared budget: the fleet's `budget` less what every target spent
 * before, and this auto's own ceiling (--max-cost-usd, --max-tokens) when
 * lower. No target launches a case once the fleet's is spent. Ctrl-C, `git
 * tune stop --fleet <name>` and --max-minutes stop every driver at its next
 * safe point; auto again carries on from history.
 */
export interface FleetAutoResult {
  fleet: string;
  tunings: AutoResult[];
  skipped: Array<{ tuning: string; why: string }>;
  spent: Usage;
  ceiling: AutoSession['ceiling'];
  /** Worktrees kept because they hold changes (an editor's unrecorded edit): auto again picks them up. */
  kept: string[];
  report: FleetReport;
  exitCode: ExitCode;
}

/** Where a target's tuning is driven when its branch is not the one checked out. */
export const fleetWorktree = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'worktree');

/** The fleet's shared budget: the lowest of its targets' budgets (one config, copied), less what they spent already. */
export function fleetBudget(budgets: ReadonlyArray<{ maxCostUsd: number | null; maxTokens: number | null }>, spent: Usage): AutoSession['ceiling'] {
  const lowest = (values: Array<number | null>) => {
    const set = values.filter((v): v is number => v !== null);
    return set.length ? Math.min(...set) : null;
  };
  const cost = lowest(budgets.map((b) => b.maxCostUsd));
  const tokens = lowest(budgets.map((b) => b.maxTokens));
  return { maxCostUsd: cost === null ? null : Math.max(0, cost - spent.costUsd), maxTokens: tokens === null ? null : Math.max(0, tokens - spent.tokens) };
}

const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

export interface FleetAutoOptions {
  /** Each target's driver options, given its target (the narration and live view say which target). */
  optionsFor: (member: FleetMember) => AutoOptions;
  session: AutoSession;
  env: AutoOptions['env'];
  say: (line: string) => void;
  pick?: PickRule;
}

export async function autoFleet(cwd: string, fleet: string, opts: FleetAutoOptions): Promise<FleetAutoResult> {
  const main = await openRepo(cwd);
  const members = await requireFleet(main, fleet);
  const skipped: FleetAutoResult['skipped'] = [];
  const drive: FleetMember[] = [];
  for (const m of members) {
    const why = await configured(main, m.tuning);
    if (why) skipped.push({ tuning: m.tuning, why });
    else drive.push(m);
  }
  if (drive.length === 0) {
    throw usageError('no-tunings', `no tuning of fleet ${fleet} has a config (${skipped.map((s) => `${s.tuning}: ${s.why}`).join('; ')})`, `git tune fleet ${fleet} --report`);
  }
  // Every target is driven from the start (before its worktree is made), or none is.
  return withDriverLock(main.gitdir, drive.map((m) => m.tuning), `git tune auto --fleet ${fleet}`, () => driveFleet(main, fleet, members, drive, skipped, opts));
}

async function driveFleet(
  main: GitRepo, fleet: string, members: FleetMember[], drive: FleetMember[], skipped: FleetAutoResult['skipped'], opts: FleetAutoOptions,
): Promise<FleetAutoResult> {
  const head = await main.headRef();
  if (drive.some((m) => head !== `refs/heads/${m.branch}`) && !gitOnPath(opts.env)) {
    throw usageError('no-git', 'auto --fleet drives each target in a linked worktree of native git, and git is not on PATH', 'install git and put it on PATH');
  }
  for (const s of skipped) opts.say(`skipping tune/${s.tuning}: ${s.why}`);

  // One budget for the fleet: what its targets spent before counts against it, a stopped run's kept cases included.
  const tunings = await Promise.all(drive.map((m) => loadTuning(main, m.tuning)));
  const before = (await Promise.all(tunings.map(spentSoFar))).reduce((u, s) => ({ tokens: u.tokens + s.tokens, costUsd: u.costUsd + s.costUsd }), { tokens: 0, costUsd: 0 });
  const budget = fleetBudget(tunings.map((t) => t.config!.budget), before);
  const { session } = opts;
  const flags = { ...session.ceiling };
  session.ceiling = { maxCostUsd: lower(flags.maxCostUsd, budget.maxCostUsd), maxTokens: lower(flags.maxTokens, budget.maxTokens) };
  if (session.ceiling.maxCostUsd !== flags.maxCostUsd || session.ceiling.maxTokens !== flags.maxTokens) {
    session.ceilingName = `fleet ${fleet}'s shared budget (what its targets had not spent)`;
  }

  const repos = new Map<string, { repo: GitRepo; worktree: string | null }>();
  for (const m of drive) {
    if (head === `refs/heads/${m.branch}`) repos.set(m.tuning, { repo: main, worktree: null });
    else {
      const dir = fleetWorktree(main.gitdir, m.tuning);
      const { repo, created } = await openLinkedWorktree(main, m.branch, dir, opts.env);
      if (!created) opts.say(`tune/${m.tuning}: carrying on in its worktree ${path.relative(main.dir, dir)}`);
      repos.set(m.tuning, { repo, worktree: dir });
    }
  }

  const results = await Promise.all(drive.map(async (m): Promise<AutoResult> => {
    try {
      return await autoTuningIn(repos.get(m.tuning)!.repo, opts.optionsFor(m), m.tuning);
    } catch (err) {
      return { tuning: m.tuning, outcome: 'error', message: (err as Error).message, steps: [], spent: { tokens: 0, costUsd: 0 }, exitCode: EXIT.unexpected };
    }
  }));

  const kept: string[] = [];
  for (const { worktree } of repos.values()) {
    if (worktree && !(await removeLinkedWorktreeIfClean(main, worktree, opts.env).catch(() => false))) kept.push(worktree);
  }
  const rows = [];
  for (const m of members) rows.push(fleetRow(m, await loadTuning(main, m.tuning)));
  const failed = results.find((r) => r.exitCode !== EXIT.ok);
  return {
    fleet, tunings: results, skipped, spent: { ...session.spent }, ceiling: session.ceiling, kept,
    report: fleetReport(fleet, rows, opts.pick ?? DEFAULT_PICK), exitCode: failed?.exitCode ?? EXIT.ok,
  };
}
