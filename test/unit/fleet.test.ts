import { describe, expect, it } from 'vitest';
import { fleetBudget } from '../../src/app/auto-fleet.js';
import { onlyMatching, timeUp, newSession } from '../../src/app/auto.js';
import { createFleetView } from '../../src/cli/live.js';
import type { CaseResult } from '../../src/contracts/result.js';
import { DEFAULT_PICK, fleetReport, rankRows, renderFleetReport, type FleetRow } from '../../src/core/fleet.js';
import { branchName, fleetTuningName, isValidTuningName, parseBranchName, parseFleetTuning, parseTagName } from '../../src/core/names.js';
import { TuneError } from '../../src/errors.js';

/** The pure parts of fleets: names, the pick rules, the shared budget, the report, the live lines; and auto's filter and time limit. */
const row = (target: string, right: number | null, cases: number, costUsd: number, heldOut: { right: number; cases: number } | null = null): FleetRow => ({
  target, tuning: `shop@${target}`, state: 'done', message: '',
  checked: right === null ? null : { run: 'final-check', verdict: 'VERIFIED', right, cases, tokens: 100, costUsd },
  heldOut,
  tokens: 100, costUsd, runs: 4, editsKept: 1,
});

describe('fleet names', () => {
  it('a target\'s tuning is <fleet>@<target>, a valid tuning name whose branch and tags parse back', () => {
    const name = fleetTuningName('support', 'gpt-4o');
    expect(name).toBe('support@gpt-4o');
    expect(isValidTuningName(name)).toBe(true);
    expect(parseFleetTuning(name)).toEqual({ fleet: 'support', target: 'gpt-4o' });
    expect(parseBranchName(branchName(name))).toBe(name);
    expect(parseTagName(`tune/${name}/batch01-nomem-run1`)).toEqual({ tuning: name, run: 'batch01-nomem-run1' });
    for (const bad of ['@x', 'x@', 'a@b@c', 'a@-b', 'a@b.lock', 'a@b..c', 'a@{b}', 'a@b c', `a@${'b'.repeat(65)}`]) {
      expect(isValidTuningName(bad), bad).toBe(false);
    }
    expect(parseFleetTuning('support')).toBeNull();
  });
});

describe('the pick rules', () => {
  const rows = [row('large', 3, 3, 0.015), row('small', 3, 3, 0.003), row('weak', 2, 3, 0.0015), row('new', null, 0, 0)];
  it('right-then-cost: most right, then cheapest per case; right: ties by name; cost: cheapest; no graded run last', () => {
    expect(rankRows(rows, 'right-then-cost').map((r) => r.target)).toEqual(['small', 'large', 'weak', 'new']);
    expect(rankRows(rows, 'right').map((r) => r.target)).toEqual(['large', 'small', 'weak', 'new']);
    expect(rankRows(rows, 'cost').map((r) => r.target)).toEqual(['weak', 'small', 'large', 'new']);
  });

  it('held-out-then-cost (the default): most held-out cases right first, so a target that overfits loses; without a held-out set, as right-then-cost', () => {
    expect(DEFAULT_PICK).toBe('held-out-then-cost');
    expect(rankRows(rows, 'held-out-then-cost').map((r) => r.target)).toEqual(['small', 'large', 'weak', 'new']);
    // `small` has every tuned case right but only 1 of 4 held-out: it learned the cases, not the skill.
    const withHeldOut = [row('large', 3, 3, 0.015, { right: 4, cases: 4 }), row('small', 3, 3, 0.003, { right: 1, cases: 4 }), row('weak', 2, 3, 0.0015, { right: 3, cases: 4 })];
    expect(rankRows(withHeldOut, 'held-out-then-cost').map((r) => r.target)).toEqual(['large', 'weak', 'small']);
    expect(rankRows(withHeldOut, 'right-then-cost').map((r) => r.target)).toEqual(['small', 'large', 'weak']);
    const report = fleetReport('shop', withHeldOut, DEFAULT_PICK);
    expect(report.best).toBe('large');
    expect(report.why).toContain('4/4 of the held-out set');
    expect(renderFleetReport(report)).toContain('| small | done | 3/3 (100%) in final-check | 1/4 |');
  });

  it('the report names the best and the merge that takes it; with nothing graded, no best', () => {
    const report = fleetReport('shop', rows, 'right-then-cost');
    expect(report).toMatchObject({ best: 'small', take: 'git merge --no-ff tune/shop@small' });
    const md = renderFleetReport(report);
    expect(md).toContain('| small (best) | done | 3/3 (100%) in final-check | – | 100 | $0.0030 | $0.0010 | 4 | 1 | `tune/shop@small` |');
    expect(md).toContain('| new | done | – |');
    expect(md).toContain('Nothing is merged on its own');
    expect(fleetReport('shop', [row('new', null, 0, 0)], 'cost')).toMatchObject({ best: null, take: null });
    expect(md).not.toContain('Final checks:');
  });

  it('gives each graded final check with right / wrong / stuck and their ids', () => {
    const line = 'VERIFIED: 2 of 3 right (rate 67%, 95% CI 21–94%); wrong: none; stuck: c3';
    const md = renderFleetReport(fleetReport('shop', [{ ...row('small', 2, 3, 0.003), final: line }, row('new', null, 0, 0)], 'right'));
    expect(md).toContain(`Final checks:\n\n- small: ${line}\n`);
  });
});

describe('the fleet\'s shared budget', () => {
  it('the lowest budget of its targets less what they spent; null when none has one', () => {
    expect(fleetBudget([{ maxCostUsd: 1, maxTokens: null }, { maxCostUsd: 0.5, maxTokens: 1000 }], { tokens: 300, costUsd: 0.2 }))
      .toEqual({ maxCostUsd: 0.3, maxTokens: 700 });
    expect(fleetBudget([{ maxCostUsd: null, maxTokens: null }], { tokens: 300, costUsd: 0.2 })).toEqual({ maxCostUsd: null, maxTokens: null });
    expect(fleetBudget([{ maxCostUsd: 0.1, maxTokens: 10 }], { tokens: 300, costUsd: 0.2 })).toEqual({ maxCostUsd: 0, maxTokens: 0 });
  });
});

describe('auto --only and --max-minutes', () => {
  it('--only keeps the names the glob matches and refuses one that matches none, listing them', () => {
    expect(onlyMatching(['shop', 'shop@small', 'shop@weak', 'desk'], 'shop@*')).toEqual(['shop@small', 'shop@weak']);
    expect(onlyMatching(['shop', 'desk'], undefined)).toEqual(['shop', 'desk']);
    let err: unknown;
    try {
      onlyMatching(['shop', 'desk'], 'x*');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TuneError);
    expect(err).toMatchObject({ code: 'no-match', exitCode: 2, message: '--only x* matches no tuning (tunings: shop, desk)' });
  });

  it('the time is up at the deadline, not before', () => {
    const session = newSession();
    expect(timeUp(session, new Date(0))).toBeNull();
    session.deadline = { at: 60_000, minutes: 1 };
    expect(timeUp(session, new Date(59_999))).toBeNull();
    expect(timeUp(session, new Date(60_000))).toContain('the time limit is up (--max-minutes 1)');
  });
});

describe('the fleet\'s live view', () => {
  const result = (id: string, costUsd: number) => ({ id, tokens: 10, costUsd }) as CaseResult;
  it('plain: each target\'s lines say whose they are; on a terminal: one line per target under the log', () => {
    for (const tty of [false, true]) {
      const written: string[] = [];
      const view = createFleetView({ title: 'git tune auto --fleet shop', write: (s) => written.push(s), tty, columns: () => 200, clock: () => new Date(0) }, ['small', 'weak']);
      const small = view.target('small');
      small.step('shop@small · step 3 · run: run batch 1', { tokens: 0, costUsd: 0 });
      small.caseEvent({ kind: 'started', run: 'batch01-nomem-run1', id: 'a' });
      small.caseEvent({ kind: 'finished', run: 'batch01-nomem-run1', result: result('a', 0.25) });
      view.target('weak').log('$ git tune run');
      view.close();
      const text = written.join('');
      expect(text).toContain('[small] shop@small · step 3 · run: run batch 1\n');
      expect(text).toContain('[weak] $ git tune run\n');
      if (!tty) expect(text).not.toContain('\x1b[');
      else {
        expect(text).toContain('git tune auto --fleet shop · 0s · 10 tokens ($0.2500) this session\n  small   step 3 · run · batch01-nomem-run1: 1 finished · $0.2500 · run batch 1\n  weak    starting · $0.0000\n');
      }
    }
  });
});
