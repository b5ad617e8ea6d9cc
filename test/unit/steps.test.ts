import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../src/core/trailers.js';
import { formatIds, formatStep, parseIds, parseStep, sealMessage, sealOf, STEP_KINDS, type Step } from '../../src/core/steps.js';

const base = { tuning: 'demo', difficult: [] };

/** One step of every kind, with the optional parts both present and absent. */
const steps: Step[] = [
  { ...base, step: 'init' },
  { ...base, step: 'config', keys: ['maxBatch', 'runner.command'] },
  { ...base, step: 'config', keys: [] },
  { ...base, step: 'dataset', cases: 64, rev: '0123456789ab' },
  { ...base, step: 'select', selected: 40, total: 64 },
  { ...base, step: 'plan', batch: 2, size: 6, kind: 'new', new: ['a', 'b', 'c'], recheck: ['x', 'y'] },
  { ...base, step: 'plan', batch: 5, size: 2, kind: 'difficult', new: ['hard-1'], recheck: [] },
  { ...base, step: 'run-plan', run: 'batch03-nomem-run2' },
  { ...base, step: 'run-start', run: 'batch03-nomem-run2', concurrency: 8 },
  {
    ...base, step: 'run', run: 'batch03-nomem-run2', concurrency: 8, cases: 9, void: null, stopped: null,
    tokens: 123456, costUsd: 0.004, prose: 'a1b2c3', repeatTokens: 2000,
  },
  {
    ...base, step: 'run', run: 'final-check', concurrency: 16, cases: 40, void: 'exit 137 in 3 cases',
    stopped: 'sandbox down', tokens: 0, costUsd: 1.5,
  },
  { ...base, step: 'run-stop', run: 'batch03-nomem-run2', reason: 'budget: $5.10 of $5.00 spent', tokens: 5000, costUsd: 5.1 },
  { ...base, step: 'grade', run: 'batch03-mem-run1', verdict: 'NO CHANGE', wrong: ['a', 'b'], review: false },
  { ...base, step: 'grade', run: 'batch03-mem-run1', verdict: 'PASSED', wrong: [], review: true },
  { ...base, step: 'grade', run: 'final-check', verdict: 'VERIFIED', wrong: [], review: true },
  { ...base, step: 'edit', run: 'batch03-nomem-run2', aims: null },
  { ...base, step: 'edit', run: 'batch03-nomem-run2', aims: ['a'] },
  { ...base, step: 'edit', run: 'batch03-nomem-run2', aims: [] },
  { ...base, step: 'revert', reverts: ['1111111111111111111111111111111111111111', '2222222222222222222222222222222222222222'] },
  { ...base, step: 'difficult', difficult: [{ op: 'add', id: 'a', reason: 'flaky' }, { op: 'fix', id: 'b' }] },
  { ...base, step: 'candidate', run: 'batch03-nomem-run2' },
  { ...base, step: 'checkpoint', batch: 3 },
  { ...base, step: 'note' },
  { ...base, step: 'dataset', cases: 64, rev: '0123456789ab', heldOut: { cases: 12, rev: 'ba9876543210' } },
  { ...base, step: 'grade', run: 'final-check', verdict: 'FAILED', wrong: [], review: false, heldOut: { right: 3, cases: 12, tokens: 4500, costUsd: 0.0125 } },
  {
    ...base, step: 'baseline', init: '3333333333333333333333333333333333333333',
    selection: { right: 30, cases: 40, tokens: 120000, costUsd: 0.5 }, heldOut: { right: 10, cases: 12, tokens: 36000, costUsd: 0.15 }, heldOutRev: 'ba9876543210',
  },
  { ...base, step: 'baseline', init: '3333333333333333333333333333333333333333', selection: { right: 0, cases: 0, tokens: 0, costUsd: 0 }, heldOut: null, heldOutRev: null },
  {
    ...base, step: 'grade', run: 'batch01-nomem-run4', verdict: 'PASSED', wrong: ['c'], review: true,
    difficult: [
      { op: 'add', id: 'c', reason: 'wrong' }, { op: 'add', id: 'd', reason: 'regressed' },
      { op: 'add', id: 'e', reason: 'memory' }, { op: 'add', id: 'f', reason: 'costly' }, { op: 'fix', id: 'g' },
    ],
  },
];

describe('step messages: formatStep / parseStep', () => {
  it('covers every step kind', () => {
    expect(new Set(steps.map((s) => s.step))).toEqual(new Set(STEP_KINDS));
  });

  steps.forEach((step, i) => {
    it(`round-trips #${i} ${step.step}`, () => {
      const text = formatStep(step, `tune(demo): ${step.step}`, 'a body\n\nof two paragraphs');
      expect(parseStep(text)).toEqual(step);
    });
  });

  it('writes the trailers native git shows, Tune-Tuning and Tune-Step first', () => {
    const text = formatStep(
      { ...base, step: 'grade', run: 'batch03-nomem-run2', verdict: 'PASSED', wrong: [], review: true, difficult: [{ op: 'fix', id: 'a' }] },
      'tune(demo): grade batch03-nomem-run2 PASSED',
    );
    expect(parseMessage(text).trailers).toEqual([
      ['Tune-Tuning', 'demo'],
      ['Tune-Step', 'grade'],
      ['Tune-Run', 'batch03-nomem-run2'],
      ['Tune-Verdict', 'PASSED'],
      ['Tune-Wrong', '(none)'],
      ['Tune-Review', 'yes'],
      ['Tune-Difficult', 'fix a'],
      ['Tune-Seal', sealOf(parseMessage(text).trailers.slice(0, -1))],
    ]);
  });

  it('keeps the void reason on one line', () => {
    const text = formatStep(
      { ...base, step: 'run', run: 'batch01-nomem-run1', concurrency: 4, cases: 3, void: 'killed\n  exit 137', stopped: null, tokens: 1, costUsd: 0 },
      's',
    );
    expect(parseStep(text)).toMatchObject({ void: 'killed exit 137' });
  });

  it('is null for commits that carry no tuning step', () => {
    expect(parseStep('fix a typo\n')).toBeNull();
    expect(parseStep('s\n\nTune-Tuning: demo\n')).toBeNull();
    expect(parseStep('s\n\nTune-Tuning: demo\nTune-Step: dance\n')).toBeNull();
    expect(parseStep('s\n\nTune-Tuning: demo\nTune-Step: grade\nTune-Run: batch01-nomem-run1\nTune-Verdict: GREAT\n')).toBeNull();
    expect(parseStep('s\n\nTune-Tuning: demo\nTune-Step: run\n')).toBeNull();
    expect(parseStep('s\n\nTune-Tuning: demo\nTune-Step: plan\nTune-Batch: two\n')).toBeNull();
  });

  it('drops a Tune-Difficult line it cannot read, keeping the rest', () => {
    const step = parseStep(sealMessage('s\n\nTune-Tuning: demo\nTune-Step: difficult\nTune-Difficult: add a bored\nTune-Difficult: add b wrong\nTune-Difficult: fix\n'));
    expect(step?.difficult).toEqual([{ op: 'add', id: 'b', reason: 'wrong' }]);
  });
});

describe('id lists', () => {
  it('writes an empty list as (none) and reads it back', () => {
    expect(formatIds([])).toBe('(none)');
    expect(parseIds('(none)')).toEqual([]);
    expect(formatIds(['a', 'b'])).toBe('a,b');
    expect(parseIds('a, b ,c')).toEqual(['a', 'b', 'c']);
    expect(parseIds(undefined)).toEqual([]);
    expect(parseIds('')).toEqual([]);
  });
});
