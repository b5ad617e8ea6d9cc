import { afterAll, describe, expect, it } from 'vitest';
// A plain ES module shared with the bench (bench/noise.mjs); the shapes this test reads are typed below.
import * as slip from '../fixtures/slip/trajectory.mjs';

/**
 * `git tune auto` to its end on the slip agent (test/fixtures/slip), an agent
 * whose right prose still gives a wrong answer now and then, as a real model
 * does, at 0%, 12% and 25% slips over two seeds, scored against the
 * fixture's truth from the history alone (native git): the targets of
 * docs/method.md#noise. The same trajectories, over more seeds, are
 * `npm run bench -- --only noise` (BENCHMARKS.md, "Decisions on a noisy agent").
 * Six tunings, two at a time: about 30 s on a 2-core machine.
 */
interface Row {
  rate: number; seeds: number; decisions: number; wrongDecisions: number; unseen: number; fromReverted: number;
  finals: number; onlySlips: number; verifiedWhenOnlySlips: number; unfinished: number; runsVsClean: number | null;
}
interface Score { rate: number; seed: string; code: number; closing: string; final: { verdict: string; right: boolean } | null; runs: number }
const trajectory = slip as unknown as {
  tmpRoot: () => string; makeTemplate: (tmp: string) => Promise<string>; cleanup: (dir: string) => void;
  runAll: (template: string, specs: Array<{ rate: number; seed: string }>, opts: { tmp: string; parallel: number }) => Promise<unknown[]>;
  score: (t: unknown) => Promise<Score>; summarize: (scores: Score[]) => Row[]; table: (rows: Row[]) => string;
};

const SEEDS = ['1', '2'];
const RATES = [0, 0.12, 0.25];
const tmp = trajectory.tmpRoot();
afterAll(() => trajectory.cleanup(tmp));

let scored: Promise<{ scores: Score[]; rows: Row[] }> | null = null;
const trajectories = () => {
  scored ??= (async () => {
    const template = await trajectory.makeTemplate(tmp);
    const runs = await trajectory.runAll(template, RATES.flatMap((rate) => SEEDS.map((seed) => ({ rate, seed }))), { tmp, parallel: 2 });
    const scores = await Promise.all(runs.map((r) => trajectory.score(r)));
    const rows = trajectory.summarize(scores);
    process.stderr.write(`${trajectory.table(rows)}\n`);
    return { scores, rows };
  })();
  return scored;
};
const at = (rows: Row[], rate: number) => rows.find((r) => r.rate === rate)!;

describe.concurrent('decisions that hold on a noisy agent (slip trajectories)', () => {
  it('without slips, every tuning ends VERIFIED with no wrong edit decision', async () => {
    const { scores, rows } = await trajectories();
    for (const s of scores.filter((x) => x.rate === 0)) {
      expect(s.final?.verdict, s.closing).toBe('VERIFIED');
      expect(s.closing).toMatch(/; VERIFIED: \d+ of 8 right \(rate \d+%, 95% CI \d+–\d+%\); wrong: none; stuck: /);
    }
    expect(at(rows, 0)).toMatchObject({ wrongDecisions: 0, unseen: 0, fromReverted: 0, unfinished: 0 });
    expect(at(rows, 0).decisions).toBeGreaterThan(0);
  }, 240_000);

  for (const rate of [0.12, 0.25]) {
    it(`at ${rate * 100}% slips: at most 5% of edit decisions wrong, no verdict on unseen prose, no candidate from reverted prose, VERIFIED when only slips, runs ≤ 1.5×`, async () => {
      const { rows } = await trajectories();
      const r = at(rows, rate);
      const why = trajectory.table(rows);
      expect(r.decisions, why).toBeGreaterThan(0);
      expect(r.wrongDecisions, why).toBeLessThanOrEqual(0.05 * r.decisions);
      expect(r.unseen, why).toBe(0);
      expect(r.fromReverted, why).toBe(0);
      expect(r.unfinished, why).toBe(0);
      expect(r.verifiedWhenOnlySlips, why).toBe(r.onlySlips);
      expect(r.runsVsClean, why).not.toBeNull();
      expect(r.runsVsClean!, why).toBeLessThanOrEqual(1.5);
    }, 240_000);
  }
});
