import { describe, expect, it } from 'vitest';
import {
  batchLabel, branchName, branchRef, formatRunName, isValidCaseId, isValidTuningName, parseBranchName,
  parseRunName, parseTagName, tagName, tagRef, type RunId,
} from '../../src/core/names.js';

describe('run names', () => {
  const runs: Array<[string, RunId]> = [
    ['batch01-nomem-run1', { kind: 'batch', batch: 1, half: 'nomem', number: 1 }],
    ['batch03-nomem-run2', { kind: 'batch', batch: 3, half: 'nomem', number: 2 }],
    ['batch12-mem-run4', { kind: 'batch', batch: 12, half: 'mem', number: 4 }],
    ['batch100-mem-run10', { kind: 'batch', batch: 100, half: 'mem', number: 10 }],
    ['final-check', { kind: 'final' }],
  ];
  for (const [name, id] of runs) {
    it(`${name} round-trips`, () => {
      expect(formatRunName(id)).toBe(name);
      expect(parseRunName(name)).toEqual(id);
    });
  }

  const rejects = [
    'batch3-nomem-run1', // batch numbers are two digits at least
    'batch003-nomem-run1', // and never padded further
    'batch00-nomem-run1', // batches count from 1
    'batch03-foo-run1', // half is nomem or mem
    'batch03-nomem-run0', // runs count from 1
    'batch03-nomem-run01',
    'batch03-nomem-run',
    'batch03-nomem',
    'batch03-mem-run1-extra',
    'Batch03-nomem-run1',
    'final',
    '',
  ];
  for (const name of rejects) {
    it(`rejects ${JSON.stringify(name)}`, () => {
      expect(parseRunName(name)).toBeNull();
    });
  }
});

describe('branch and tag names', () => {
  it('branch name round-trips, with or without refs/heads/', () => {
    expect(branchName('support-bot')).toBe('tune/support-bot');
    expect(branchRef('support-bot')).toBe('refs/heads/tune/support-bot');
    expect(parseBranchName(branchName('support-bot'))).toBe('support-bot');
    expect(parseBranchName(branchRef('support-bot'))).toBe('support-bot');
  });

  it('rejects branches that are not a tuning', () => {
    for (const branch of ['main', 'tune/', 'tune/a/b', 'feature/tune/x', 'tune/.hidden', 'tune/x.lock', 'tune/a..b', 'tune/x.']) {
      expect(parseBranchName(branch), branch).toBeNull();
    }
  });

  it('tag name round-trips for batch runs and the final check', () => {
    expect(tagName('support-bot', 'batch03-nomem-run2')).toBe('tune/support-bot/batch03-nomem-run2');
    expect(tagRef('support-bot', 'final-check')).toBe('refs/tags/tune/support-bot/final-check');
    expect(parseTagName(tagName('support-bot', 'batch03-nomem-run2'))).toEqual({ tuning: 'support-bot', run: 'batch03-nomem-run2' });
    expect(parseTagName(tagRef('support-bot', 'final-check'))).toEqual({ tuning: 'support-bot', run: 'final-check' });
  });

  it('rejects tags whose run part is not a run name', () => {
    for (const tag of ['tune/demo/batch3-nomem-run1', 'tune/demo/batch03-foo-run1', 'tune/demo/batch03-nomem-run0', 'tune/demo', 'v1.0', 'tune/demo/x/batch01-mem-run1']) {
      expect(parseTagName(tag), tag).toBeNull();
    }
  });

  it('names a batch with two digits at least', () => {
    expect(batchLabel(3)).toBe('batch03');
    expect(batchLabel(123)).toBe('batch123');
  });
});

describe('tuning names and case ids', () => {
  it('accepts tuning names safe as one ref segment', () => {
    expect(isValidTuningName('support-bot_v2.1')).toBe(true);
    for (const bad of ['', '-x', 'a/b', 'x.lock', 'a..b', 'x.', 'has space', 'a'.repeat(65)]) {
      expect(isValidTuningName(bad), bad).toBe(false);
    }
  });

  it('accepts case ids safe as one path segment (docs/method.md#selection)', () => {
    expect(isValidCaseId('billing-refund-03')).toBe(true);
    expect(isValidCaseId('A.b_c-9')).toBe(true);
    for (const bad of ['', '.', '..', 'a/b', 'a b', 'é', 'a,b', '(none)']) {
      expect(isValidCaseId(bad), bad).toBe(false);
    }
  });
});
