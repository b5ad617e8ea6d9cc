import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { difficultInput } from '../../src/app/difficult.js';
import { difficultFileAfter } from '../../src/core/difficult-file.js';
import { isRefusal } from '../../src/core/refusal.js';
import { loadTuning } from '../../src/app/tuning.js';
import { openRepo } from '../../src/git/open.js';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { passGrade } from '../helpers/tuning.js';

/**
 * `git tune difficult` (docs/method.md#difficult-list): the list with open / fixed / stuck,
 * retries and notes; `add` and `fix` as one commit each; retries counted from
 * the batches planned after an entry was added (docs/method.md#batches).
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];

function setup(config: Array<[string, string]>): TempRepo {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
  repos.push(repo);
  repo.write({ 'cases.yaml': IDS.map((id) => `- ${JSON.stringify({ id, class: 'c', input: id, checks: [{ type: 'contains', value: 'politely' }] })}`).join('\n') + '\n' });
  const init = repo.tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
  expect(init.code, init.stderr).toBe(0);
  for (const [k, v] of config) {
    const r = repo.tune(['config', 'set', k, v]);
    expect(r.code, r.stderr).toBe(0);
  }
  expect(repo.tune(['select']).code).toBe(0);
  expect(repo.tune(['batch']).code).toBe(0);
  return repo;
}

const tip = (repo: TempRepo) => repo.git('rev-parse', 'tune/desk').trim();
const lastTrailers = (repo: TempRepo) => repo.git('log', '-1', '--format=%(trailers:only)', 'tune/desk');
const fileAtTip = (repo: TempRepo) => JSON.parse(repo.git('show', 'tune/desk:.tune/desk/difficult.json'));
const clean = (repo: TempRepo) => repo.git('status', '--porcelain').replace(/^\?\? cases.yaml\n/m, '');
const batchPlan = (repo: TempRepo, n: number) => JSON.parse(readFileSync(repo.path(`.tune/desk/batches/batch0${n}.json`), 'utf8'));

function ok(repo: TempRepo, args: string[]) {
  const r = repo.tune(args);
  expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
}

/** Batch n from its first no-memory run to the plan of batch n+1, every run passing. */
function passBatch(repo: TempRepo, n: number): void {
  ok(repo, ['run']);
  passGrade(repo, `batch0${n}-nomem-run1`);
  ok(repo, ['memory', 'candidate']);
  ok(repo, ['run']);
  passGrade(repo, `batch0${n}-mem-run1`);
  ok(repo, ['memory', 'checkpoint']);
  ok(repo, ['batch']);
}

describe('git tune difficult', () => {
  it('adds and fixes cases as one commit each, keeps every note, and lists them as text and JSON', () => {
    const repo = setup([['minBatch', '2'], ['maxBatch', '2']]);
    const empty = repo.tune(['difficult']);
    expect(empty.code).toBe(0);
    expect(empty.stdout.trim()).toBe('the difficult list is empty');
    expect(repo.tuneJson(['difficult'])).toEqual({ maxRetries: 3, entries: [], warnings: [] });

    const added = ok(repo, ['difficult', 'add', 'a', '--why', 'wrong', '--note', 'still quotes 14 days']);
    expect(added.stdout).toContain('added a to the difficult list (wrong)');
    expect(added.stderr).toContain('next: run batch 1 without memory');
    expect(lastTrailers(repo)).toContain('Tune-Step: difficult\nTune-Difficult: add a wrong');
    expect(repo.git('log', '-1', '--format=%B', 'tune/desk')).toContain('tune(desk): difficult add a (wrong)\n\nNote: still quotes 14 days');
    // Beside the README the step regenerates (git indents every stat line but the first after trim).
    expect(repo.git('show', '--stat', '--format=', 'tune/desk').trim()).toMatch(/^ ?\.tune\/desk\/difficult\.json \| \d+ \+*$/m);
    expect(fileAtTip(repo)).toEqual([{ id: 'a', reason: 'wrong', batch: 1, fixed: false, notes: ['still quotes 14 days'] }]);
    expect(clean(repo)).toBe('');

    // Refusals write nothing.
    const before = tip(repo);
    const again = repo.tune(['difficult', 'add', 'a', '--why', 'wrong']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('a is already on the difficult list with reason wrong');
    const unknown = repo.tune(['difficult', 'add', 'zz', '--why', 'wrong']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('zz is not a case of the dataset');
    const badReason = repo.tune(['difficult', 'add', 'b', '--why', 'hard']);
    expect(badReason.code).toBe(2);
    expect(badReason.stderr).toContain('--why must be one of wrong, regressed, flaky, memory, costly (found "hard")');
    const notOpen = repo.tune(['difficult', 'fix', 'b']);
    expect(notOpen.code).toBe(2);
    expect(notOpen.stderr).toContain('b is not open on the difficult list');
    const badJson = repo.tune(['difficult', 'fix', 'b', '--json']);
    expect(JSON.parse(badJson.stdout).error.code).toBe('not-on-list');
    expect(tip(repo)).toBe(before);

    // The same reason with a note records the note alone; another reason changes it.
    ok(repo, ['difficult', 'add', 'a', '--why', 'wrong', '--note', 'the rubric wants days']);
    expect(lastTrailers(repo)).not.toContain('Tune-Difficult');
    ok(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(lastTrailers(repo)).toContain('Tune-Difficult: add a flaky');

    ok(repo, ['difficult', 'add', 'b', '--why', 'costly']);
    const fixed = ok(repo, ['difficult', 'fix', 'b', '--note', 'cheap now']);
    expect(fixed.stdout).toContain('marked b fixed');
    expect(lastTrailers(repo)).toContain('Tune-Difficult: fix b');
    const twice = repo.tune(['difficult', 'fix', 'b']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('fix b: b is already fixed');

    const text = ok(repo, ['difficult']).stdout;
    expect(text).toBe([
      'id  status  reason  added in  retries',
      'a   open    flaky   batch 1   0 of 3',
      'b   fixed   costly  batch 1   0 of 3',
      '',
      'notes:',
      '  a: still quotes 14 days',
      '  a: the rubric wants days',
      '  b: cheap now',
      '',
      '1 open, 0 stuck, 1 fixed',
      '',
    ].join('\n'));
    expect(repo.tuneJson(['difficult']).entries).toEqual([
      { id: 'a', status: 'open', reason: 'flaky', batch: 1, retries: 0, fixed: false, notes: ['still quotes 14 days', 'the rubric wants days'] },
      { id: 'b', status: 'fixed', reason: 'costly', batch: 1, retries: 0, fixed: true, notes: ['cheap now'] },
    ]);
    expect(fileAtTip(repo)).toEqual([
      { id: 'a', reason: 'flaky', batch: 1, fixed: false, notes: ['still quotes 14 days', 'the rubric wants days'] },
      { id: 'b', reason: 'costly', batch: 1, fixed: true, notes: ['cheap now'] },
    ]);
    // A fixed case can come back; its notes stay with it.
    const back = repo.tuneJson(['difficult', 'add', 'b', '--why', 'regressed', '--note', 'broke again']);
    expect(back.entry).toEqual({ id: 'b', status: 'open', reason: 'regressed', batch: 1, retries: 0, fixed: false, notes: ['cheap now', 'broke again'] });
    expect(back.next.kind).toBe('run');
    expect(clean(repo)).toBe('');
    repo.fsck();
  }, 120_000);

  it('counts retries as later batches hold the case, until it is stuck; a stuck case may still be fixed', () => {
    const repo = setup([['minBatch', '2'], ['maxBatch', '2'], ['recheck', '1'], ['maxRetries', '2']]);
    const hard = batchPlan(repo, 1).new[0] as string;
    ok(repo, ['difficult', 'add', hard, '--why', 'wrong']);
    const entry = () => repo.tuneJson(['difficult']).entries[0];
    expect(entry()).toMatchObject({ id: hard, status: 'open', batch: 1, retries: 0 });

    passBatch(repo, 1);
    expect(batchPlan(repo, 2).recheck).toEqual([hard]); // open entries are rechecked first
    expect(entry()).toMatchObject({ status: 'open', retries: 1 });

    passBatch(repo, 2);
    expect(batchPlan(repo, 3).recheck).toEqual([hard]);
    expect(entry()).toMatchObject({ status: 'stuck', retries: 2 });
    expect(ok(repo, ['difficult']).stdout).toContain(`${hard}   stuck   wrong   batch 1   2 of 2`);
    expect(repo.tuneJson(['status']).difficult).toEqual({ open: 0, fixed: 0, stuck: 1 });

    ok(repo, ['difficult', 'fix', hard, '--note', 'fixed by hand after batch 3']);
    expect(entry()).toMatchObject({ status: 'fixed', retries: 2, notes: ['fixed by hand after batch 3'] });
    repo.fsck();
  }, 180_000);

  it("gives grade the difficult.json its commit writes for a findings file's lines, or every line it cannot apply", async () => {
    const repo = setup([['minBatch', '2']]);
    ok(repo, ['difficult', 'add', 'a', '--why', 'wrong', '--note', 'first']);
    const tuning = await loadTuning(await openRepo(repo.dir));
    const input = await difficultInput(tuning);
    const file = difficultFileAfter(input, [{ op: 'fix', id: 'a' }, { op: 'add', id: 'c', reason: 'costly' }], new Map([['c', ['12 llm calls']], ['a', ['right now']]]));
    if (isRefusal(file)) throw new Error(file.message);
    expect(file.path).toBe('.tune/desk/difficult.json');
    expect(JSON.parse(file.content)).toEqual([
      { id: 'a', reason: 'wrong', batch: 1, fixed: true, notes: ['first', 'right now'] },
      { id: 'c', reason: 'costly', batch: 1, fixed: false, notes: ['12 llm calls'] },
    ]);
    const err = difficultFileAfter(input, [
      { op: 'add', id: 'a', reason: 'wrong' },
      { op: 'fix', id: 'b' },
      { op: 'add', id: 'nope', reason: 'flaky' },
      { op: 'add', id: 'c', reason: 'costly' },
      { op: 'fix', id: 'c' },
      { op: 'fix', id: 'c' },
    ], new Map([['d', ['orphan note']]]));
    if (!isRefusal(err)) throw new Error('expected a refusal');
    expect(err).toMatchObject({ code: 'bad-difficult-lines', kind: 'usage' });
    expect(err.details).toEqual([
      'add a wrong: a is already on the difficult list with reason wrong: nothing to change (drop the line, or give another reason)',
      'fix b: b is not on the difficult list',
      'add nope flaky: nope is not a case of the dataset',
      'fix c: c is already fixed: nothing to change (drop the line)',
      'note for d: d is not on the difficult list (add it first: add d <reason>)',
    ]);
  });
});
