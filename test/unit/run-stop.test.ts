import { describe, expect, it } from 'vitest';
import { runStopError } from '../../src/app/run-stop.js';
import { budgetStop, interruptedStop, runStopOf, sandboxStop, stoppedForBudget } from '../../src/core/run-stop.js';
import { budgetLeft } from '../../src/core/run-due.js';
import { EXIT } from '../../src/errors.js';

/** Issue 30, item 3: why a run stopped is a typed value with one mapping to an error and exit code. */
describe('run stops', () => {
  it('each kind has its error code and exit code, and its words in the message', () => {
    const spent = budgetLeft({ maxCostUsd: 1, maxTokens: null }, { tokens: 0, costUsd: 1.25 })!;
    const cases = [
      [budgetStop(spent), 'budget-spent', EXIT.history, `batch01-nomem-run1 did not finish: ${spent}`],
      [sandboxStop('docker is not running'), 'sandbox-down', EXIT.runner, 'batch01-nomem-run1 did not finish: sandbox down: docker is not running'],
      [interruptedStop('signal'), 'interrupted', EXIT.interrupted, 'batch01-nomem-run1 did not finish: interrupted'],
    ] as const;
    for (const [stop, code, exit, message] of cases) {
      const err = runStopError(stop, 'batch01-nomem-run1', 'git tune run');
      expect([err.code, err.exitCode, err.message, err.hint]).toEqual([code, exit, message, 'git tune run']);
    }
    expect(runStopError(interruptedStop(), 'the baseline', undefined, '; nothing was recorded').message)
      .toBe('the baseline did not finish: interrupted; nothing was recorded');
  });

  it('the text a history keeps reads back as the same kind, older wordings included', () => {
    for (const stop of [budgetStop('budget spent: 500 of 400 tokens'), sandboxStop('no network'), interruptedStop()]) {
      expect(runStopOf(stop.text)).toEqual({ kind: stop.kind, text: stop.text });
    }
    expect(runStopOf('budget: $0.50 of $0.50 spent')?.kind).toBe('budget');
    expect(runStopOf('sandbox down')?.kind).toBe('sandbox');
    expect(runStopOf(null)).toBeNull();
    expect([stoppedForBudget('budget spent: $1 of $1'), stoppedForBudget('sandbox down: x'), stoppedForBudget(null)]).toEqual([true, false, false]);
  });
});
