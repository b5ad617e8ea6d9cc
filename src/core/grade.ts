import { basisRun } from './basis.js';
import { difficultFileAfter, type DifficultInput } from './difficult-file.js';
import { viewDifficult } from './difficult.js';
import { parseDifficultLines, type DifficultLines } from './difficult-lines.js';
import { finalLine, type FinalRule } from './final-rate.js';
import { parseFindings, setVerdict } from './findings.js';
import { settleAtGrade, type EditState, type GradeSettlement, type RunState, type TuningState } from './fold.js';
import { latestBatchRun } from './next.js';
import { matcher } from './glob.js';
import { proseDigestOf } from './prose-digest.js';
import { isRefusal, refusal, type Refusal } from './refusal.js';
import { revertCommits, type RevertRead } from './revert.js';
import { passedRuleBreaks, reviewHeading } from './rules.js';
import { VERDICTS, type DifficultChange, type Keep, type Score, type Step, type StepCommitData, type Verdict } from './steps.js';

/**
 * `git tune grade`'s rules (docs/method.md#grading, docs/method.md#edits): which run it grades, whether the
 * finished findings can be recorded, which edits the grade settles (reverts
 * or keeps), and the grade step. Pure, and in one call (`planGrade`): the
 * app gathers what a grade reads (`GradeEvidence`: the findings or their
 * draft, the judge's verdicts, the edits it may revert, the prose and the
 * difficult list's file), core decides the verdict, the reverts, the
 * difficult entries and the commits as data, and the app writes that chain
 * once.
 */

/** The run to grade: the one named, or the latest run (the final check once it exists). */
export function gradeRun(state: TuningState, name?: string): RunState | Refusal {
  const run = name ? state.runs.get(name) : (state.final[state.final.length - 1] ?? latestBatchRun(state));
  if (!run) return refusal('history', 'no-run', name ? `there is no run ${name}` : 'no run to grade yet', 'git tune next');
  if (!run.finished) return refusal('history', 'run-not-finished', `${run.name} has not finished`, run.half === null ? 'git tune final' : 'git tune run');
  return run;
}

/** `--verdict X`, any case: one of the verdicts (undefined: none given). */
export function parseVerdictOption(text: string | undefined): Verdict | undefined | Refusal {
  if (text === undefined) return undefined;
  const v = text.trim().toUpperCase();
  if (!(VERDICTS as readonly string[]).includes(v)) {
    return refusal('usage', 'bad-verdict', `"${text}" is not a verdict; use one of ${VERDICTS.join(', ')}`, 'git tune grade --verdict PASSED');
  }
  return v as Verdict;
}

/** `--keep` needs `--why`, and the why is one line of the history; `--why` alone keeps nothing. */
export function keepOptionsRefusal(keep: readonly string[], why: string | undefined): Refusal | null {
  if (keep.length > 0 && !why?.trim()) {
    return refusal('usage', 'keep-without-why', 'keeping an unconfirmed edit on purpose needs a reason: the history records who kept it and why', `git tune grade --keep ${keep[0]} --why "what it does that no run could show"`);
  }
  if (keep.length === 0 && why !== undefined) {
    return refusal('usage', 'why-without-keep', '--why says why an edit is kept: name the edit with --keep', 'git tune grade --keep <commit> --why "…"');
  }
  return null;
}

/** Why a grade reverts an edit: the run did not confirm it, or its half closed before any run tried it. */
export function settleReason(edit: EditState, run: RunState): string {
  return edit.untried ? `${edit.settledBy ?? 'no run tried it'}, and the grade of ${run.name} settles it` : `not confirmed by ${run.name}`;
}

export interface FindingsInput {
  state: TuningState;
  run: RunState;
  /** The findings file, for messages. */
  file: string;
  /** Its text, the `--verdict` already set. */
  text: string;
  keep: readonly string[];
  maxRuns: number;
  maxRetries: number;
  /** The prose the branch holds once this grade's reverts land (src/core/basis.ts): PASSED's rule (c) reads the run of it. */
  prose?: string | null;
}

export interface GradeDecision {
  verdict: Verdict;
  wrong: string[];
  /** The `### Review` section's answer this grade records (cost, or memory for a with-memory run). */
  review: boolean;
  /** The `## Difficult` lines that change the list now (a regrade's applied ones dropped), and their notes. */
  difficult: DifficultChange[];
  notes: Map<string, string[]>;
  /** The edits this grade reverts (each a revert commit before it) and keeps on purpose. */
  settlement: GradeSettlement;
  /** Cases known flaky in this run (added as flaky now, or listed flaky): none of them unconfirms an edit that fixed its aim (docs/method.md#noise). */
  flaky: string[];
}

/** Whether finished findings can be recorded as the run's grade, and what the grade settles. */
export function decideGrade(input: FindingsInput): GradeDecision | Refusal {
  const decision = settleFindings(input);
  if (isRefusal(decision)) return decision;
  return passedRefusal(input, decision) ?? decision;
}

/** The findings read and checked, and the edits they settle; PASSED's rules are `passedRefusal`'s. */
function settleFindings(input: FindingsInput): GradeDecision | Refusal {
  const { state, run, file, text, keep } = input;
  const parsed = parseFindings(text, run.cases);
  const problems = [...parsed.problems];
  const missing = run.cases.filter((id) => !parsed.cases.has(id));
  if (missing.length > 0) problems.push(`the \`### Cases\` table has no row for ${missing.join(', ')}`);
  const unknown = [...parsed.cases].filter(([, v]) => v === '?').map(([id]) => id);
  if (unknown.length > 0) problems.push(`no result for ${unknown.join(', ')}: write right or wrong in its result column`);
  const verdict = parsed.verdict;
  if (verdict && run.half === null && verdict !== 'VERIFIED' && verdict !== 'FAILED' && verdict !== 'VOID') {
    problems.push(`the final check's verdict is VERIFIED, FAILED or VOID (found ${verdict})`);
  }
  if (verdict && run.half !== null && (verdict === 'VERIFIED' || verdict === 'FAILED')) {
    problems.push(`${verdict} is the final check's verdict; a batch run is PASSED, PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT or VOID`);
  }
  const lines = findingsDifficultLines(run, text);
  // A regrade reads findings whose lines were applied by the first grade: those change nothing now.
  const listed = viewDifficult(state, input.maxRetries);
  const difficult = lines.changes.filter((c) => {
    const entry = listed.find((e) => e.id === c.id);
    if (c.op === 'add') return !(entry && entry.status !== 'fixed' && entry.reason === c.reason);
    return !(entry && entry.status === 'fixed');
  });
  problems.push(...lines.problems);
  if (problems.length > 0 || !verdict) {
    return refusal('usage', 'bad-findings', `${file} cannot be recorded (${problems.length} problem${problems.length === 1 ? '' : 's'})`, `fix ${file}, then: git tune grade`, problems);
  }
  const wrong = [...parsed.cases].filter(([, v]) => v === 'wrong').map(([id]) => id);
  // Edits settle at grading: what the run did not confirm is reverted before the grade commit, unless kept.
  const flaky = flakyAtGrade(state, run, difficult);
  const settlement = settleAtGrade(state, run, wrong, verdict, keep, flaky);
  if (settlement.problems.length > 0) {
    return refusal('usage', 'bad-keep', `--keep names ${settlement.problems.length === 1 ? 'an edit' : 'edits'} this grade cannot keep`, 'git tune status   # lists each edit and where it stands', settlement.problems);
  }
  const review = run.half === 'mem' ? parsed.review.memory : parsed.review.cost;
  return { verdict, wrong, review, difficult, notes: lines.notes, settlement, flaky };
}

/** PASSED's rules (src/core/rules.ts) on a decision: the refusal when one breaks. */
function passedRefusal(input: FindingsInput, d: GradeDecision): Refusal | null {
  const { state, run } = input;
  if (d.verdict !== 'PASSED') return null;
  const settling = [...d.settlement.revert, ...d.settlement.keep].map((e) => e.oid);
  // Rule (c) counts the difficult lines this grade applies.
  const added = d.difficult
    .filter((c): c is Extract<DifficultChange, { op: 'add' }> => c.op === 'add')
    .map((c, i) => ({ id: c.id, reason: c.reason, batch: run.batch, fixed: false, index: Number.MAX_SAFE_INTEGER - i }));
  const withAdded = { ...state, difficult: [...state.difficult, ...added] };
  const breaks = passedRuleBreaks({
    state: withAdded, run, maxRuns: input.maxRuns, maxRetries: input.maxRetries, review: d.review, wrong: d.wrong, settling, flaky: d.flaky,
    ...(input.prose !== undefined ? { prose: input.prose } : {}),
  });
  if (breaks.length === 0) return null;
  return refusal('history', 'passed-refused', `PASSED is refused for ${run.name}`, breaks[0]!.fix,
    breaks.map((b) => `rule ${b.rule}: ${b.message} (fix: ${b.fix})${b.rule === 'review' ? `; the section is \`${reviewHeading(run)}\`` : ''}`));
}

/** The run's cases known flaky at its grade: the findings add them as `flaky`, or the list holds them so. */
export function flakyAtGrade(state: TuningState, run: RunState, difficult: readonly DifficultChange[]): string[] {
  if (run.half === null) return [];
  const added = difficult.filter((d) => d.op === 'add' && d.reason === 'flaky').map((d) => d.id);
  const listed = state.difficult.filter((d) => !d.fixed && d.reason === 'flaky').map((d) => d.id);
  return [...new Set([...added, ...listed])].filter((id) => run.cases.includes(id)).sort();
}

/** The grade step: its trailers, and a subject that says the verdict (and the one it replaces). */
export function gradeStep(tuning: string, run: RunState, d: GradeDecision, keep: Keep | undefined, heldOut?: Score, prose?: string): { step: Step; subject: string; body: string } {
  const regrade = run.grade ? ` (was ${run.grade.verdict})` : '';
  return {
    step: {
      step: 'grade', tuning, run: run.name, verdict: d.verdict, wrong: d.wrong, review: d.review, difficult: d.difficult,
      ...(keep ? { keep } : {}),
      // Only a first grade settles edits; a regrade's flaky cases change nothing.
      ...(d.flaky.length > 0 && !run.grade ? { flaky: d.flaky } : {}),
      // The final check's held-out set (docs/held-out.md): the README and the PR comment read it from here.
      ...(heldOut && run.half === null ? { heldOut } : {}),
      // The prose the branch holds after this grade: the half passes on a run of it (src/core/basis.ts).
      ...(prose !== undefined ? { prose } : {}),
    },
    subject: `tune(${tuning}): grade ${run.name} ${d.verdict}${regrade}: ${run.cases.length - d.wrong.length}/${run.cases.length} right${heldOut && run.half === null ? `, held-out ${heldOut.right}/${heldOut.cases}` : ''}`,
    body: keep ? `Kept on purpose by ${keep.by}, though unconfirmed: ${keep.edits.map((o) => o.slice(0, 7)).join(', ')}.\n\n${keep.why}` : '',
  };
}

/**
 * What a grade reads before it decides (src/app/grade.ts gathers it): the
 * findings (the working tree's, or a draft: the final check grades itself
 * from its checks and the judge), the judge's verdicts, who keeps an edit and
 * why, the difficult list's file, the edits the grade may revert as read, and
 * the prose files at the tip.
 */
export interface GradeEvidence {
  state: TuningState;
  run: RunState;
  findings: { path: string; text: string };
  /** judge.json, recorded with the grade when there is one. */
  judge: { path: string; text: string | null };
  /** `--verdict`: set in the findings before they are read. */
  forced?: Verdict;
  keep: readonly string[];
  /** Who keeps the edits `keep` names, and why (given with `--keep`). */
  keeper?: { by: string; why: string };
  maxRuns: number;
  maxRetries: number;
  /** The final check's draft: its held-out score and lines, and its rule's outcome. */
  final?: { heldOut?: Score; heldLines?: string[]; rule?: FinalRule };
  /** The list's file and the dataset; null when the findings change nothing on the list. */
  difficult: DifficultInput | null;
  /** The edits this grade may revert (`gradeCandidates`, src/core/fold.ts), read. */
  edits: RevertRead;
  /** A batch run's grade names the prose the branch holds once its reverts land: the prose files at the tip and their globs. */
  prose: { files: ReadonlyMap<string, string>; globs: readonly string[] } | null;
}

/**
 * The difficult-list lines of a run's findings: a batch run's only (the
 * final check changes no list). The grade reads the list's file only when
 * there are some (`GradeEvidence.difficult`).
 */
export function findingsDifficultLines(run: RunState, text: string): DifficultLines {
  return run.half === null ? { changes: [], problems: [], notes: new Map<string, string[]>() } : parseDifficultLines(text);
}

/** A grade as data: what it decided, and the chain it writes (its reverts, then the grade commit). */
export interface GradePlan {
  decision: GradeDecision;
  commits: StepCommitData[];
  /** The reverted edits, in the order of their commits (the first commits of the chain). */
  reverted: Array<{ edit: EditState; files: string[]; why: string }>;
  keep?: Keep;
  /** The run the half passes on when it is not the graded run (the reverts changed the prose); null: no run of the half saw that prose. */
  basis: RunState | null;
  /** The final check: right / wrong / stuck, the rate and its interval, next to the verdict recorded. */
  finalLine?: string;
}

/** A grade's decision and its chain, from what it read; a refusal writes nothing. */
export function planGrade(e: GradeEvidence): GradePlan | Refusal {
  const { state, run } = e;
  const text = e.forced ? setVerdict(e.findings.text, e.forced) : e.findings.text;
  const input: FindingsInput = { state, run, file: e.findings.path, text, keep: e.keep, maxRuns: e.maxRuns, maxRetries: e.maxRetries };
  const decision = settleFindings(input);
  if (isRefusal(decision)) return decision;
  const { settlement } = decision;
  const why = (edit: EditState) => settleReason(edit, run);
  const reverts = revertCommits(state.tuning, settlement.revert, e.edits, {
    reason: why,
    conflict: (edit, file) => ({
      context: `the grade of ${run.name} is not recorded: it reverts the edits its run left unconfirmed, and `,
      hint: `git tune grade --run ${run.name} --keep ${edit.oid.slice(0, 7)} --why "…"   # keep it on purpose; or: git revert ${edit.oid.slice(0, 7)}, resolve the files it stops on (${file}, and the run's changes.md when a later edit added to it), commit, then git tune grade`,
    }),
  });
  if (isRefusal(reverts)) return reverts;
  // The prose the branch holds once the reverts land: a half passes on a run of it (src/core/basis.ts), so PASSED is checked against that run.
  const prose = e.prose === null ? undefined : proseDigestOf(e.prose.files, matcher(e.prose.globs), reverts.commits.flatMap((c) => [...c.changes]));
  const refused = passedRefusal({ ...input, ...(prose !== undefined ? { prose } : {}) }, decision);
  if (refused) return refused;
  const changes = new Map<string, { content: string }>([[e.findings.path, { content: text }]]);
  const fromWorktree = new Set([e.findings.path]);
  if (e.judge.text !== null) {
    changes.set(e.judge.path, { content: e.judge.text });
    fromWorktree.add(e.judge.path);
  }
  if (decision.difficult.length > 0) {
    if (e.difficult === null) throw new Error(`planGrade: the findings of ${run.name} change the difficult list, which was not read`);
    const after = difficultFileAfter(e.difficult, decision.difficult, decision.notes);
    if (isRefusal(after)) return after;
    changes.set(after.path, { content: after.content });
  }
  const keep = settlement.keep.length > 0 && e.keeper ? { edits: settlement.keep.map((k) => k.oid), ...e.keeper } : undefined;
  const heldOut = e.final?.heldOut;
  const grade: StepCommitData = { ...gradeStep(state.tuning, run, decision, keep, heldOut, prose), changes, fromWorktree };
  const rule = e.final?.rule;
  const { verdict } = decision;
  return {
    decision,
    commits: [...reverts.commits, grade],
    reverted: reverts.reverted.map((r) => ({ ...r, why: why(r.edit) })),
    ...(keep ? { keep } : {}),
    basis: verdict === 'PASSED' && prose !== undefined ? basisRun(state, run, prose) : run,
    ...(rule ? {
      finalLine: finalLine({ verdict, right: rule.right.length, total: rule.total, wrong: rule.wrong, stuck: rule.stuck, why: verdict === 'VERIFIED' ? [] : rule.why }),
    } : {}),
  };
}
