import { describe, expect, it } from 'vitest';
import { checkDifficultChanges } from '../../src/core/difficult-lines.js';
import type { DifficultChange } from '../../src/core/steps.js';
import { add, fix, History, nomem } from '../helpers/history.js';

/** The rules a change to the difficult list follows, each against the list as the changes before it left it. */
const ABCD = ['a', 'b', 'c', 'd'];
// a: open (wrong); b: fixed; c, d: never listed.
const list = () => {
  const h = new History().setup(4).plan(1, ABCD).ran(nomem(1, 1), 'MIXED', ['a', 'b'], { difficult: [add('a', 'wrong'), add('b', 'flaky')] });
  h.difficult(fix('b'));
  return h.fold(ABCD).difficult;
};
const dataset = new Set(ABCD);
const check = (changes: DifficultChange[], notes: Record<string, string[]> = {}) =>
  checkDifficultChanges(list(), dataset, changes, new Map(Object.entries(notes)));

describe('checkDifficultChanges', () => {
  it.each<[string, DifficultChange[], Record<string, string[]>, DifficultChange[], string[]]>([
    ['an add of a case never listed', [add('c', 'costly')], {}, [add('c', 'costly')], []],
    ['an add with another reason changes it', [add('a', 'memory')], {}, [add('a', 'memory')], []],
    ['an add of a fixed case lists it again', [add('b', 'wrong')], {}, [add('b', 'wrong')], []],
    ['a fix of an open case', [fix('a')], {}, [fix('a')], []],
    ['the same reason again, with a note: the note alone', [add('a', 'wrong')], { a: ['still'] }, [], []],
    ['the same reason again, no note', [add('a', 'wrong')], {}, [], ['add a wrong: a is already on the difficult list with reason wrong: nothing to change (drop the line, or give another reason)']],
    ['a case not in the dataset', [add('zz', 'wrong')], {}, [], ['add zz wrong: zz is not a case of the dataset']],
    ['not even a case id', [fix('a b')], {}, [], ['fix a b: a b is not a case of the dataset (not even a valid case id)']],
    ['a reason that is none', [{ op: 'add', id: 'c', reason: 'boring' } as unknown as DifficultChange], {}, [], ['add c boring: the reason must be one of wrong, regressed, flaky, memory, costly']],
    ['a fix of a case not listed', [fix('c')], {}, [], ['fix c: c is not on the difficult list']],
    ['a fix of a fixed case', [fix('b')], {}, [], ['fix b: b is already fixed: nothing to change (drop the line)']],
    ['each against the list the ones before left: add then fix', [add('c', 'wrong'), fix('c')], {}, [add('c', 'wrong'), fix('c')], []],
    ['fix twice', [fix('a'), fix('a')], {}, [fix('a')], ['fix a: a is already fixed: nothing to change (drop the line)']],
    ['a note for a case not listed', [], { d: ['why'] }, [], ['note for d: d is not on the difficult list (add it first: add d <reason>)']],
  ])('%s', (_, changes, notes, moving, problems) => {
    expect(check(changes, notes)).toEqual({ moving, problems });
  });
});
