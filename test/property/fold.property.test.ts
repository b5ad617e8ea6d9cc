import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configSchema, withDefaults } from '../../src/contracts/config.js';
import { DIFFICULT_REASONS } from '../../src/contracts/files.js';
import { foldHistory, type HistoryCommit } from '../../src/core/fold.js';
import { formatRunName } from '../../src/core/names.js';
import { decideNext, NEXT_KINDS } from '../../src/core/next.js';
import { formatStep, VERDICTS, type Step } from '../../src/core/steps.js';
import { complexityOf, fakeOid } from '../helpers/history.js';

/**
 * The state fold and `next` over any history: steps of every kind in any
 * order (most of which a real tuning never writes), hand commits, and hand
 * commits with forged trailers. The fold never throws (what does not fit is
 * a warning), and `next` always answers with one of the method's kinds (docs/method.md#next) and,
 * but for done, void-floor and final-failed, a command (docs/method.md#next).
 */
export const RUNS = { histories: 400 };

const TUNING = 'demo';
const CASES = ['a', 'b', 'c', 'd', 'e', 'f'];
const id = fc.constantFrom(...CASES, 'zz');
const ids = fc.uniqueArray(id, { maxLength: 4 });
const runName = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('final-check', 'final-check-run2') },
  { weight: 6, arbitrary: fc.record({ batch: fc.integer({ min: 1, max: 3 }), half: fc.constantFrom('nomem' as const, 'mem' as const), number: fc.integer({ min: 1, max: 3 }) }).map((r) => formatRunName({ kind: 'batch', ...r })) },
);
const difficult = fc.array(fc.oneof(
  fc.record({ op: fc.constant('add' as const), id, reason: fc.constantFrom(...DIFFICULT_REASONS) }),
  fc.record({ op: fc.constant('fix' as const), id }),
), { maxLength: 2 });

/** A step without its tuning and difficult lines (Omit over each member of the union, so `step` still narrows). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type Data = OmitEach<Step, 'tuning' | 'difficult'>;
const data: fc.Arbitrary<Data> = fc.oneof(
  fc.constant({ step: 'config', keys: ['prose'] } as Data),
  fc.record({ cases: fc.integer({ min: 1, max: 6 }) }).map((d) => ({ step: 'dataset', ...d, rev: 'rev1' }) as Data),
  fc.record({ selected: fc.integer({ min: 1, max: 6 }) }).map((d) => ({ step: 'select', ...d, total: 6 }) as Data),
  fc.record({ batch: fc.integer({ min: 1, max: 3 }), new: ids, recheck: ids, kind: fc.constantFrom('new' as const, 'difficult' as const) })
    .map((d) => ({ step: 'plan', ...d, size: Math.max(1, d.new.length) }) as Data),
  fc.record({ run: runName, concurrency: fc.integer({ min: 1, max: 16 }) }).map((d) => ({ step: 'run-start', ...d }) as Data),
  fc.record({ run: runName, concurrency: fc.integer({ min: 1, max: 16 }), void: fc.option(fc.constant('exit 137'), { nil: null }), stopped: fc.constant(null), tokens: fc.nat(5000), costUsd: fc.constant(0.01), cases: fc.nat(6) })
    .map((d) => ({ step: 'run', ...d }) as Data),
  fc.record({ run: runName, reason: fc.constantFrom('budget spent', 'sandbox down: gone'), tokens: fc.nat(5000), costUsd: fc.constant(0.5) }).map((d) => ({ step: 'run-stop', ...d }) as Data),
  fc.record({ run: runName, verdict: fc.constantFrom(...VERDICTS), wrong: ids, review: fc.boolean() }).map((d) => ({ step: 'grade', ...d }) as Data),
  // A grade that keeps an edit on purpose: the commit `back` steps before it (often not an unconfirmed edit: a warning).
  fc.record({ run: runName, verdict: fc.constantFrom(...VERDICTS), wrong: ids, back: fc.nat(3) })
    .map((d) => ({ step: 'grade', run: d.run, verdict: d.verdict, wrong: d.wrong, review: true, keepBack: d.back }) as unknown as Data),
  fc.record({ run: runName, aims: fc.option(ids, { nil: null }) }).map((d) => ({ step: 'edit', ...d }) as Data),
  fc.record({ back: fc.nat(30) }).map((d) => ({ step: 'revert', reverts: [], back: d.back }) as unknown as Data),
  fc.constant({ step: 'difficult' } as Data),
  fc.record({ run: runName }).map((d) => ({ step: 'candidate', ...d }) as Data),
  fc.record({ batch: fc.integer({ min: 1, max: 3 }) }).map((d) => ({ step: 'checkpoint', ...d }) as Data),
  fc.constant({ step: 'note' } as Data),
);

type Entry = { kind: 'step'; data: Data; difficult: Step['difficult'] } | { kind: 'hand'; touchesProse: boolean } | { kind: 'forged'; verdict: string };
const entry: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('step' as const), data, difficult }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hand' as const), touchesProse: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forged' as const), verdict: fc.constantFrom(...VERDICTS) }) },
);

function historyOf(entries: readonly Entry[]): HistoryCommit[] {
  const commits: HistoryCommit[] = [{ oid: fakeOid(0), message: formatStep({ step: 'init', tuning: TUNING, difficult: [] }, 'init') }];
  for (const e of entries) {
    const oid = fakeOid(commits.length);
    if (e.kind === 'hand') commits.push({ oid, message: 'a hand commit\n', touchesProse: e.touchesProse });
    else if (e.kind === 'forged') {
      commits.push({ oid, message: `grade by hand\n\nTune-Tuning: ${TUNING}\nTune-Step: grade\nTune-Run: batch01-nomem-run1\nTune-Verdict: ${e.verdict}\n`, touchesProse: false });
    } else {
      let d = e.data;
      // A revert names edits of this history (or none): the commit `back` steps before it.
      if (d.step === 'revert') d = { step: 'revert', reverts: [commits[Math.max(0, commits.length - 1 - ((d as unknown as { back: number }).back % commits.length))]!.oid] };
      const keepBack = (d as unknown as { keepBack?: number }).keepBack;
      if (d.step === 'grade' && keepBack !== undefined) {
        const { keepBack: _, ...grade } = d as unknown as Data & { keepBack: number };
        d = { ...grade, keep: { edits: [commits[Math.max(0, commits.length - 1 - (keepBack % commits.length))]!.oid], why: 'house style', by: 'A Person <a@example.com>' } } as Data;
      }
      commits.push({ oid, message: formatStep({ ...d, tuning: TUNING, difficult: e.difficult } as Step, `tune(${TUNING}): ${d.step}`) });
    }
  }
  return commits;
}

const settings = fc.option(fc.record({
  minBatch: fc.integer({ min: 1, max: 3 }), maxBatch: fc.integer({ min: 3, max: 6 }), recheck: fc.integer({ min: 0, max: 3 }),
  maxRuns: fc.integer({ min: 1, max: 4 }), maxRetries: fc.integer({ min: 1, max: 3 }), concurrency: fc.integer({ min: 1, max: 16 }),
  budget: fc.record({ maxTokens: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: null }) }),
}), { nil: null });

describe('the fold and next over any history', () => {
  it(`never throw; next is always one of the method's kinds (docs/method.md#next), with a command unless it is done, void-floor or final-failed (${RUNS.histories} histories)`, () => {
    fc.assert(fc.property(fc.array(entry, { maxLength: 40 }), settings, fc.subarray(CASES, { minLength: 1 }), (entries, s, selection) => {
      const commits = historyOf(entries);
      const state = foldHistory(TUNING, commits, selection);
      expect(state.initOid).toBe(commits[0]!.oid);
      expect(state.commits).toBe(commits.length);
      const forged = entries.filter((e) => e.kind === 'forged').length;
      expect(state.warnings.filter((w) => w.includes('without the Tune-Seal'))).toHaveLength(forged);
      const config = s === null ? null : withDefaults(configSchema.parse({ prose: ['agents/*.md'], runner: { command: ['node', 'agent.js'] }, ...s }));
      const next = decideNext({ state, config, selection, complexity: complexityOf(['a', 'c']), dir: `.tune/${TUNING}` });
      expect(NEXT_KINDS).toContain(next.kind);
      // An edit is kept exactly when a grade kept it (an unconfirmed one), and says who kept it.
      for (const e of state.edits) {
        expect(e.status === 'kept').toBe(e.kept !== null);
        if (e.status === 'kept') expect(e.kept!.by).toBe('A Person <a@example.com>');
      }
      expect(typeof next.message).toBe('string');
      if (['done', 'void-floor', 'final-failed'].includes(next.kind)) expect(next.command).toBeNull();
      else expect(next.command, `${next.kind}: ${next.message}`).toMatch(/^git tune /);
      // The same history folds to the same state, also continued from any point (the cache's way).
      const cut = entries.length === 0 ? 1 : 1 + (entries.length % commits.length);
      const continued = foldHistory(TUNING, commits.slice(cut), selection, foldHistory(TUNING, commits.slice(0, cut), selection));
      expect(continued).toEqual(state);
    }), { numRuns: RUNS.histories });
  });
});
