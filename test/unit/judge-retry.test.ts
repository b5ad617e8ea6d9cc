import { describe, expect, it } from 'vitest';
import { classifyJudgeAttempt, JUDGE_BACKOFF_MS, nextJudgeTry, type JudgeAttempt, type JudgeProcessEnd } from '../../src/core/judge-retry.js';

/** Robust graders: what one call of the judge came to, and whether it is called again. */
const end = (over: Partial<JudgeProcessEnd>): JudgeProcessEnd => ({
  exitCode: 0, signal: null, timedOut: false, spawnError: null, output: '{"right": true}', printed: '', timeoutSec: 30, ...over,
});
const ok: JudgeAttempt = { kind: 'ok', output: { right: true, rubric: {}, evidence: {}, summary: '', caseOnly: false, proposals: [] } };
const bad: JudgeAttempt = { kind: 'unparsable', error: 'x' };
const failed: JudgeAttempt = { kind: 'failed', error: 'x' };

describe('classifyJudgeAttempt', () => {
  it('a good answer is ok; an answer that does not parse, or breaks the contract, is unparsable', () => {
    expect(classifyJudgeAttempt(end({}))).toMatchObject({ kind: 'ok', output: { right: true, proposals: [] } });
    expect(classifyJudgeAttempt(end({ output: '{"right": tr' }))).toMatchObject({ kind: 'unparsable', error: expect.stringMatching(/^the judge output is not JSON/) });
    expect(classifyJudgeAttempt(end({ output: '{"right": "yes"}' }))).toEqual({ kind: 'unparsable', error: 'the judge output does not match the contract: right: must be true or false' });
  });

  it("the judge's own failures: an exit code, a timeout, no output, a server's 429 or 5xx instead of an answer", () => {
    expect(classifyJudgeAttempt(end({ exitCode: 1, printed: 'out\ncalling the model\nHTTP 429 Too Many Requests\n' })))
      .toEqual({ kind: 'failed', error: 'the judge failed (exit 1): HTTP 429 Too Many Requests' });
    expect(classifyJudgeAttempt(end({ exitCode: null, signal: 'SIGKILL', timedOut: true }))).toEqual({ kind: 'failed', error: 'the judge timed out after 30s' });
    expect(classifyJudgeAttempt(end({ output: null }))).toEqual({ kind: 'failed', error: 'the judge wrote no output' });
    // Exit 0, but what it wrote is a gateway's error page: the judge's failure, not a bad answer.
    for (const page of ['<h1>503 Service Unavailable</h1>', 'error: status 502', 'rate limit exceeded, retry later', '{"error": {"code": 429}}']) {
      expect(classifyJudgeAttempt(end({ output: page }))).toMatchObject({ kind: 'failed', error: expect.stringContaining(`it says: ${page}`) });
    }
    // A number that is not a status does not make a bad answer a failure.
    expect(classifyJudgeAttempt(end({ output: 'I counted 500 tokens' }))).toMatchObject({ kind: 'unparsable' });
    // Exit 0 with a good answer is ok whatever it printed.
    expect(classifyJudgeAttempt(end({ printed: 'HTTP 429 once, then fine' }))).toMatchObject({ kind: 'ok' });
  });

  it('a judge that exits JUDGE_EXIT_DOWN (its key refused) is broken: not retried, the reason kept', () => {
    expect(classifyJudgeAttempt(end({ exitCode: 69, printed: 'judge preset: the key was refused: HTTP 401' }))).toEqual({
      kind: 'broken', error: 'the judge cannot work (exit 69, not retried): judge preset: the key was refused: HTTP 401',
    });
    expect(nextJudgeTry([classifyJudgeAttempt(end({ exitCode: 69 }))])).toEqual({ again: false });
  });

  it('a judge that cannot start is broken: calling it again would not help', () => {
    expect(classifyJudgeAttempt(end({ exitCode: null, spawnError: 'spawn nodex ENOENT' }))).toEqual({ kind: 'broken', error: 'the judge could not start: spawn nodex ENOENT' });
  });
});

describe('nextJudgeTry', () => {
  it('stops at a good answer or a judge that cannot start', () => {
    expect(nextJudgeTry([ok])).toEqual({ again: false });
    expect(nextJudgeTry([failed, ok])).toEqual({ again: false });
    expect(nextJudgeTry([{ kind: 'broken', error: 'x' }])).toEqual({ again: false });
    expect(nextJudgeTry([])).toEqual({ again: false });
  });

  it('asks once more, at once, when the output does not parse', () => {
    expect(nextJudgeTry([bad])).toEqual({ again: true, afterMs: 0 });
    expect(nextJudgeTry([bad, bad])).toEqual({ again: false });
  });

  it('retries a failing judge 3 times, waiting 1 s, 2 s, 4 s, then stops', () => {
    expect(JUDGE_BACKOFF_MS).toEqual([1000, 2000, 4000]);
    expect(nextJudgeTry([failed])).toEqual({ again: true, afterMs: 1000 });
    expect(nextJudgeTry([failed, failed])).toEqual({ again: true, afterMs: 2000 });
    expect(nextJudgeTry([failed, failed, failed])).toEqual({ again: true, afterMs: 4000 });
    expect(nextJudgeTry([failed, failed, failed, failed])).toEqual({ again: false });
  });

  it('the two allowances are separate: a re-ask does not use up a retry, nor a retry the re-ask', () => {
    expect(nextJudgeTry([bad, failed])).toEqual({ again: true, afterMs: 1000 });
    expect(nextJudgeTry([failed, bad])).toEqual({ again: true, afterMs: 0 });
    expect(nextJudgeTry([bad, failed, failed, failed, bad])).toEqual({ again: false });
    expect(nextJudgeTry([bad, failed, failed, failed, failed])).toEqual({ again: false });
  });
});
