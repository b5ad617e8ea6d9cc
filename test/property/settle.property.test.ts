import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { settleAtGrade } from '../../src/core/fold.js';
import { passedRuleBreaks } from '../../src/core/rules.js';
import type { Verdict } from '../../src/core/steps.js';
import { History, nomem } from '../helpers/history.js';

/**
 * "An unconfirmed edit never outlives the grading that found it out": over
 * any sequence of runs of one half (any wrong cases, VOID grades, edits with
 * any aims, edits kept on purpose), when every grade is recorded as
 * `git tune grade` records it (the reverts `settleAtGrade` decides, then the
 * grade with its keeps), no edit is ever left unconfirmed, and rule (b')
 * never fires.
 */
const CASES = ['a', 'b', 'c', 'd'];
const KEEP = { why: 'on purpose', by: 'A Person <a@example.com>' };

const runSpec = fc.record({
  wrong: fc.subarray(CASES),
  void: fc.boolean(),
  edits: fc.array(fc.option(fc.subarray(CASES, { minLength: 1 }), { nil: null }), { maxLength: 3 }),
  keepSome: fc.boolean(),
});

describe('edits settle at every grade', () => {
  it('no edit stays unconfirmed after any grade, and rule (b\') never fires (300 histories)', () => {
    fc.assert(fc.property(fc.array(runSpec, { minLength: 1, maxLength: 6 }), (runs) => {
      const h = new History().setup(CASES.length).plan(1, CASES);
      let lastGraded: string | null = null;
      runs.forEach((spec, i) => {
        const name = nomem(1, i + 1);
        h.start(name);
        h.finish(name);
        const verdict: Verdict = spec.void ? 'VOID' : spec.wrong.length === 0 ? 'PASSED' : 'NO CHANGE';
        const state = h.fold(CASES);
        const run = state.runs.get(name)!;
        const settling = settleAtGrade(state, run, spec.wrong, verdict, []);
        const keep = spec.keepSome ? settling.revert.slice(0, 1).map((e) => e.oid) : [];
        const decided = settleAtGrade(state, run, spec.wrong, verdict, keep);
        expect(decided.problems).toEqual([]);
        for (const e of [...decided.revert].sort((x, y) => y.index - x.index)) h.revert(e.oid);
        h.grade(name, verdict, spec.wrong, decided.keep.length ? { keep: { edits: decided.keep.map((e) => e.oid), ...KEEP } } : {});
        if (verdict !== 'VOID') lastGraded = name;
        const after = h.fold(CASES);
        expect(after.warnings).toEqual([]);
        expect(after.edits.filter((e) => e.status === 'unconfirmed')).toEqual([]);
        // Every edit made before this run started is settled, unless the run said nothing (VOID).
        if (verdict !== 'VOID') expect(after.edits.filter((e) => e.index < run.startIndex && e.status === 'pending')).toEqual([]);
        for (const e of after.edits) expect(e.status === 'kept').toBe(e.kept !== null);
        const breaks = passedRuleBreaks({ state: after, run: after.runs.get(name)!, maxRuns: 99, maxRetries: 3 });
        expect(breaks.map((b) => b.rule)).not.toContain('unsettled');
        // Edits respond to the latest run graded for the prose (a VOID one said nothing).
        if (lastGraded) for (const aims of spec.edits) h.edit(lastGraded, aims);
      });
    }), { numRuns: 300 });
  });
});
