/**
 * The final check as a rate (docs/method.md#noise): each case's right-rate
 * over its answers (the first and its repeats), the selection's pass rate
 * with a 95% Wilson interval, the held-out drop tested against the noise
 * (Newcombe's interval for a difference of two proportions), the VERIFIED
 * rule, and the one line every final report opens with. Pure.
 */

/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/** Wilson's score interval for k successes in n trials (95% unless told); [0, 1] when n is 0. */
export function wilson(k: number, n: number, z = Z95): Interval {
  if (n <= 0) return { low: 0, high: 1 };
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * Newcombe's hybrid score interval (his method 10, 1998) for p1 − p2 with
 * p1 = k1/n1 and p2 = k2/n2, from the two Wilson intervals: it keeps its
 * coverage on small samples and at rates of 0 or 1, where the plain normal
 * interval does not.
 */
export function newcombe(k1: number, n1: number, k2: number, n2: number, z = Z95): Interval & { diff: number } {
  const p1 = n1 > 0 ? k1 / n1 : 0;
  const p2 = n2 > 0 ? k2 / n2 : 0;
  const a = wilson(k1, n1, z);
  const b = wilson(k2, n2, z);
  const diff = p1 - p2;
  return {
    diff,
    low: diff - Math.sqrt((p1 - a.low) ** 2 + (b.high - p2) ** 2),
    high: diff + Math.sqrt((a.high - p1) ** 2 + (p2 - b.low) ** 2),
  };
}

/** The test the held-out comparison uses, named wherever its outcome is shown. */
export const DROP_TEST = "Newcombe's 95% interval for the difference of two rates";

export interface DropTest {
  /** baseline rate − tuned rate, and Newcombe's 95% interval for it. */
  diff: number;
  low: number;
  high: number;
  /** The drop is more than the noise explains: the whole interval lies above 0 (one-sided, 2.5%). */
  beyondNoise: boolean;
}

/** Whether `tunedRight` of `tunedCases` is worse than `baseRight` of `baseCases` beyond the noise (DROP_TEST). */
export function dropBeyondNoise(baseRight: number, baseCases: number, tunedRight: number, tunedCases: number): DropTest {
  const d = newcombe(baseRight, baseCases, tunedRight, tunedCases);
  return { diff: d.diff, low: d.low, high: d.high, beyondNoise: d.low > 0 };
}

/** One case of the final check: its majority outcome over its answers and its right-rate. */
export interface FinalCase {
  id: string;
  /** right, wrong, VOID or ? (the majority of its answers; docs/method.md#noise). */
  verdict: string;
  /** Graded answers (first + repeats) and how many were right. */
  answers: number;
  right: number;
  /** right / answers, or null when none was graded. */
  rate: number | null;
}

export interface FinalRuleInput {
  /** The selection's cases (held-out ones left out), in selection order. */
  cases: readonly FinalCase[];
  /** Stuck difficult entries of the selection (reported, not counted). */
  stuck: readonly string[];
  /** Case id → right in the last graded run of its batch. */
  rightInBatch: ReadonlyMap<string, boolean>;
  /** The most stuck cases a VERIFIED tuning may leave, as a share of the selection (maxStuckShare). */
  maxStuckShare: number;
  /** The held-out rule failed (docs/held-out.md). */
  heldOutFailed: boolean;
  /** A case could not be graded (VOID for the runner or the judge): the final check says nothing yet. */
  voids: number;
}

export interface FinalRule {
  verdict: 'VERIFIED' | 'FAILED' | 'VOID';
  /** The selection's size. */
  total: number;
  right: string[];
  /** Not right by the majority of their answers, and not stuck. */
  wrong: string[];
  stuck: string[];
  /** Wrong now, right in the last graded run of their batch. */
  regressed: string[];
  /** Cases right by majority / the selection, and its 95% Wilson interval. */
  rate: number;
  interval: Interval;
  stuckShare: number;
  /** Why it is not VERIFIED, one phrase each (empty when it is). */
  why: string[];
}

/**
 * VERIFIED: every case that is not stuck is right in the majority of its
 * answers, none regressed from its batch, the stuck cases are no more than
 * `maxStuckShare` of the selection, and the held-out rule holds.
 */
export function finalRule(input: FinalRuleInput): FinalRule {
  const stuck = new Set(input.stuck);
  const ids = input.cases.map((c) => c.id);
  const right = input.cases.filter((c) => c.verdict === 'right').map((c) => c.id);
  const notRight = input.cases.filter((c) => c.verdict !== 'right' && c.verdict !== 'VOID');
  const wrong = notRight.filter((c) => !stuck.has(c.id)).map((c) => c.id);
  const regressed = notRight.filter((c) => input.rightInBatch.get(c.id) === true).map((c) => c.id);
  const stuckHere = ids.filter((id) => stuck.has(id));
  const stuckShare = ids.length === 0 ? 0 : stuckHere.length / ids.length;
  const why: string[] = [];
  if (wrong.length > 0) why.push(`${wrong.length} case${wrong.length === 1 ? '' : 's'} not stuck and not right in the majority of ${wrong.length === 1 ? 'its' : 'their'} answers`);
  const regressedOnly = regressed.filter((id) => !wrong.includes(id));
  if (regressedOnly.length > 0) why.push(`regressed from their batch: ${regressedOnly.join(', ')}`);
  if (stuckShare > input.maxStuckShare) {
    why.push(`${stuckHere.length} of ${ids.length} cases are stuck (${pct(stuckShare)}), more than maxStuckShare ${pct(input.maxStuckShare)}: the tuning gave up on too much of its selection`);
  }
  if (input.heldOutFailed) why.push('the held-out set dropped beyond the noise');
  const verdict = input.voids > 0 ? 'VOID' : why.length === 0 ? 'VERIFIED' : 'FAILED';
  return { verdict, total: ids.length, right, wrong, stuck: stuckHere, regressed, rate: ids.length === 0 ? 0 : right.length / ids.length, interval: wilson(right.length, ids.length), stuckShare, why };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** What a final report's one line needs. */
export interface FinalCounts {
  verdict: string;
  right: number;
  total: number;
  wrong: readonly string[];
  stuck: readonly string[];
  /** Why a FAILED check is not VERIFIED (finalRule's `why`), when known. */
  why?: readonly string[];
}

/** The ids of a list, at most `max` of them, then how many more. */
export function idList(ids: readonly string[], max = 12): string {
  if (ids.length === 0) return 'none';
  return ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} and ${ids.length - max} more`;
}

/**
 * The line every final report shows next to its verdict:
 * `VERIFIED: 11 of 16 right (rate 69%, 95% CI 44–86%); wrong: none; stuck: c, d`.
 */
export function finalLine(c: FinalCounts): string {
  const ci = wilson(c.right, c.total);
  const rate = c.total === 0 ? '' : ` (rate ${pct(c.right / c.total)}, 95% CI ${Math.round(ci.low * 100)}–${pct(ci.high)})`;
  const because = c.verdict !== 'VERIFIED' && c.why && c.why.length > 0 ? ` — not VERIFIED: ${c.why.join('; ')}` : '';
  return `${c.verdict}: ${c.right} of ${c.total} right${rate}; wrong: ${idList(c.wrong)}; stuck: ${idList(c.stuck)}${because}`;
}

/** A case's right-rate as shown: `2/3 right (67%)`. */
export function rateCell(c: Pick<FinalCase, 'answers' | 'right' | 'rate'>): string {
  return c.rate === null ? 'not graded' : `${c.right}/${c.answers} right (${pct(c.rate)})`;
}
