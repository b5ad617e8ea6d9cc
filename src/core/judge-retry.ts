import { JUDGE_EXIT_DOWN, judgeOutputSchema, type JudgeOutput } from '../contracts/judge.js';

/**
 * Robust graders (docs/grading.md): what one call of the judge came to, and
 * whether to call it again. A judge whose output does not parse is asked
 * once more, at once; a judge that fails for its own reasons (an exit code, a
 * timeout, no output, HTTP 429 or 5xx in what it printed) is retried up to 3
 * times, waiting 1 s, 2 s, 4 s; a judge that cannot start, or that exits
 * JUDGE_EXIT_DOWN (its key is refused), is not retried.
 * A case whose judge still fails is VOID for the judge. Pure.
 */
export type JudgeAttempt =
  | { kind: 'ok'; output: JudgeOutput }
  | { kind: 'unparsable'; error: string }
  | { kind: 'failed'; error: string }
  | { kind: 'broken'; error: string };

export interface JudgeProcessEnd {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError: string | null;
  /** TUNE_OUTPUT's text, or null when the judge wrote none. */
  output: string | null;
  /** What it printed (the end of stdout and stderr), to tell a rate limit from a bad answer. */
  printed: string;
  timeoutSec: number;
}

export const JUDGE_BACKOFF_MS = [1000, 2000, 4000] as const;
/** How many times an unparsable output is asked again. */
export const JUDGE_REASKS = 1;

/** HTTP 429 or 5xx, or a rate limit, named in a judge's output or logs. */
export const SERVER_TROUBLE = /\b(?:HTTP\/?[\d.]*|status|code)\s*[:=]?\s*(?:429|5\d\d)\b|\b429\b|too many requests|rate.?limit|service unavailable|bad gateway|gateway time-?out|internal server error/i;

const lastLine = (text: string) => text.trim().split('\n').filter(Boolean).slice(-1)[0]?.slice(0, 200) ?? '';

export function classifyJudgeAttempt(end: JudgeProcessEnd): JudgeAttempt {
  if (end.spawnError) return { kind: 'broken', error: `the judge could not start: ${end.spawnError}` };
  if (end.timedOut) return { kind: 'failed', error: `the judge timed out after ${end.timeoutSec}s` };
  const said = lastLine(end.printed);
  if (end.exitCode === JUDGE_EXIT_DOWN) {
    return { kind: 'broken', error: `the judge cannot work (exit ${JUDGE_EXIT_DOWN}, not retried)${said ? `: ${said}` : ''}` };
  }
  if (end.exitCode !== 0) {
    return { kind: 'failed', error: `the judge failed (exit ${end.exitCode ?? end.signal})${said ? `: ${said}` : ''}` };
  }
  if (end.output === null) return { kind: 'failed', error: `the judge wrote no output${said ? `: ${said}` : ''}` };
  let value: unknown;
  try {
    value = JSON.parse(end.output);
  } catch (err) {
    return troubleOr(end, `the judge output is not JSON (${(err as Error).message})`);
  }
  const parsed = judgeOutputSchema.safeParse(value);
  if (!parsed.success) {
    return troubleOr(end, `the judge output does not match the contract: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'output'}: ${i.message}`).join('; ')}`);
  }
  return { kind: 'ok', output: parsed.data };
}

/** An answer that does not parse because a server refused the judge is the judge's failure, not a bad answer. */
function troubleOr(end: JudgeProcessEnd, error: string): JudgeAttempt {
  const line = `${end.output ?? ''}\n${end.printed}`.split('\n').find((l) => SERVER_TROUBLE.test(l));
  return line === undefined ? { kind: 'unparsable', error } : { kind: 'failed', error: `${error}; it says: ${line.trim().slice(0, 200)}` };
}

/** After these attempts (oldest first): stop, or call the judge again after `afterMs`. */
export function nextJudgeTry(attempts: readonly JudgeAttempt[]): { again: false } | { again: true; afterMs: number } {
  const last = attempts[attempts.length - 1];
  if (!last || last.kind === 'ok' || last.kind === 'broken') return { again: false };
  if (last.kind === 'unparsable') {
    const reasks = attempts.filter((a) => a.kind === 'unparsable').length - 1;
    return reasks < JUDGE_REASKS ? { again: true, afterMs: 0 } : { again: false };
  }
  const retries = attempts.filter((a) => a.kind === 'failed').length - 1;
  return retries < JUDGE_BACKOFF_MS.length ? { again: true, afterMs: JUDGE_BACKOFF_MS[retries]! } : { again: false };
}
