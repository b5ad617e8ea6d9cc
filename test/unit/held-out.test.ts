import { describe, expect, it } from 'vitest';
import { draftFindings } from '../../src/core/findings.js';
import { describeQuote, heldOutClashes, heldOutQuotes, judgeHeldOut, type HeldOutInput } from '../../src/core/held-out.js';
import { formatScore, parseScore } from '../../src/core/steps.js';

/** The held-out rules (docs/held-out.md): clashes, quotes in an edit, the drop rule and its place in the final check's verdict. */
const HELD = [
  { id: 'h-01', input: 'How long is the refund window for annual plans?' },
  { id: 'refund', input: { messages: [{ text: 'Please cancel my order number 5521 today' }] } },
  { id: 'h-03', input: 'short' },
];
const score = (right: number, cases: number) => ({ right, cases, tokens: cases * 100, costUsd: cases / 1000 });

describe('heldOutClashes', () => {
  it('names a shared id and a shared input (JSON compared canonically), each once', () => {
    expect(heldOutClashes(
      [{ id: 'h-01', input: 'other' }, { id: 'q-9', input: { b: 1, a: [2] } }],
      [{ id: 'h-01', input: 'new' }, { id: 'h-02', input: { a: [2], b: 1 } }, { id: 'h-04', input: { a: [2] } }],
    )).toEqual(['held-out case h-01 has the id of dataset case h-01', 'held-out case h-02 has the same input as dataset case q-9']);
  });
});

describe('heldOutQuotes', () => {
  it('finds an id as a whole token and an input of 20 characters or more, at its line', () => {
    const quotes = heldOutQuotes([
      { file: 'agents/a.md', blocks: [{ line: 3, text: 'Keep calm.\nLike in h-01, say 30 days.\n' }, { line: 20, text: 'About `refund` cases.\n' }] },
      { file: 'agents/b.md', blocks: [{ line: 7, text: 'Example:\nPlease cancel my order number 5521 today\n' }] },
      // Not quotes: an id inside a longer one, a short input, a bare word that is an id.
      { file: 'agents/c.md', blocks: [{ line: 1, text: 'see h-01b and xh-03; say short; a refund is fine\n' }] },
    ], HELD);
    expect(quotes.map(describeQuote)).toEqual([
      'agents/a.md line 4: names held-out case h-01',
      'agents/a.md line 20: names held-out case refund',
      'agents/b.md line 8: quotes the input of held-out case refund ("Please cancel my order number 5521 today")',
    ]);
  });
});

describe('judgeHeldOut', () => {
  const input = (over: Partial<HeldOutInput> = {}): HeldOutInput => ({
    ids: ['h-01', 'h-02', 'h-03'], baseline: { selection: score(2, 4), heldOut: score(3, 3) }, maxDrop: 1, unchecked: null, ...over,
  });
  it('fails past maxDrop cases, not at it', () => {
    expect(judgeHeldOut(score(2, 3), input())).toMatchObject({ checked: true, drop: 1, failed: false });
    expect(judgeHeldOut(score(0, 3), input())).toMatchObject({ checked: true, drop: 3, failed: true, line: expect.stringContaining("Newcombe's 95% interval") });
    expect(judgeHeldOut(score(3, 3), input({ maxDrop: 0 }))).toMatchObject({ drop: 0, failed: false, line: expect.stringContaining('no drop') });
  });
  it('fails only on a drop beyond the noise: past maxDrop, and Newcombe\'s interval above 0', () => {
    // 3/3 → 1/3: two cases past maxDrop 0, but three cases cannot tell that from noise (the interval reaches below 0).
    const small = judgeHeldOut(score(1, 3), input({ maxDrop: 0 }));
    expect(small).toMatchObject({ drop: 2, failed: false, line: expect.stringContaining('within the noise (the interval reaches 0)') });
    // 40/40 → 30/40: ten cases fewer is beyond the noise; 40/40 → 38/40 is not.
    const big = (right: number) => judgeHeldOut(score(right, 40), input({ baseline: { selection: score(2, 4), heldOut: score(40, 40) }, maxDrop: 0 }));
    expect(big(30).failed).toBe(true);
    expect(big(38).failed).toBe(false);
    // maxDrop still holds: a drop beyond the noise but within maxDrop passes.
    expect(judgeHeldOut(score(0, 3), input({ maxDrop: 3 })).failed).toBe(false);
  });
  it('without a baseline it checks nothing and says why', () => {
    const j = judgeHeldOut(score(0, 3), input({ baseline: null, unchecked: 'no baseline yet' }));
    expect(j).toEqual({ checked: false, drop: 0, failed: false, line: 'held-out drop not checked: no baseline yet' });
  });
  it('a score round-trips through its trailer value', () => {
    const s = { right: 7, cases: 12, tokens: 123456, costUsd: 0.012345 };
    expect(formatScore(s)).toBe('7/12 right, 123456 tokens, $0.012345');
    expect(parseScore(formatScore(s))).toEqual(s);
    expect(parseScore('7 of 12')).toBeNull();
  });
});

describe('the final check with a held-out set', () => {
  const result = (id: string, right: boolean) => ({
    id, status: 'ok', right, answer: 'x', checks: [], tokens: 10, costUsd: 0.001, llmCalls: 1, toolCalls: 0, memoryReads: 0,
    memoryWrites: { added: 0, changed: 0, deleted: 0, savedTwice: 0 }, durationMs: 1, startedAt: '2026-01-01T00:00:00Z',
  }) as unknown as Parameters<typeof draftFindings>[0]['results'][number];
  const draft = (heldRight: boolean[], held: Partial<HeldOutInput> = {}) => draftFindings({
    run: { name: 'final-check', batch: 0, half: null, number: 1 },
    results: [result('s-1', true), result('s-2', true), ...heldRight.map((r, i) => result(`h-${i}`, r))],
    judge: {}, previous: null, passingNomem: null, recheck: [], difficult: { onList: [], open: [] }, aimedSince: [],
    final: {
      stuck: [], rightInBatch: new Map([['s-1', true], ['s-2', true]]),
      heldOut: { ids: heldRight.map((_, i) => `h-${i}`), baseline: { selection: score(1, 2), heldOut: score(2, 2) }, maxDrop: 0, unchecked: null, ...held },
    },
  });
  it('held-out cases wrong do not break the selection\'s rule; a drop past maxDrop and beyond the noise does', () => {
    expect(draft([true, true]).verdict).toBe('VERIFIED');
    expect(draft([false, false]).verdict).toBe('FAILED');
    expect(draft([false, false], { maxDrop: 2 }).verdict).toBe('VERIFIED');
    // One of two fewer is past maxDrop 0, but two cases cannot tell it from noise.
    expect(draft([true, false]).verdict).toBe('VERIFIED');
    // Without a baseline, held-out cases wrong fail nothing.
    expect(draft([false, false], { baseline: null, unchecked: 'no baseline yet' }).verdict).toBe('VERIFIED');
    const md = draft([true, false]).markdown;
    expect(md).toContain('- right: 2 of 2 (the selection)');
    expect(md).toMatch(/\| held-out \| 1\/2 \| 2\/2 \|/);
    expect(md).toContain('- held-out cases not right: h-1');
  });
});
