import type { JudgeFile, JudgeOutput, Proposal } from '../contracts/judge.js';
import type { CaseResult } from '../contracts/result.js';
import type { DifficultReason } from '../contracts/files.js';
import { asksOf, disagreement } from './judge-majority.js';
import { median } from './report.js';
import { caseOutcome, costlyCases, decidedBy, memoryCost, noiseLine, savedTwiceOf, type CaseNoise, type Outcome } from './noise.js';
import { judgeHeldOut, renderSideBySide, scoreOf, sideBySide, type HeldOutInput, type HeldOutJudgement } from './held-out.js';
import { VERDICTS, type DifficultChange, type Score, type Verdict } from './steps.js';
import { finalLine, finalRule, rateCell, type FinalCase, type FinalRule } from './final-rate.js';

/**
 * Findings of a run (docs/method.md#grading): the draft the tool proposes, and the parse of
 * the file a person or agent finished. Pure.
 *
 * Shape: the first level-2 heading is the verdict; `### Cases` holds the
 * per-case table whose `result` column (right / wrong / VOID / ?) is what the
 * grade records; `## Cost review` or `## Memory review`; `## Difficult` with
 * one `add <id> <reason>` / `fix <id>` line each; `## Proposals`.
 */
export type CaseVerdict = 'right' | 'wrong' | 'VOID' | '?';

export function isJudgeOutput(j: JudgeFile[string] | undefined): j is JudgeOutput {
  return j !== undefined && !('error' in j && !('right' in j));
}

/**
 * Right when every check passes and the judge (if any) says right. A case
 * whose judge failed even when called again is VOID for the judge: the run is
 * graded on the rest (docs/grading.md: robust graders).
 */
export function caseVerdict(result: CaseResult, judge: JudgeFile[string] | undefined): CaseVerdict {
  if (result.status === 'void') return 'VOID';
  if (result.status === 'error' || result.right === false) return 'wrong';
  if (judge === undefined) return result.right === true ? 'right' : '?';
  if (!isJudgeOutput(judge)) return 'VOID';
  return judge.right ? 'right' : 'wrong';
}

/** Files of the repository a judge changed while judging a case, put back by git-tune. */
export function undoneBy(judge: JudgeFile[string] | undefined): string[] {
  const undone = (judge as { undone?: unknown } | undefined)?.undone;
  return Array.isArray(undone) ? undone.filter((f): f is string => typeof f === 'string') : [];
}

export interface MergedProposal {
  file: string;
  change: string;
  why: string[];
  expect: string[];
  cases: string[];
}

/** The judge's proposals merged by file, identical changes once with every case that asked. */
export function mergeProposals(judge: JudgeFile, order: readonly string[]): MergedProposal[] {
  const merged: MergedProposal[] = [];
  for (const id of order) {
    const j = judge[id];
    if (!isJudgeOutput(j)) continue;
    for (const p of j.proposals as Proposal[]) {
      let m = merged.find((x) => x.file === p.file && x.change.trim() === p.change.trim());
      if (!m) {
        m = { file: p.file, change: p.change.trim(), why: [], expect: [], cases: [] };
        merged.push(m);
      }
      if (p.why && !m.why.includes(p.why)) m.why.push(p.why);
      if (p.expect && !m.expect.includes(p.expect)) m.expect.push(p.expect);
      if (!m.cases.includes(id)) m.cases.push(id);
    }
  }
  return merged.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

export interface DraftInput {
  run: { name: string; batch: number; half: 'nomem' | 'mem' | null; number: number };
  results: readonly CaseResult[];
  judge: JudgeFile;
  /** The previous graded, non-VOID run of the same batch and half. */
  previous: { name: string; results: readonly CaseResult[]; wrong: readonly string[] } | null;
  /** For a with-memory run: the passing no-memory run of the batch. */
  passingNomem: { name: string; tokens: number; results: readonly CaseResult[]; wrong: readonly string[] } | null;
  recheck: readonly string[];
  /** Ids on the difficult list and not fixed (open or stuck), which of them are open, and which are there for memory. */
  difficult: { onList: readonly string[]; open: readonly string[]; memory?: readonly string[] };
  /** Case ids some edit made since the previous run aimed at. */
  aimedSince: readonly string[];
  /**
   * Each case's noise from the history (docs/method.md#noise): its answers under this run's prose and
   * memory, this run's included, and (with memory) under the passing no-memory run's. Absent: none measured.
   */
  noise?: ReadonlyMap<string, CaseNoise>;
  passingNoise?: ReadonlyMap<string, CaseNoise>;
  /** Final check only: stuck ids, and whether each case was right in its own batch; maxStuckShare (default 0.2, docs/method.md#final-check). */
  final?: { stuck: readonly string[]; rightInBatch: ReadonlyMap<string, boolean>; heldOut?: HeldOutInput; maxStuckShare?: number };
}

export interface Draft {
  verdict: Verdict;
  markdown: string;
  verdicts: Map<string, CaseVerdict>;
  difficult: Array<DifficultChange & { note: string }>;
  costly: string[];
  flaky: string[];
  regressed: string[];
  proposals: MergedProposal[];
  /** Each case's outcome over its answers (the first and its repeats): the majority, the right-rate, flaky. */
  outcomes: Map<string, Outcome>;
  /** Final check with a held-out set: each set's score, and the held-out rule's outcome (docs/held-out.md). */
  heldOut?: { selection: Score; heldOut: Score; judgement: HeldOutJudgement };
  /** Final check only: the VERIFIED rule's outcome over the selection, and each case's majority and right-rate (docs/method.md#noise). */
  final?: { rule: FinalRule; cases: FinalCase[] };
}

const fmt = (n: number) => n.toLocaleString('en-US');
const pct = (now: number, before: number) => (before === 0 ? 'n/a' : `${now >= before ? '+' : '−'}${Math.abs(Math.round(((now - before) / before) * 100))}%`);
const sum = (rs: readonly CaseResult[], f: (r: CaseResult) => number) => rs.reduce((s, r) => s + f(r), 0);

function compare(before: ReadonlySet<string>, nowWrong: ReadonlySet<string>, ids: readonly string[]) {
  const fixed = ids.filter((id) => before.has(id) && !nowWrong.has(id));
  const broke = ids.filter((id) => !before.has(id) && nowWrong.has(id));
  return { fixed, broke };
}

export function draftFindings(input: DraftInput): Draft {
  const { run, results } = input;
  const ids = results.map((r) => r.id);
  // The majority of a case's answers decides (docs/method.md#noise); without repeats, its one answer.
  const outcomes = new Map(results.map((r) => [r.id, caseOutcome(r, input.judge)]));
  const verdicts = new Map([...outcomes].map(([id, o]) => [id, o.verdict]));
  const wrong = ids.filter((id) => verdicts.get(id) === 'wrong');
  const unknown = ids.filter((id) => verdicts.get(id) === '?');
  // VOID cases: the runner's (the run says nothing) and the judge's (graded on the rest).
  const voids = results.filter((r) => r.status === 'void').map((r) => r.id);
  const judgeVoids = ids.filter((id) => verdicts.get(id) === 'VOID' && !voids.includes(id));
  const wrongSet = new Set(wrong);
  const onList = new Set(input.difficult.onList);
  // Cost compares medians and needs a margin above the noise (docs/method.md#noise).
  const costlyFound = costlyCases(results, input.noise);
  const medianCalls = costlyFound[0]?.median ?? median(results.map((r) => r.llmCalls));
  const costly = costlyFound.map((c) => c.id);
  const prevWrong = new Set(input.previous?.wrong ?? []);
  const prevIds = new Set(input.previous?.results.map((r) => r.id) ?? []);
  const aimed = new Set(input.aimedSince);
  // Flaky: answers that disagree on the same prose in this run, or right before, wrong now, no edit aimed at it
  // on one answer only. A case re-run whose answers agree is wrong on this prose, not flaky: marking it flaky
  // would let an edit that broke it be confirmed (a flaky case does not unconfirm an edit that fixed its aim).
  const disagree = ids.filter((id) => outcomes.get(id)!.flaky);
  const agreed = (id: string) => outcomes.get(id)!.answers.length > 1;
  const flaky = [...disagree, ...(input.previous ? ids.filter((id) => prevIds.has(id) && !prevWrong.has(id) && wrongSet.has(id) && !aimed.has(id) && !disagree.includes(id) && !agreed(id)) : [])];
  // A recheck case wrong again while on the difficult list was wrong when its batch passed: it did not regress.
  const regressed = input.recheck.filter((id) => wrongSet.has(id) && !onList.has(id));
  const tokens = sum(results, (r) => r.tokens);
  const savedTwice = savedTwiceOf(results);
  const isFinal = input.final !== undefined;

  // Difficult proposals (docs/method.md#difficult-list), one per case, the worst reason first.
  const difficult: Draft['difficult'] = [];
  const propose = (id: string, reason: DifficultReason, note: string) => {
    if (!onList.has(id) && !difficult.some((d) => d.id === id)) difficult.push({ op: 'add', id, reason, note });
  };
  if (!isFinal) {
    for (const id of wrong) {
      const j = input.judge[id];
      if (isJudgeOutput(j) && j.caseOnly) propose(id, 'wrong', 'the judge says the fault is in the case (its rubric or checks)');
      else if (prevWrong.has(id) && aimed.has(id)) propose(id, 'wrong', `still wrong after an edit aimed at it (${input.previous!.name})`);
      else if (regressed.includes(id)) propose(id, 'regressed', 'a recheck case that failed');
      else if (run.half === 'mem' && input.passingNomem && !input.passingNomem.wrong.includes(id)) propose(id, 'memory', `right without memory (${input.passingNomem.name}), wrong with it`);
      else if (flaky.includes(id)) propose(id, 'flaky', disagree.includes(id) ? answersNote(outcomes.get(id)!) : `right in ${input.previous!.name}, wrong now, no edit aimed at it`);
    }
    // A case whose answers disagree on the same prose is flaky, right by the majority or not.
    for (const id of disagree) propose(id, 'flaky', answersNote(outcomes.get(id)!));
  }

  // The proposed verdict (docs/method.md#grading).
  let verdict: Verdict;
  const everyRight = wrong.every((id) => onList.has(id)) && unknown.length === 0;
  // The held-out cases ride along in the final check: the VERIFIED rule is the selection's, the held-out rule their own.
  const heldIds = new Set(input.final?.heldOut?.ids ?? []);
  const selected = heldIds.size > 0 ? ids.filter((id) => !heldIds.has(id)) : ids;
  let held: Draft['heldOut'];
  if (isFinal && heldIds.size > 0) {
    const isRight = (id: string) => verdicts.get(id) === 'right';
    const heldScore = scoreOf(results.filter((r) => heldIds.has(r.id)), isRight);
    held = { selection: scoreOf(results.filter((r) => !heldIds.has(r.id)), isRight), heldOut: heldScore, judgement: judgeHeldOut(heldScore, input.final!.heldOut!) };
  }
  let finalOutcome: Draft['final'];
  if (isFinal) {
    // Each case by the majority of its answers (the first and its repeats); a final check some case of which the
    // judge could not grade says nothing yet: it runs again (VOID).
    const byId = new Map(results.map((r) => [r.id, r]));
    const cases = selected.map((id) => finalCaseOf(byId.get(id)!, input.judge));
    const rule = finalRule({
      cases, stuck: input.final!.stuck, rightInBatch: input.final!.rightInBatch, maxStuckShare: input.final!.maxStuckShare ?? 0.2,
      heldOutFailed: held?.judgement.failed ?? false, voids: voids.length + judgeVoids.length,
    });
    finalOutcome = { rule, cases };
    verdict = rule.verdict;
  } else if (voids.length > 0 || (judgeVoids.length > 0 && judgeVoids.length === ids.length)) verdict = 'VOID';
  else if (everyRight && run.half === 'nomem') verdict = 'PASSED';
  else if (everyRight && run.half === 'mem') {
    const cheaper = input.passingNomem ? memoryCost(results, input.passingNomem.results, { with: input.noise, without: input.passingNoise }).ok : true;
    verdict = savedTwice === 0 && cheaper ? 'PASSED' : 'CORRECT';
  } else if (!input.previous) verdict = 'NO CHANGE';
  else {
    const { fixed, broke } = compare(prevWrong, wrongSet, ids.filter((id) => prevIds.has(id) && !judgeVoids.includes(id)));
    verdict = fixed.length > 0 && broke.length === 0 ? 'PROGRESS' : fixed.length === 0 && broke.length > 0 ? 'REGRESSION' : fixed.length > 0 ? 'MIXED' : 'NO CHANGE';
  }
  if (verdict === 'PASSED' && run.half === 'nomem') for (const id of costly) propose(id, 'costly', `more than 2× the run's median llm calls (${medianCalls})`);
  // Any case on the list, stuck ones too, that a PASSED run got right is proposed fixed (docs/method.md#difficult-list).
  // A case listed for memory is fixed by a with-memory run only: right without memory says nothing of its memory.
  const forMemory = new Set(input.difficult.memory ?? []);
  const fixes: Draft['difficult'] = verdict === 'PASSED'
    ? input.difficult.onList.filter((id) => verdicts.get(id) === 'right' && !costly.includes(id) && (run.half === 'mem' || !forMemory.has(id))).map((id) => ({ op: 'fix' as const, id, note: 'right and not costly in a PASSED run' }))
    : [];
  difficult.push(...fixes);

  const proposals = mergeProposals(input.judge, ids);
  const md: string[] = [];
  md.push(`## ${verdict}`, '');
  const right = ids.filter((id) => verdicts.get(id) === 'right').length;
  const where = isFinal ? 'the final check' : `batch ${run.batch}, ${run.half === 'mem' ? 'with memory' : 'no memory'}, run ${run.number}`;
  md.push(`${run.name} (${where}): ${right}/${ids.length} right, ${fmt(tokens)} tokens, ${fmt(sum(results, (r) => r.llmCalls))} llm calls, $${sum(results, (r) => r.costUsd).toFixed(4)}.`);
  md.push('', '<!-- Drafted by `git tune grade --draft`. The first level-2 heading is the verdict: change it if you grade differently.', 'Edit the `result` column (right / wrong) where you disagree; `git tune grade` records this file. -->', '');
  md.push('### Cases', '');
  md.push('| case | result | checks | judge | rubric | tokens | llm calls | tool calls | memory reads | memory writes | saved twice | time | cost |');
  md.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const j = input.judge[r.id];
    const checks = r.checks.length ? `${r.checks.filter((c) => c.pass).length}/${r.checks.length}` : '–';
    const split = disagreement(j);
    const judgeCell = j === undefined ? '–' : isJudgeOutput(j) ? (j.right ? 'right' : 'wrong') + (j.caseOnly ? ' (case)' : '') + (split ? ` (${split})` : '') : 'error';
    const marks = isJudgeOutput(j) ? Object.values(j.rubric) : [];
    const rubric = marks.length ? `${marks.filter((m) => m === 'met').length} met, ${marks.filter((m) => m === 'partial').length} partial, ${marks.filter((m) => m === 'missed').length} missed` : '–';
    const writes = r.memoryWrites.added + r.memoryWrites.changed + r.memoryWrites.deleted;
    md.push(`| ${r.id} | ${verdicts.get(r.id)} | ${checks} | ${judgeCell} | ${rubric} | ${fmt(r.tokens)} | ${r.llmCalls} | ${r.toolCalls} | ${r.memoryReads} | ${writes} | ${r.memoryWrites.savedTwice} | ${(r.durationMs / 1000).toFixed(1)}s | $${r.costUsd.toFixed(4)} |`);
  }
  const why = results.filter((r) => verdicts.get(r.id) !== 'right').map((r) => {
    const j = input.judge[r.id];
    const reasons = [
      r.error ? `error: ${r.error}` : '', r.void ? `void: ${r.void}` : '',
      ...r.checks.filter((c) => !c.pass).map((c) => `check ${c.type} failed${c.detail ? ` (${c.detail})` : ''}`),
      j && !isJudgeOutput(j) ? `judge: ${(j as { error: string }).error}${r.status === 'void' ? '' : '; VOID for the judge: the run is graded on the rest'}` : isJudgeOutput(j) && !j.right ? `judge: ${j.summary || 'wrong'}` : '',
      verdicts.get(r.id) === '?' ? 'no check and no judge: decide right or wrong' : '',
    ].filter(Boolean);
    return `- ${r.id}: ${reasons.join('; ')}`;
  });
  if (why.length) md.push('', ...why);
  // Judge repeats (docs/method.md#noise): the majority stands; where the asks disagreed, each is said next to the case.
  const split = results.filter((r) => disagreement(input.judge[r.id]) !== null).map((r) => {
    const asks = asksOf(input.judge[r.id]).map((a, i) => `ask ${i + 1}: ${a.error !== undefined ? `failed (${a.error})` : `${a.right ? 'right' : 'wrong'}${a.summary ? ` (${a.summary.replace(/\s+/g, ' ').trim()})` : ''}`}`);
    return `- ${r.id}: the judge disagreed with itself (${disagreement(input.judge[r.id])}); the majority stands: ${isJudgeOutput(input.judge[r.id]) && (input.judge[r.id] as JudgeOutput).right ? 'right' : 'wrong'}. ${asks.join('; ')}`;
  });
  if (split.length) md.push('', ...split);
  const undone = results.filter((r) => undoneBy(input.judge[r.id]).length > 0)
    .map((r) => `- ${r.id}: while its judge ran, a judge changed ${undoneBy(input.judge[r.id]).join(', ')} in the repository; put back (a judge may change nothing there)`);
  if (undone.length) md.push('', ...undone);

  if (input.previous) {
    const { fixed, broke } = compare(prevWrong, wrongSet, ids.filter((id) => prevIds.has(id) && !judgeVoids.includes(id)));
    const prevTokens = sum(input.previous.results, (r) => r.tokens);
    md.push('', `### Compared with ${input.previous.name}`, '');
    md.push(`- turned right: ${fixed.join(', ') || 'none'}`);
    md.push(`- turned wrong: ${broke.join(', ') || 'none'}`);
    md.push(`- tokens: ${fmt(prevTokens)} → ${fmt(tokens)} (${pct(tokens, prevTokens)}); llm calls ${fmt(sum(input.previous.results, (r) => r.llmCalls))} → ${fmt(sum(results, (r) => r.llmCalls))}`);
  }
  md.push('', '### Costly cases', '', costly.length ? costly.map((id) => `- ${id}: ${results.find((r) => r.id === id)!.llmCalls} llm calls (run median ${medianCalls})`).join('\n') : 'none');
  md.push('', '### Flaky cases', '', flaky.length ? flaky.map((id) => `- ${id}${disagree.includes(id) ? `: ${answersNote(outcomes.get(id)!)}` : ''}`).join('\n') : 'none');
  // Repeats in this run, and the history's right-rate where it is not all one way (docs/method.md#noise).
  const noisy = results.filter((r) => (r.repeats?.length ?? 0) > 0 || ((input.noise?.get(r.id)?.rate ?? 1) % 1 !== 0));
  if (noisy.length > 0) {
    md.push('', '### Noise', '', '<!-- Each case re-run here (its answers, first one first) or whose answers on this prose and memory disagree. -->');
    for (const r of noisy) {
      const o = outcomes.get(r.id)!;
      const h = input.noise?.get(r.id);
      const here = (r.repeats?.length ?? 0) > 0 ? `answers here ${o.answers.join(', ')}: ${o.rate === null ? 'none graded' : `${o.right}/${o.n} right`}, ${decidedBy(r)} ${o.verdict}; ` : '';
      md.push(`- ${r.id}: ${here}on this prose and memory ${h ? noiseLine(h) : 'nothing before'}`);
    }
  }
  md.push('', '### Regressed recheck cases', '', regressed.length ? regressed.map((id) => `- ${id}`).join('\n') : 'none');

  if (isFinal) {
    const { rule, cases } = finalOutcome!;
    const pct = (x: number) => `${Math.round(x * 100)}%`;
    md.push('', '## Final check', '', `- ${finalLine({ verdict, right: rule.right.length, total: selected.length, wrong: rule.wrong, stuck: rule.stuck, why: rule.why })}`);
    md.push(`- right: ${rule.right.length} of ${selected.length}${held ? ' (the selection)' : ''}: pass rate ${pct(rule.rate)}, 95% Wilson interval ${pct(rule.interval.low)}–${pct(rule.interval.high)}`);
    md.push(`- wrong (not stuck, not right in the majority of their answers): ${rule.wrong.join(', ') || 'none'}`, `- regressed from their batch: ${rule.regressed.join(', ') || 'none'}`, `- stuck (reported, not counted): ${rule.stuck.join(', ') || 'none'} (${pct(rule.stuckShare)} of the selection; maxStuckShare ${pct(input.final!.maxStuckShare ?? 0.2)})`);
    const repeated = cases.filter((c) => c.answers > 1);
    if (repeated.length > 0) {
      md.push('', '### Right-rates', '', 'A case wrong in the final check is run again; the majority of its answers decides.', '', '| case | answers | right-rate | decides |', '| --- | --- | --- | --- |');
      for (const c of repeated) md.push(`| ${c.id} | ${c.answers} | ${rateCell(c)} | ${c.verdict} |`);
    }
    if (held) {
      const wrongHeld = [...heldIds].filter((id) => verdicts.get(id) !== 'right');
      md.push('', '## Held-out', '', 'The held-out cases no batch used, tuned prose against the original prose (`git tune baseline`):', '');
      md.push(...renderSideBySide(sideBySide(held, input.final!.heldOut!.baseline)));
      md.push('', `- ${held.judgement.line}`, `- held-out cases not right: ${wrongHeld.join(', ') || 'none'}`);
    }
  } else if (run.half === 'nomem') {
    md.push('', '## Cost review', '');
    md.push(`- ${fmt(tokens)} tokens and ${fmt(sum(results, (r) => r.llmCalls))} llm calls for ${ids.length} cases (median ${medianCalls} llm calls a case).`);
    md.push(`- costly cases: ${costly.join(', ') || 'none'}.`);
    md.push('- If you see cost left to cut in the prose, write CORRECT instead of PASSED.');
  } else {
    md.push('', '## Memory review', '');
    const nm = input.passingNomem;
    const cost = nm ? memoryCost(results, nm.results, { with: input.noise, without: input.passingNoise }) : null;
    md.push(nm
      ? `- tokens with memory ${fmt(tokens)} vs without ${fmt(nm.tokens)} (${nm.name}): saving ${nm.tokens === 0 ? 'n/a' : `${Math.round((1 - tokens / nm.tokens) * 100)}%`}.`
      : `- tokens with memory ${fmt(tokens)}; no passing no-memory run to compare with.`);
    if (cost && (cost.margin !== 0.1 || results.some((r) => r.repeats?.length))) md.push(`- compared as medians of each case's answers: ${fmt(cost.tokens)} vs ${fmt(cost.without)}, noise margin ${Math.round(cost.margin * 100)}%: ${cost.ok ? 'not above' : 'above'} the no-memory run's.`);
    md.push(`- memory reads ${fmt(sum(results, (r) => r.memoryReads))}; memory writes ${fmt(sum(results, (r) => r.memoryWrites.added + r.memoryWrites.changed + r.memoryWrites.deleted))}; saved twice ${savedTwice}${savedTwice > 0 ? ' (must be 0 to pass: edit the memory policy)' : ''}.`);
  }
  if (!isFinal) {
    md.push('', '## Difficult', '', '<!-- One line each: `add <id> <reason>` (wrong, regressed, flaky, memory, costly) or `fix <id>`. `git tune grade` applies the lines still here. -->');
    for (const d of difficult) md.push(d.op === 'add' ? `add ${d.id} ${d.reason} — ${d.note}` : `fix ${d.id} — ${d.note}`);
  }
  md.push('', '## Proposals', '');
  if (proposals.length === 0) md.push('none');
  let file = '';
  for (const p of proposals) {
    if (p.file !== file) {
      if (file) md.push('');
      md.push(`### ${p.file}`, '');
      file = p.file;
    }
    md.push(`- \`${p.change.replace(/`/g, "'")}\`${p.why.length ? ` — why: ${p.why.join('; ')}` : ''}${p.expect.length ? `; expect: ${p.expect.join('; ')}` : ''} (cases: ${p.cases.join(', ')})`);
  }
  return { verdict, markdown: `${md.join('\n')}\n`, verdicts, difficult, costly, flaky, regressed, proposals, outcomes, ...(held ? { heldOut: held } : {}), ...(finalOutcome ? { final: finalOutcome } : {}) };
}

/** `2/4 right on the same prose (right, wrong, right, wrong)`. */
function answersNote(o: Outcome): string {
  return `its answers disagree on the same prose: ${o.right}/${o.n} right (${o.answers.join(', ')})`;
}

/** A final-check case by the majority of its answers (docs/method.md#noise). */
function finalCaseOf(result: CaseResult, judge: JudgeFile): FinalCase {
  const o = caseOutcome(result, judge);
  return { id: result.id, verdict: o.verdict, answers: o.n, right: o.right, rate: o.rate };
}

export interface ParsedFindings {
  verdict: Verdict | null;
  problems: string[];
  /** Case id → what the `### Cases` table says. */
  cases: Map<string, CaseVerdict>;
  review: { cost: boolean; memory: boolean };
}

const VERDICT_SET = new Set<string>(VERDICTS);

export function headings(markdown: string, level: number): string[] {
  const re = new RegExp(`^#{${level}}\\s+(.+?)\\s*#*\\s*$`);
  const out: string[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const m = re.exec(line);
    if (m && !line.startsWith('#'.repeat(level + 1))) out.push(m[1]!);
  }
  return out;
}

/** Replaces (or adds) the verdict heading: the first level-2 heading. */
export function setVerdict(markdown: string, verdict: Verdict): string {
  const lines = markdown.split('\n');
  const i = lines.findIndex((l) => /^##\s+\S/.test(l) && !l.startsWith('###'));
  if (i >= 0 && VERDICT_SET.has(lines[i]!.replace(/^##\s+/, '').trim())) {
    lines[i] = `## ${verdict}`;
    return lines.join('\n');
  }
  return `## ${verdict}\n\n${markdown}`;
}

export function parseFindings(markdown: string, caseIds: readonly string[]): ParsedFindings {
  const problems: string[] = [];
  const level2 = headings(markdown, 2);
  const verdictHeadings = level2.filter((h) => VERDICT_SET.has(h));
  let verdict: Verdict | null = null;
  if (level2.length === 0 || !VERDICT_SET.has(level2[0]!)) {
    problems.push(`the first level-2 heading must be the verdict, one of ${VERDICTS.join(', ')} (found ${level2[0] ? `"## ${level2[0]}"` : 'no level-2 heading'})`);
  } else if (verdictHeadings.length > 1) {
    problems.push(`the findings hold ${verdictHeadings.length} verdict headings (${verdictHeadings.join(', ')}): keep one`);
  } else verdict = level2[0] as Verdict;

  const cases = new Map<string, CaseVerdict>();
  const known = new Set(caseIds);
  // Only the results table says right or wrong: another table keyed by case (the final check's right-rates:
  // `| case | answers | right-rate | decides |`) is read past, so its counts are not taken for results.
  let otherTable = false;
  let inTable = false;
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const row = line.trim().startsWith('|');
    if (row && !inTable) otherTable = cells[1]?.toLowerCase() === 'case' && cells[2]?.toLowerCase() !== 'result';
    inTable = row;
    if (otherTable || cells.length < 4 || !known.has(cells[1]!)) continue;
    const v = cells[2]!.toLowerCase();
    const value: CaseVerdict | null = v === 'right' ? 'right' : v === 'wrong' ? 'wrong' : v === 'void' ? 'VOID' : v === '?' ? '?' : null;
    if (value === null) problems.push(`case ${cells[1]}: result must be right or wrong (found "${cells[2]}")`);
    else if (!cases.has(cells[1]!)) cases.set(cells[1]!, value);
  }
  return { verdict, problems, cases, review: { cost: level2.includes('Cost review'), memory: level2.includes('Memory review') } };
}
