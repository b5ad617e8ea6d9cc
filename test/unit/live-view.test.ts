import { describe, expect, it } from 'vitest';
import { createLiveView, formatElapsed } from '../../src/cli/live.js';
import type { CaseResult } from '../../src/contracts/result.js';

/** The live view of `git tune auto`, with a pinned clock and the stream captured. */
function view(tty: boolean) {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const written: string[] = [];
  const live = createLiveView({ title: 'git tune auto', write: (s) => written.push(s), tty, columns: () => 200, clock: () => new Date(now) });
  return { live, written, tick: (ms: number) => (now += ms) };
}

const result = (id: string, tokens: number, costUsd: number) => ({ id, tokens, costUsd }) as CaseResult;

describe('the live view', () => {
  it('plain: append-only lines, the log alone', () => {
    const { live, written } = view(false);
    live.step('demo · step 3 · run: run batch 1 without memory', { tokens: 100, costUsd: 0.5 });
    live.log('$ git tune run');
    live.caseEvent({ kind: 'started', run: 'batch01-nomem-run1', id: 'a' });
    live.log('[1/3] a: right, 10 tokens\n\n', '  ');
    live.close();
    expect(written.join('')).toBe('demo · step 3 · run: run batch 1 without memory\n$ git tune run\n  [1/3] a: right, 10 tokens\n');
  });

  it('on a terminal: the log scrolls above a panel redrawn in place (step, running cases with their time, tokens and cost)', () => {
    const { live, written, tick } = view(true);
    live.step('demo · step 3 · run: run batch 1 without memory', { tokens: 100, costUsd: 0.5 });
    live.caseEvent({ kind: 'started', run: 'batch01-nomem-run1', id: 'a' });
    tick(1500);
    live.caseEvent({ kind: 'started', run: 'batch01-nomem-run1', id: 'b' });
    tick(2000);
    live.caseEvent({ kind: 'finished', run: 'batch01-nomem-run1', result: result('a', 1200, 0.25) });
    const frame = written[written.length - 1]!;
    expect(frame).toBe([
      'git tune auto · 3s',
      '  demo · step 3 · run: run batch 1 without memory',
      '  batch01-nomem-run1: 1 finished · running: b 2s',
      '  tokens 1,300 ($0.7500) in the tuning · 1,200 ($0.2500) this session',
      '',
    ].join('\n'));
    // A log line erases the panel (4 lines up, clear below), is written, and the panel comes back under it.
    live.log('[1/3] a: right');
    expect(written.slice(-3)).toEqual(['\x1b[4F\x1b[0J', '[1/3] a: right\n', frame]);
    live.close();
    expect(written[written.length - 1]).toBe('\x1b[4F\x1b[0J');
  });

  it('elapsed times read as seconds, minutes, hours', () => {
    expect([formatElapsed(999), formatElapsed(65_000), formatElapsed(3_725_000)]).toEqual(['0s', '1m05s', '1h02m']);
  });
});
