import { branchName } from './names.js';

/**
 * A fleet's report (docs/auto.md, Fleets): one row per target, the best of
 * them by a rule the user picks, and the git command that takes it. Pure:
 * src/app/fleet.ts reads the rows from each tuning's history.
 */
export const PICK_RULES = ['held-out-then-cost', 'right-then-cost', 'right', 'cost'] as const;
export type PickRule = (typeof PICK_RULES)[number];
/** Without `--pick`: the held-out set is the evidence against overfitting, so it decides first. */
export const DEFAULT_PICK: PickRule = 'held-out-then-cost';

export const PICK_DOCS: Record<PickRule, string> = {
  'held-out-then-cost': 'the most held-out cases right in the final check, then the highest share right, then the lowest cost per case',
  'right-then-cost': 'the highest share of cases right, then the lowest cost per case',
  right: 'the highest share of cases right, ties by name',
  cost: 'the lowest cost per case, ties by the share right',
};

export interface FleetRow {
  target: string;
  tuning: string;
  /** `next`'s kind for the tuning (`done`, `final-failed`, `edit`, …) and its message. */
  state: string;
  message: string;
  /** The run the right rate is read from: the final check's latest graded run, else the latest graded run; null when none is graded. */
  checked: { run: string; verdict: string; right: number; cases: number; tokens: number; costUsd: number } | null;
  /** The held-out set's score in that final check (docs/held-out.md); null without a held-out set or a graded final check. */
  heldOut: { right: number; cases: number } | null;
  tokens: number;
  costUsd: number;
  runs: number;
  /** Edits in the prose now: confirmed, or kept on purpose. */
  editsKept: number;
  /** The graded final check's line: right / wrong / stuck with counts and ids next to its verdict (null before one). */
  final?: string | null;
}

export interface FleetReport {
  fleet: string;
  pick: PickRule;
  rows: FleetRow[];
  /** The target the rule names, or null when no target has a graded run. */
  best: string | null;
  why: string;
  /** The command that takes the best target's branch into the branch you are on. */
  take: string | null;
}

const rate = (r: FleetRow) => (r.checked && r.checked.cases > 0 ? r.checked.right / r.checked.cases : -1);
const heldOutRight = (r: FleetRow) => (r.heldOut ? r.heldOut.right : -1);
const perCase = (r: FleetRow) => (r.checked && r.checked.cases > 0 ? r.checked.costUsd / r.checked.cases : Infinity);

/** Orders rows best first by `rule`; rows without a graded run go last. */
export function rankRows(rows: readonly FleetRow[], rule: PickRule): FleetRow[] {
  const byName = (a: FleetRow, b: FleetRow) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0);
  const byRight = (a: FleetRow, b: FleetRow) => rate(b) - rate(a);
  const byHeldOut = (a: FleetRow, b: FleetRow) => heldOutRight(b) - heldOutRight(a);
  const byCost = (a: FleetRow, b: FleetRow) => (perCase(a) === perCase(b) ? 0 : perCase(a) < perCase(b) ? -1 : 1);
  const graded = (a: FleetRow, b: FleetRow) => Number(b.checked !== null) - Number(a.checked !== null);
  const order = rule === 'right' ? [graded, byRight, byName]
    : rule === 'cost' ? [graded, byCost, byRight, byName]
    : rule === 'held-out-then-cost' ? [graded, byHeldOut, byRight, byCost, byName]
    : [graded, byRight, byCost, byName];
  return [...rows].sort((a, b) => {
    for (const f of order) {
      const d = f(a, b);
      if (d !== 0) return d;
    }
    return 0;
  });
}

const usd = (n: number) => `$${n.toFixed(4)}`;
const heldOutCell = (r: FleetRow) => (r.heldOut ? `${r.heldOut.right}/${r.heldOut.cases}` : '–');
const pct = (r: FleetRow) => (r.checked ? `${r.checked.right}/${r.checked.cases} (${Math.round((100 * r.checked.right) / Math.max(1, r.checked.cases))}%)` : '–');

export function fleetReport(fleet: string, rows: readonly FleetRow[], pick: PickRule): FleetReport {
  const ranked = rankRows(rows, pick);
  const top = ranked[0]?.checked ? ranked[0] : null;
  const why = top
    ? `${top.target}: ${pct(top)} right in ${top.checked!.run}${top.heldOut ? `, ${heldOutCell(top)} of the held-out set` : ''}, ${usd(perCase(top))} per case (rule ${pick}: ${PICK_DOCS[pick]})`
    : 'no target has a graded run yet: `git tune auto --fleet ' + fleet + '`';
  return { fleet, pick, rows: [...rows], best: top?.target ?? null, why, take: top ? `git merge --no-ff ${branchName(top.tuning)}` : null };
}

/** The report as markdown, for a person, a job summary or a PR comment. */
export function renderFleetReport(report: FleetReport): string {
  const lines = [`# Fleet ${report.fleet}`, ''];
  lines.push('| target | state | right | held-out right | tokens | cost | cost per case | runs | edits kept | branch |');
  lines.push('| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of report.rows) {
    const mark = r.target === report.best ? ' (best)' : '';
    lines.push(`| ${r.target}${mark} | ${r.state} | ${pct(r)}${r.checked ? ` in ${r.checked.run}` : ''} | ${heldOutCell(r)} | ${r.tokens.toLocaleString('en-US')} | ${usd(r.costUsd)} | ${r.checked ? usd(perCase(r)) : '–'} | ${r.runs} | ${r.editsKept} | \`${branchName(r.tuning)}\` |`);
  }
  const finals = report.rows.filter((r) => r.final);
  if (finals.length > 0) {
    lines.push('', 'Final checks:', '');
    for (const r of finals) lines.push(`- ${r.target}: ${r.final}`);
  }
  lines.push('');
  if (report.best) {
    lines.push(`Best by \`${report.pick}\`: **${report.best}**, ${report.why.slice(report.best.length + 2)}.`, '');
    lines.push('Nothing is merged on its own. To take it, on the branch that should get it:', '', '```sh', report.take!, '```');
  } else lines.push(`No best yet: ${report.why}.`);
  lines.push('', `Other rules: ${PICK_RULES.map((r) => `\`--pick ${r}\` (${PICK_DOCS[r]})`).join('; ')}.`);
  return `${lines.join('\n')}\n`;
}
