import { reportLine, type FinalReport } from '../app/final.js';
import { rateCell } from '../core/final-rate.js';
import { overallVerdict } from '../app/ci.js';
import { branchName } from '../core/names.js';
import { formatShard } from '../core/shard.js';
import { renderSideBySide, renderSideBySidePlain } from '../core/held-out.js';

/**
 * The final check's report as text: the job summary GitHub Actions shows
 * (markdown, written by `git tune final --ci` to $GITHUB_STEP_SUMMARY and
 * beside a result set) and the plain report on stdout.
 */

const fmt = (n: number) => n.toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(4)}`;
const list = (ids: readonly string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
const pct = (x: number) => `${Math.round(x * 100)}%`;

function scope(r: FinalReport): string {
  const parts = [r.shard.count > 1 ? `shard ${formatShard(r.shard)}` : '', r.target ? `target ${r.target}` : ''].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function recordedLine(r: FinalReport): string | null {
  if (!r.recorded) return null;
  const what = r.recorded.verdict ?? 'not graded';
  return `re-check: the final check in history is ${what} (${fmt(r.recorded.tokens)} tokens, ${usd(r.recorded.costUsd)}${r.recorded.commit ? `, ${r.recorded.commit.slice(0, 7)}` : ''}); this run is not recorded`;
}

/** The job summary: markdown, one section per target, the best named. */
export function renderSummary(reports: readonly FinalReport[], best: FinalReport | null): string {
  const first = reports[0]!;
  const md: string[] = [];
  const verdict = overallVerdict(reports);
  md.push(`## git-tune final check of ${first.tuning}: ${verdict}`, '');
  if (reports.length > 1) {
    md.push(`${reports.length} targets${best ? `; best: **${best.target ?? 'no target'}** (most cases right, then fewest tokens, then cost)` : ''}.`, '');
    md.push('| target | verdict | cases right | tokens | cost |', '| --- | --- | ---: | ---: | ---: |');
    for (const r of reports) md.push(`| ${r.target ?? '(none)'}${r === best ? ' (best)' : ''} | ${r.verdict} | ${r.casesRight} of ${r.casesTotal} | ${fmt(r.tokens)} | ${usd(r.costUsd)} |`);
    md.push('');
  }
  for (const r of reports) {
    if (reports.length > 1) md.push(`### ${r.target ?? '(no target)'}: ${r.verdict}`, '');
    md.push('| | |', '| --- | --- |');
    md.push(`| verdict | **${r.verdict}**${scope(r)} |`);
    md.push(`| result | ${reportLine(r)} |`);
    md.push(`| cases right | ${r.casesRight} of ${r.casesTotal} (pass rate ${pct(r.rate.value)}, 95% Wilson interval ${pct(r.rate.low)}–${pct(r.rate.high)}) |`);
    md.push(`| regressed from their batch | ${list(r.regressed)} |`);
    md.push(`| stuck (reported, not counted) | ${list(r.stuck)} |`);
    if (r.wrong.length) md.push(`| wrong (not stuck) | ${list(r.wrong)} |`);
    if (r.voids.length) md.push(`| void | ${list(r.voids)} |`);
    md.push(`| tokens | ${fmt(r.tokens)} |`);
    md.push(`| cost | ${usd(r.costUsd)} |`);
    md.push(`| tuning tip | \`${r.tip.slice(0, 12)}\` (${branchName(r.tuning)}) |`);
    if (r.commit) md.push(`| recorded as | \`${r.commit.slice(0, 12)}\` (tag tune/${r.tuning}/final-check) |`);
    const again = recordedLine(r);
    if (again) md.push(`| ${again.split(': ')[0]} | ${again.split(': ').slice(1).join(': ')} |`);
    md.push('', '| class | cases | right | not right | stuck | tokens | cost |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const c of r.classes) md.push(`| ${c.class} | ${c.cases} | ${c.right} | ${c.wrong} | ${c.stuck} | ${fmt(c.tokens)} | ${usd(c.costUsd)} |`);
    const repeated = r.cases.filter((c) => c.answers > 1);
    if (repeated.length) {
      md.push('', 'Cases run again after a wrong answer (the majority of their answers decides):', '', '| case | answers | right-rate | decides |', '| --- | ---: | --- | --- |');
      for (const c of repeated) md.push(`| ${c.id} | ${c.answers} | ${rateCell(c)} | ${c.verdict} |`);
    }
    if (r.heldOut) {
      md.push('', `#### Held-out set: tuned vs baseline`, '', ...renderSideBySide(r.heldOut.rows), '', `${r.heldOut.failed ? '**' : ''}${r.heldOut.line}${r.heldOut.failed ? '**' : ''}`);
      if (r.heldOut.wrong.length) md.push('', `held-out cases not right: ${list(r.heldOut.wrong)}`);
      if (r.heldOut.hint) md.push('', `To compare: \`${r.heldOut.hint.split('   #')[0]}\` on the tuning branch, then run the final check again.`);
    }
    md.push('');
  }
  return `${md.join('\n')}\n`;
}

/** The same report as plain text, for a terminal or a CI log. */
export function renderPlain(reports: readonly FinalReport[], best: FinalReport | null): string {
  const out: string[] = [];
  const first = reports[0]!;
  out.push(reports.length > 1
    ? `final check of ${first.tuning}: ${overallVerdict(reports)}${best ? ` (best target: ${best.target ?? 'none'})` : ''}`
    : `final check of ${first.tuning}: ${reportLine(first)}`);
  for (const r of reports) {
    const pad = reports.length > 1 ? '    ' : '  ';
    if (reports.length > 1) out.push(`  ${r.target ?? '(no target)'}${r === best ? ' (best)' : ''}: ${reportLine(r)}`);
    else if (scope(r)) out.push(`  ${scope(r).slice(2, -1)}`);
    out.push(`${pad}cases right: ${r.casesRight} of ${r.casesTotal}`);
    out.push(`${pad}regressed: ${list(r.regressed)}`);
    out.push(`${pad}stuck: ${list(r.stuck)}`);
    if (r.wrong.length) out.push(`${pad}wrong: ${list(r.wrong)}`);
    for (const c of r.cases.filter((x) => x.answers > 1)) out.push(`${pad}${c.id}: ${rateCell(c)}: ${c.verdict} by the majority`);
    out.push(`${pad}tokens: ${fmt(r.tokens)}, cost ${usd(r.costUsd)}`);
    for (const c of r.classes) out.push(`${pad}  ${c.class}: ${c.right} of ${c.cases} right, ${fmt(c.tokens)} tokens, ${usd(c.costUsd)}`);
    if (r.heldOut) {
      for (const line of renderSideBySidePlain(r.heldOut.rows)) out.push(`${pad}${line}`);
      out.push(`${pad}${r.heldOut.line}`);
      if (r.heldOut.wrong.length) out.push(`${pad}held-out not right: ${list(r.heldOut.wrong)}`);
      if (r.heldOut.hint) out.push(`${pad}to compare: ${r.heldOut.hint}`);
    }
    const again = recordedLine(r);
    if (again) out.push(`${pad}${again}`);
    if (r.commit) out.push(`${pad}recorded: commit ${r.commit.slice(0, 7)}, tag tune/${r.tuning}/final-check`);
    if (r.out) out.push(`${pad}result set: ${r.out}`);
  }
  return out.join('\n');
}

