import { describe, expect, it } from 'vitest';
import type { JudgeFile } from '../../src/contracts/judge.js';
import { disagreement, majorityOfAsks } from '../../src/core/judge-majority.js';

type Entry = JudgeFile[string];
const said = (right: boolean, summary = right ? 'says it' : 'misses it'): Entry => ({ right, rubric: {}, evidence: {}, summary, caseOnly: false, proposals: [] });
const failed = (error = 'the judge failed (exit 3) (4 tries)'): Entry => ({ error, tries: 4 });

describe('judge repeats: the majority of the asks about one answer (docs/method.md#noise)', () => {
  it('one ask: its output as it is, nothing recorded beside it', () => {
    expect(majorityOfAsks([said(true)])).toEqual(said(true));
    expect(majorityOfAsks([failed()])).toEqual(failed());
    expect(disagreement(said(true))).toBeNull();
  });

  it('the majority stands, from an ask that voted with it, every ask recorded', () => {
    const entry = majorityOfAsks([said(false, 'misread'), said(true, 'first right'), said(true, 'second right')]);
    expect(entry).toMatchObject({ right: true, summary: 'first right' });
    expect((entry as unknown as { asks: unknown }).asks).toEqual([{ right: false, summary: 'misread' }, { right: true, summary: 'first right' }, { right: true, summary: 'second right' }]);
    expect(disagreement(entry)).toBe('2 of 3 asks right, 1 wrong');
    // Asks that agree: recorded, no disagreement.
    expect(disagreement(majorityOfAsks([said(true), said(true), said(true)]))).toBeNull();
  });

  it('a tie is wrong; a failed ask does not vote; none answered keeps the last error (VOID for the judge)', () => {
    expect(majorityOfAsks([said(true), said(false)])).toMatchObject({ right: false, summary: 'misses it' });
    const oneFailed = majorityOfAsks([said(true), failed(), said(true)]);
    expect(oneFailed).toMatchObject({ right: true });
    expect(disagreement(oneFailed)).toBe('2 of 3 asks right, 1 failed');
    const none = majorityOfAsks([failed('first'), failed('second')]);
    expect(none).toMatchObject({ error: 'second', asks: [{ error: 'first' }, { error: 'second' }] });
    expect('right' in none).toBe(false);
  });

  it('files a judge changed are kept from every ask', () => {
    const entry = majorityOfAsks([{ ...said(true), undone: ['a.md'] } as Entry, { ...said(true), undone: ['b.md'] } as Entry, said(false)]);
    expect(entry).toMatchObject({ right: true, undone: ['a.md', 'b.md'] });
  });
});
