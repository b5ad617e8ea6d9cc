import { describe, expect, it } from 'vitest';
import { decideNext, latestBatchRun, NEXT_KINDS, type NextKind, type NextStep } from '../../src/core/next.js';
import { add, fakeOid, History, ids, makeConfig, mem, nextInput, nomem } from '../helpers/history.js';

const ABC = ['a', 'b', 'c'];
type Opts = Parameters<typeof nextInput>[1];

function next(h: History, opts: Opts = {}): NextStep {
  return decideNext(nextInput(h, { selection: ABC, ...opts }));
}

/** Batch 1 planned with a, b, c (new). */
const planned = () => new History().setup(3).plan(1, ABC);
/** Batch 1's no-memory half passed and the candidate is built. */
const candidateBuilt = () => planned().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1));
/** Batch 1 done (both halves passed, checkpoint made), every case used. */
const batchOneDone = () => new History().setup(3).smoothBatch(1, ABC);

/** Four no-memory runs that did not pass, an edit after each of the first three. */
function fourRunsNoPass(lastWrong: string[]) {
  const h = planned();
  h.ran(nomem(1, 1), 'NO CHANGE', ['a', 'c']);
  h.edit(nomem(1, 1));
  h.ran(nomem(1, 2), 'NO CHANGE', ['a', 'c']);
  h.edit(nomem(1, 2));
  h.ran(nomem(1, 3), 'MIXED', ['a', 'c'], { difficult: [add('a', 'wrong')] });
  h.edit(nomem(1, 3));
  h.ran(nomem(1, 4), 'NO CHANGE', lastWrong);
  return h;
}

function expectKind(name: string, step: NextStep, kind: NextKind): NextStep {
  expect(step.kind, `${name}: ${step.message}`).toBe(kind);
  return step;
}

describe('next: setting up (docs/method.md#next)', () => {
  it('dataset: no dataset yet', () => {
    const step = expectKind('dataset', next(new History().init()), 'dataset');
    expect(step.command).toMatch(/^git tune dataset import /);
    expect(step).toMatchObject({ batch: null, half: null, run: null });
  });

  it('config: no config, or one without prose or runner', () => {
    const h = new History().init().dataset(3);
    expectKind('config (none)', next(h, { config: null }), 'config');
    const noProse = expectKind('config (prose)', next(h, { config: makeConfig({ prose: [] }) }), 'config');
    expect(noProse.message).toContain('`prose`');
    expect(noProse.command).toBe(`git tune config set prose '["agents/**/*.md"]'`);
    const noRunner = expectKind('config (runner)', next(h, { config: makeConfig({ runner: null }) }), 'config');
    expect(noRunner.message).toContain('`runner`');
    expect(noRunner.command).toBe(`git tune config set runner.command '["node", "agent.js"]'`);
  });

  it('select: no selection, or one made for another dataset (empty ids)', () => {
    const h = new History().init().dataset(3);
    expect(expectKind('select', next(h), 'select').command).toBe('git tune select');
    expect(expectKind('select (stale)', next(h.select(3), { selection: [] }), 'select').command).toBe('git tune select');
  });

  it('batch: no batch planned yet', () => {
    const step = expectKind('batch 1', next(new History().setup(3)), 'batch');
    expect(step).toMatchObject({ command: 'git tune batch', batch: 1, half: null, run: null });
  });
});

describe('next: the latest run (docs/method.md#next)', () => {
  it('run: the batch is planned but not run', () => {
    const step = expectKind('run', next(new History().setup(4).plan(1, ABC, ['d']), { selection: [...ABC, 'd'] }), 'run');
    expect(step).toMatchObject({ command: 'git tune run', batch: 1, half: 'nomem', run: 'batch01-nomem-run1' });
    expect(step.message).toContain('3 new + 1 recheck cases');
  });

  it('resume: started but not finished', () => {
    const h = planned();
    h.start(nomem(1, 1));
    const step = expectKind('resume', next(h), 'resume');
    expect(step).toMatchObject({ command: 'git tune run', batch: 1, half: 'nomem', run: 'batch01-nomem-run1' });
  });

  it('resume: stopped for the budget, raising the budget first', () => {
    const h = planned();
    h.start(nomem(1, 1));
    h.stop(nomem(1, 1), 'budget: $5.10 of $5.00 spent', 500, 5.1);
    const step = expectKind('resume (budget)', next(h, { config: makeConfig({ budget: { maxCostUsd: 5 } }) }), 'resume');
    expect(step.command).toBe('git tune config set budget.maxCostUsd 10 && git tune run');
  });

  it('resume: stopped for the token budget, or because the sandbox went down', () => {
    const tokens = planned();
    tokens.start(nomem(1, 1));
    tokens.stop(nomem(1, 1), 'budget: 1200 of 1000 tokens spent', 1200, 0);
    const raise = next(tokens, { config: makeConfig({ budget: { maxTokens: 1000 } }) });
    expect(raise).toMatchObject({ kind: 'resume', command: 'git tune config set budget.maxTokens 2000 && git tune run' });

    const sandbox = planned();
    sandbox.start(nomem(1, 1));
    sandbox.stop(nomem(1, 1), 'sandbox down: no network');
    const step = next(sandbox);
    expect(step).toMatchObject({ kind: 'resume', command: 'git tune run' });
    expect(step.message).toContain("Fix the runner's sandbox");
  });

  it('grade: finished, not graded', () => {
    const h = planned();
    h.start(nomem(1, 1));
    h.finish(nomem(1, 1));
    const step = expectKind('grade', next(h), 'grade');
    expect(step).toMatchObject({ command: 'git tune grade', run: 'batch01-nomem-run1', half: 'nomem' });
    expect(step.message).toContain('.tune/demo/runs/batch01-nomem-run1/findings.md');
  });

  it('takes the highest batch, nomem before mem, then run number', () => {
    const h = candidateBuilt().ran(mem(1, 1), 'MIXED', ['a']);
    h.edit(mem(1, 1));
    h.ran(mem(1, 2), 'PASSED');
    expect(latestBatchRun(h.fold(ABC))?.name).toBe('batch01-mem-run2');
    h.checkpoint(1).plan(2, [], ['a'], { kind: 'difficult' });
    h.start(nomem(2, 1));
    expect(latestBatchRun(h.fold(ABC))?.name).toBe('batch02-nomem-run1');
  });
});

describe('next: VOID runs (docs/method.md#next)', () => {
  it('void-floor: VOID at concurrency 4 or less, no command', () => {
    const step = expectKind('void-floor', next(planned().voided(nomem(1, 1), 4)), 'void-floor');
    expect(step.command).toBeNull();
    expect(step.message).toContain('concurrency 4');
    expect(next(planned().voided(nomem(1, 1), 1)).kind).toBe('void-floor');
  });

  it('void-rerun at ⌊c/2⌋, lowering the configured concurrency when it is higher', () => {
    const config = makeConfig({ concurrency: 16 });
    const step = expectKind('void-rerun (lower config)', next(planned().voided(nomem(1, 1), 16), { config }), 'void-rerun');
    expect(step.command).toBe('git tune config set concurrency 8 && git tune run');
    expect(step.message).toContain('at concurrency 8');
    expect(step).toMatchObject({ batch: 1, half: 'nomem', run: 'batch01-nomem-run1' });
  });

  it('void-rerun at max(4, ⌊c/2⌋), leaving a lower configured concurrency alone', () => {
    const config = makeConfig({ concurrency: 3 });
    const step = expectKind('void-rerun (keep config)', next(planned().voided(nomem(1, 1), 5), { config }), 'void-rerun');
    expect(step.command).toBe('git tune run --concurrency 4');
    const at9 = next(planned().voided(nomem(1, 1), 9), { config: makeConfig({ concurrency: 4 }) });
    expect(at9.command).toBe('git tune run --concurrency 4');
    const equal = next(planned().voided(nomem(1, 1), 12), { config: makeConfig({ concurrency: 6 }) });
    expect(equal.command).toBe('git tune run --concurrency 6');
  });

  it('void-rerun for a run graded VOID', () => {
    const h = planned().ran(nomem(1, 1), 'VOID', [], { concurrency: 12 });
    const step = expectKind('void-rerun (graded)', next(h, { config: makeConfig({ concurrency: 12 }) }), 'void-rerun');
    expect(step.command).toBe('git tune config set concurrency 6 && git tune run');
  });
});

describe('next: PASSED refused (docs/method.md#grading, docs/method.md#next)', () => {
  it('refused: no review section', () => {
    const step = expectKind('refused (review)', next(planned().ran(nomem(1, 1), 'PASSED', [], { review: false })), 'refused');
    expect(step.message).toContain('`## Cost review`');
    expect(step.command).toBe('git tune grade --draft --run batch01-nomem-run1');
  });

  it('refused: at maxRuns with an unconfirmed edit not reverted', () => {
    const h = planned().ran(nomem(1, 1), 'NO CHANGE', ['a'], { difficult: [add('a', 'wrong')] });
    h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'PASSED', ['a']);
    const step = expectKind('refused (unreverted)', next(h, { config: makeConfig({ maxRuns: 2 }) }), 'refused');
    expect(step.message).toContain('reverted first');
    expect(step.command).toBe('git tune revert && git tune grade --verdict PASSED --run batch01-nomem-run2');
  });

  it('refused: a wrong case not on the difficult list', () => {
    const step = expectKind('refused (wrong)', next(planned().ran(nomem(1, 1), 'PASSED', ['c'])), 'refused');
    expect(step.message).toContain('needs each on the difficult list: c');
    expect(step.command).toBe('git tune difficult add c --why wrong && git tune grade --verdict PASSED --run batch01-nomem-run1');
  });

  it('confirm: PASSED with a pending edit made after it', () => {
    const h = planned().ran(nomem(1, 1), 'PASSED');
    const edit = h.edit(nomem(1, 1));
    const step = expectKind('confirm (after PASSED)', next(h), 'confirm');
    expect(step).toMatchObject({ command: 'git tune run', batch: 1, half: 'nomem', run: 'batch01-nomem-run2' });
    expect(step.message).toContain(edit.slice(0, 7));
  });
});

describe('next: passing halves (docs/method.md#next)', () => {
  it('candidate: no-memory PASSED, no candidate from it yet', () => {
    const step = expectKind('candidate', next(planned().ran(nomem(1, 1), 'PASSED')), 'candidate');
    expect(step).toMatchObject({ command: 'git tune memory candidate', run: 'batch01-nomem-run1' });
  });

  it('mem-run: the candidate comes from the passing run', () => {
    const step = expectKind('mem-run', next(candidateBuilt()), 'mem-run');
    expect(step).toMatchObject({ command: 'git tune run', batch: 1, half: 'mem', run: 'batch01-mem-run1' });
  });

  it('checkpoint: with-memory PASSED, last good memory does not hold the batch', () => {
    const step = expectKind('checkpoint', next(candidateBuilt().ran(mem(1, 1), 'PASSED')), 'checkpoint');
    expect(step).toMatchObject({ command: 'git tune memory checkpoint', batch: 1, half: 'mem', run: 'batch01-mem-run1' });
  });

  it('batch after a checkpoint, while cases are unused', () => {
    const h = new History().setup(6).smoothBatch(1, ABC);
    const step = expectKind('batch 2', next(h, { selection: [...ABC, 'd', 'e', 'f'] }), 'batch');
    expect(step).toMatchObject({ command: 'git tune batch', batch: 2, half: null, run: null });
    expect(step.message).toBe('plan batch 2: batch 1 went smoothly (1 no-memory + 1 with-memory runs, no new difficult case): 3 → 6');
  });

  it('batch after a checkpoint, when every case is used but a difficult case is open', () => {
    const h = batchOneDone().difficult(add('b', 'wrong'));
    const step = expectKind('batch (difficult)', next(h), 'batch');
    expect(step).toMatchObject({ batch: 2 });
  });

  it('final: every case used, nothing open', () => {
    const step = expectKind('final', next(batchOneDone()), 'final');
    expect(step).toMatchObject({ command: 'git tune final', run: 'final-check' });
  });
});

describe('next: an edit between batches (docs/method.md#edits)', () => {
  const SIX = [...ABC, 'd', 'e', 'f'];

  it('moves on to the next batch, never to a confirm no run of the closed half could answer', () => {
    const h = new History().setup(6).smoothBatch(1, ABC);
    const edit = h.hand(true);
    const note = `edit ${edit.slice(0, 7)} came after batch 1's memory was checkpointed: no run of batch 1's with-memory half will try it, so it is unconfirmed; the next grade reverts it unless kept (git tune grade --keep ${edit.slice(0, 7)} --why "…"), and the final check does not start while it stands (undo it now: git tune revert ${edit.slice(0, 7)})`;
    const plan = expectKind('batch', next(h, { selection: SIX }), 'batch');
    expect(plan.notes).toContain(note);
    h.plan(2, ['d', 'e', 'f'], ['a']);
    const run = expectKind('run', next(h, { selection: SIX }), 'run');
    expect(run).toMatchObject({ command: 'git tune run', run: 'batch02-nomem-run1' });
    expect(run.notes.join('\n')).toContain(`edit ${edit.slice(0, 7)} came after batch 2 was planned`);
    // Once a run starts from it, the note has said its piece.
    h.start(nomem(2, 1));
    expect(next(h, { selection: SIX }).notes.join('\n')).not.toContain(edit.slice(0, 7));
  });

  it('does not refuse the PASSED of a half at maxRuns for an edit made after it closed', () => {
    const h = candidateBuilt().ran(mem(1, 1), 'PASSED').checkpoint(1);
    h.edit(mem(1, 1));
    const step = expectKind('batch', next(h, { selection: SIX, config: makeConfig({ maxRuns: 1 }) }), 'batch');
    expect(step.batch).toBe(2);
  });
});

describe('next: the final check (docs/method.md#final-check, docs/method.md#next)', () => {
  it('resume: the final check started but did not finish', () => {
    const h = batchOneDone();
    h.start('final-check', 8);
    const step = expectKind('resume (final)', next(h), 'resume');
    expect(step).toMatchObject({ command: 'git tune final', run: 'final-check', batch: null, half: null });
  });

  it('grade: the final check is not graded', () => {
    const h = batchOneDone();
    h.start('final-check', 8);
    h.finish('final-check');
    expect(expectKind('grade (final)', next(h), 'grade')).toMatchObject({ command: 'git tune grade', run: 'final-check' });
  });

  it('void-rerun of the final check', () => {
    const h = batchOneDone().voided('final-check', 10);
    const step = expectKind('void-rerun (final)', next(h, { config: makeConfig({ concurrency: 10 }) }), 'void-rerun');
    expect(step.command).toBe('git tune config set concurrency 5 && git tune final');
  });

  it('done: VERIFIED, no command', () => {
    const step = expectKind('done', next(batchOneDone().ran('final-check', 'VERIFIED')), 'done');
    expect(step.command).toBeNull();
  });

  it('final-failed: anything but VERIFIED, no command', () => {
    const step = expectKind('final-failed', next(batchOneDone().ran('final-check', 'FAILED', ['b'])), 'final-failed');
    expect(step.command).toBeNull();
    expect(step.message).toContain('FAILED');
    expect(next(batchOneDone().ran('final-check', 'REGRESSION', ['b'])).kind).toBe('final-failed');
  });
});

describe('next: a run that did not pass (docs/method.md#next)', () => {
  it('edit: no pending edit, runs left', () => {
    const step = expectKind('edit', next(planned().ran(nomem(1, 1), 'NO CHANGE', ['a'])), 'edit');
    expect(step).toMatchObject({ command: 'git tune edit', batch: 1, half: 'nomem', run: 'batch01-nomem-run1' });
    expect(step.message).toBe(
      'batch01-nomem-run1 is NO CHANGE: edit the prose and write .tune/demo/runs/batch01-nomem-run1/changes.md, then record the edit',
    );
  });

  it('edit: the with-memory half edits memory-policy files only', () => {
    const step = expectKind('edit (mem)', next(candidateBuilt().ran(mem(1, 1), 'MIXED', ['a'])), 'edit');
    expect(step.message).toContain('edit the memory-policy files');
  });

  it('edit: CORRECT (cost left to cut) is not PASSED', () => {
    expect(next(planned().ran(nomem(1, 1), 'CORRECT')).kind).toBe('edit');
  });

  it('confirm: a pending edit followed the grading', () => {
    const h = planned().ran(nomem(1, 1), 'REGRESSION', ['a']);
    h.edit(nomem(1, 1));
    const step = expectKind('confirm', next(h), 'confirm');
    expect(step).toMatchObject({ command: 'git tune run', run: 'batch01-nomem-run2' });
  });

  it('confirm: a hand commit touching prose is a pending edit', () => {
    const h = planned().ran(nomem(1, 1), 'NO CHANGE', ['a']);
    h.hand(true);
    expect(next(h).kind).toBe('confirm');
  });

  it('stop-batch: maxRuns runs that were not VOID, with revert, a difficult add per wrong case not listed, and PASSED', () => {
    const step = expectKind('stop-batch', next(fourRunsNoPass(['a', 'c'])), 'stop-batch');
    expect(step.command).toBe(
      'git tune revert && git tune difficult add c --why wrong && git tune grade --verdict PASSED --run batch01-nomem-run4',
    );
    expect(step).toMatchObject({ batch: 1, half: 'nomem', run: 'batch01-nomem-run4' });
  });

  it('stop-batch: nothing to add when every wrong case is listed', () => {
    const step = next(fourRunsNoPass(['a']));
    expect(step.command).toBe('git tune revert && git tune grade --verdict PASSED --run batch01-nomem-run4');
  });

  it('stop-batch wins over a pending edit at the limit', () => {
    const h = fourRunsNoPass(['a']);
    h.edit(nomem(1, 4));
    expect(next(h).kind).toBe('stop-batch');
  });

  it('VOID runs do not count toward maxRuns', () => {
    const h = planned();
    h.ran(nomem(1, 1), 'NO CHANGE', ['a']);
    h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'NO CHANGE', ['a']);
    h.edit(nomem(1, 2));
    h.voided(nomem(1, 3), 16);
    h.ran(nomem(1, 4), 'NO CHANGE', ['a']);
    expect(next(h).kind).toBe('edit');
    expect(next(h, { config: makeConfig({ maxRuns: 3 }) }).kind).toBe('stop-batch');
  });

  it('after stop-batch is carried out, the PASSED is accepted and the half moves on', () => {
    const h = fourRunsNoPass(['a', 'c']);
    const edits = h.fold(ABC).edits.filter((e) => e.status !== 'confirmed').map((e) => e.oid);
    h.revert(...edits);
    h.difficult(add('c', 'wrong'));
    h.grade(nomem(1, 4), 'PASSED', ['a', 'c']);
    expect(next(h).kind).toBe('candidate');
  });
});

describe('next: notes (docs/method.md#next)', () => {
  it('notes a cut selection on every step', () => {
    const h = new History().setup(40, 64);
    const selection = ids('s', 1, 40);
    expect(next(h, { selection }).notes).toEqual(['limit 40 of 64 cases: 24 are never tuned against']);
    h.plan(1, ids('s', 1, 3));
    expect(next(h, { selection }).notes).toContain('limit 40 of 64 cases: 24 are never tuned against');
    expect(next(new History().setup(3)).notes).toEqual([]);
  });

  it('notes a cost budget nearly spent (80%) and spent', () => {
    const config = makeConfig({ budget: { maxCostUsd: 10 } });
    const h = planned();
    h.start(nomem(1, 1));
    h.finish(nomem(1, 1), { costUsd: 7.99 });
    expect(next(h, { config }).notes).toEqual([]);
    const nearly = planned();
    nearly.start(nomem(1, 1));
    nearly.finish(nomem(1, 1), { costUsd: 8.5 });
    expect(next(nearly, { config }).notes).toEqual(['budget nearly spent: $8.50 of $10.00']);
    const spent = planned();
    spent.start(nomem(1, 1));
    spent.finish(nomem(1, 1), { costUsd: 10.25 });
    expect(next(spent, { config }).notes).toEqual(['budget spent: $10.25 of $10.00']);
  });

  it('notes a token budget nearly spent', () => {
    const h = planned();
    h.start(nomem(1, 1));
    h.finish(nomem(1, 1), { tokens: 900 });
    expect(next(h, { config: makeConfig({ budget: { maxTokens: 1000 } }) }).notes).toEqual([
      'token budget nearly spent: 900 of 1000 tokens',
    ]);
  });
});

describe('next: every kind', () => {
  /** One history per kind of docs/method.md#next, built independently of the tests above. */
  const scenarios: Record<NextKind, () => NextStep> = {
    dataset: () => next(new History().init()),
    config: () => next(new History().init().dataset(3), { config: null }),
    select: () => next(new History().init().dataset(3)),
    batch: () => next(batchOneDone().difficult(add('b', 'wrong'))),
    run: () => next(planned()),
    resume: () => {
      const h = planned();
      h.start(nomem(1, 1));
      return next(h);
    },
    grade: () => {
      const h = planned();
      h.start(nomem(1, 1));
      h.finish(nomem(1, 1));
      return next(h);
    },
    'void-floor': () => next(planned().voided(nomem(1, 1), 3)),
    'void-rerun': () => next(planned().voided(nomem(1, 1), 32)),
    refused: () => next(planned().ran(nomem(1, 1), 'PASSED', [], { review: false })),
    confirm: () => {
      const h = planned().ran(nomem(1, 1), 'NO CHANGE', ['a']);
      h.edit(nomem(1, 1));
      return next(h);
    },
    candidate: () => next(planned().ran(nomem(1, 1), 'PASSED')),
    'mem-run': () => next(candidateBuilt()),
    checkpoint: () => next(candidateBuilt().ran(mem(1, 1), 'PASSED')),
    final: () => next(batchOneDone()),
    done: () => next(batchOneDone().ran('final-check', 'VERIFIED')),
    'final-failed': () => next(batchOneDone().ran('final-check', 'FAILED', ['a'])),
    'stop-batch': () => next(fourRunsNoPass(['a', 'b'])),
    edit: () => next(planned().ran(nomem(1, 1), 'PROGRESS', ['a'])),
    rerun: () => {
      // A grade reverted what its run tried, and the half passed on prose no run of it ran (test/unit/basis.test.ts).
      const h = planned();
      h.ran(nomem(1, 1), 'NO CHANGE', ['a'], { prose: 'P0' });
      const e = h.edit(nomem(1, 1));
      h.start(nomem(1, 2));
      h.finish(nomem(1, 2), { prose: 'P1' });
      h.revert(e);
      h.grade(nomem(1, 2), 'PASSED', [], { prose: 'P2' });
      return next(h);
    },
    repair: () => {
      // The run commit amended with a message of one's own: its files, no trailers (src/core/rewritten.ts).
      const h = planned();
      h.start(nomem(1, 1));
      h.commits.push({ oid: fakeOid(h.commits.length + 1), message: 'batch 1 ran\n', stepFiles: [`.tune/demo/runs/${nomem(1, 1)}/results.json`] });
      return next(h);
    },
  };

  for (const kind of NEXT_KINDS) {
    const withoutCommand = kind === 'done' || kind === 'void-floor' || kind === 'final-failed';
    it(`${kind}: ${withoutCommand ? 'no command' : 'a runnable command'} (docs/method.md#next)`, () => {
      const step = scenarios[kind]();
      expect(step.kind).toBe(kind);
      expect(Object.keys(step).sort()).toEqual(['batch', 'command', 'half', 'kind', 'message', 'notes', 'run']);
      expect(step.message.length).toBeGreaterThan(0);
      if (withoutCommand) expect(step.command).toBeNull();
      else expect(step.command).toMatch(/^git tune [a-z]/);
    });
  }
});
