import { describe, expect, it } from 'vitest';
import { foldHistory } from '../../src/core/fold.js';
import { decideNext } from '../../src/core/next.js';
import { generatedReadme, isSquashedMessage, isStepFile, reflogCommits, stepFilesOf, undoCount } from '../../src/core/rewritten.js';
import { parseReflog } from '../../src/git/reflog.js';
import { fakeOid, History, nextInput, nomem } from '../helpers/history.js';

/**
 * Rewritten steps, decided from history alone (src/core/rewritten.ts): which
 * files only a step writes, what the fold records, and `next` naming the
 * repair before anything else. The commands and native git: test/e2e/rewritten.test.ts.
 */
const ABC = ['a', 'b', 'c'];
const planned = () => new History().setup(3).plan(1, ABC);
const results = (run: string) => `.tune/demo/runs/${run}/results.json`;

describe('step files: what only a step writes under .tune/<name>/', () => {
  it('run folders, batch plans, selection, dataset, baseline and the difficult list are step files', () => {
    for (const f of ['runs/batch01-nomem-run1/results.json', 'runs/batch01-nomem-run1/run.json', 'runs/batch01-nomem-run1/judge.json',
      'batches/batch01.json', 'selection.json', 'dataset.jsonl', 'held-out.jsonl', 'difficult.json', 'baseline/results.json']) {
      expect(isStepFile('demo', `.tune/demo/${f}`), f).toBe(true);
    }
  });

  it('prose, config.yaml, the reports, memory and a run\'s findings.md and changes.md are a hand commit\'s to change', () => {
    for (const f of ['agents/prompt.md', '.tune/demo/config.yaml', '.tune/demo/README.md', '.tune/demo/USAGE.md', '.tune/demo/memory/last-good/stray.md',
      '.tune/demo/runs/batch01-nomem-run1/changes.md', '.tune/demo/runs/batch01-nomem-run1/findings.md',
      '.tune/other/runs/batch01-nomem-run1/results.json', '.tune/demo-2/selection.json']) {
      expect(isStepFile('demo', f), f).toBe(false);
    }
    expect(stepFilesOf('demo', ['agents/prompt.md', '.tune/demo/selection.json'])).toEqual(['.tune/demo/selection.json']);
    expect(isStepFile('demo', generatedReadme('demo'))).toBe(true);
  });
});

describe('the fold records rewritten steps', () => {
  it('a hand commit that changed step files is rewritten; one that changed prose only is still a hand edit', () => {
    const h = planned().ran(nomem(1, 1), 'PROGRESS', ['a']);
    const edit = h.hand(true);
    const state = foldHistory('demo', h.commits);
    expect(state.rewritten).toEqual([]);
    expect(state.edits.map((e) => [e.oid, e.hand])).toEqual([[edit, true]]);

    const amended = fakeOid(h.commits.length + 1);
    h.commits.push({ oid: amended, message: 'my words\n', touchesProse: false, stepFiles: [results(nomem(1, 1))] });
    const after = foldHistory('demo', h.commits);
    expect(after.rewritten).toEqual([{ oid: amended, index: h.commits.length - 1, kind: 'unsealed', files: [results(nomem(1, 1))] }]);
    expect(undoCount(after.commits, after.rewritten[0]!)).toBe(1);
  });

  it('a note (the hooks\' trailers) that changed step files is rewritten; a note that did not is a note', () => {
    const h = planned();
    h.step({ step: 'note' });
    expect(foldHistory('demo', h.commits).rewritten).toEqual([]);
    const oid = h.step({ step: 'note' });
    h.commits[h.commits.length - 1]!.stepFiles = ['.tune/demo/batches/batch01.json'];
    h.start(nomem(1, 1));
    const state = foldHistory('demo', h.commits);
    expect(state.rewritten.map((r) => [r.oid, r.kind])).toEqual([[oid, 'note']]);
    // counted from the tip: the note and the run-start after it
    expect(undoCount(state.commits, state.rewritten[0]!)).toBe(2);
  });

  it('a message holding two sealed trailer blocks (a squash) is rewritten', () => {
    const h = planned();
    h.start(nomem(1, 1));
    const start = h.commits.pop()!;
    h.finish(nomem(1, 1));
    const finish = h.commits.pop()!;
    const squashed = { oid: finish.oid, message: `${start.message}\n${finish.message}` };
    expect(isSquashedMessage(squashed.message)).toBe(true);
    expect(isSquashedMessage(finish.message)).toBe(false);
    const state = foldHistory('demo', [...h.commits, squashed]);
    expect(state.rewritten.map((r) => [r.oid, r.kind])).toEqual([[finish.oid, 'squashed']]);
  });

  it('next names the repair first: the undo to the last good step, whatever else is due', () => {
    const h = planned().ran(nomem(1, 1), 'PROGRESS', ['a']);
    expect(decideNext(nextInput(h, { selection: ABC })).kind).toBe('edit');
    expect(fakeOid(99).slice(0, 7)).toBe('eb1a91b');
    h.commits.splice(h.commits.length - 2, 0, { oid: fakeOid(99), message: 'tidy up\n', stepFiles: [results(nomem(1, 1))] });
    const step = decideNext(nextInput(h, { selection: ABC }));
    expect(step.kind).toBe('repair');
    expect(step.command).toBe('git tune undo 3');
    expect(step.message).toMatch(/^commit eb1a91b changed step files \(\.tune\/demo\/runs\/batch01-nomem-run1\/results\.json\) without a step's trailers/);
  });
});

describe('reflogs', () => {
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  const c = 'c'.repeat(40);
  const zero = '0'.repeat(40);
  it('parses git\'s lines and names each commit once, newest first, without the tip', () => {
    const branch = parseReflog([
      `${zero} ${a} T <t@e> 100 +0000\tbranch: Created from HEAD`,
      `${a} ${b} T <t@e> 200 +0000\tgit tune`,
      `${b} ${c} T <t@e> 300 +0100\tcommit (amend): my words`,
      'not a reflog line',
      '',
    ].join('\n'));
    expect(branch.map((e) => [e.old.slice(0, 1), e.new.slice(0, 1), e.time, e.message])).toEqual([
      ['0', 'a', 100, 'branch: Created from HEAD'], ['a', 'b', 200, 'git tune'], ['b', 'c', 300, 'commit (amend): my words'],
    ]);
    expect(reflogCommits([branch, []], c)).toEqual([b, a]);
  });
});
