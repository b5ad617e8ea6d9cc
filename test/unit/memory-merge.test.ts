import { describe, expect, it } from 'vitest';
import type { MemoryWrite } from '../../src/contracts/result.js';
import { describeConflict, diffTrees, planCandidate, type MemoryTree } from '../../src/core/memory.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const tree = (files: Record<string, string>): MemoryTree => new Map(Object.entries(files).map(([p, c]) => [p, bytes(c)]));
const text = (t: MemoryTree) => Object.fromEntries([...t].map(([p, c]) => [p, Buffer.from(c).toString('utf8')]));
const added = (path: string, content: string): MemoryWrite => ({ path, op: 'added', content, encoding: 'utf8', savedTwice: false });
const changed = (path: string, content: string): MemoryWrite => ({ path, op: 'changed', content, encoding: 'utf8', savedTwice: false });
const deleted = (path: string): MemoryWrite => ({ path, op: 'deleted', savedTwice: false });

describe('candidate memory merge plan (docs/method.md#memory)', () => {
  it('is the last good memory plus every case write, in run order', () => {
    const plan = planCandidate(tree({ 'old.md': 'old\n' }), [
      { caseId: 'b', writes: [added('facts/b.md', 'about b\n')] },
      { caseId: 'a', writes: [added('facts/a.md', 'about a\n')] },
    ]);
    expect(text(plan.files)).toEqual({ 'facts/a.md': 'about a\n', 'facts/b.md': 'about b\n', 'old.md': 'old\n' });
    expect([...plan.files.keys()]).toEqual(['facts/a.md', 'facts/b.md', 'old.md']); // sorted, whatever the run order
    expect(plan.conflicts).toEqual([]);
    expect(plan.problems).toEqual([]);
  });

  it('equals the last good memory when no case wrote anything', () => {
    const base = tree({ 'x.md': 'x' });
    const plan = planCandidate(base, []);
    expect(text(plan.files)).toEqual({ 'x.md': 'x' });
  });

  it('decodes base64 writes byte for byte', () => {
    const binary = Buffer.from([0, 255, 1, 2]);
    const plan = planCandidate(new Map(), [
      { caseId: 'a', writes: [{ path: 'blob.bin', op: 'added', content: binary.toString('base64'), encoding: 'base64', savedTwice: false }] },
    ]);
    expect(Buffer.from(plan.files.get('blob.bin')!)).toEqual(binary);
  });

  it('keeps the first case at a path two cases wrote differently, the other beside it, and reports it', () => {
    const plan = planCandidate(new Map(), [
      { caseId: 'a', writes: [added('shared.md', 'from a\n')] },
      { caseId: 'b', writes: [added('shared.md', 'from b\n')] },
      { caseId: 'c', writes: [added('shared.md', 'from c\n')] },
    ]);
    expect(text(plan.files)).toEqual({
      'shared.md': 'from a\n',
      'shared.md.conflict-b': 'from b\n',
      'shared.md.conflict-c': 'from c\n',
    });
    expect(plan.conflicts).toEqual([
      { kind: 'different-content', path: 'shared.md', kept: 'a', other: 'b', movedTo: 'shared.md.conflict-b' },
      { kind: 'different-content', path: 'shared.md', kept: 'a', other: 'c', movedTo: 'shared.md.conflict-c' },
    ]);
    expect(describeConflict(plan.conflicts[0]!)).toBe('shared.md: a and b wrote different content; a\'s is kept, b\'s is at shared.md.conflict-b');
  });

  it('sees no conflict when cases write the same content', () => {
    const plan = planCandidate(new Map(), [
      { caseId: 'a', writes: [added('same.md', 'same\n')] },
      { caseId: 'b', writes: [added('same.md', 'same\n')] },
    ]);
    expect(text(plan.files)).toEqual({ 'same.md': 'same\n' });
    expect(plan.conflicts).toEqual([]);
  });

  it('lets a case replace or delete a file of the last good memory without a conflict', () => {
    const plan = planCandidate(tree({ 'keep.md': 'v1', 'gone.md': 'bye' }), [
      { caseId: 'a', writes: [changed('keep.md', 'v2'), deleted('gone.md')] },
    ]);
    expect(text(plan.files)).toEqual({ 'keep.md': 'v2' });
    expect(plan.conflicts).toEqual([]);
  });

  it('never lets a deletion beat a write, in either order', () => {
    const writeFirst = planCandidate(new Map(), [
      { caseId: 'a', writes: [added('note.md', 'kept')] },
      { caseId: 'b', writes: [deleted('note.md')] },
    ]);
    expect(text(writeFirst.files)).toEqual({ 'note.md': 'kept' });
    expect(writeFirst.conflicts).toEqual([{ kind: 'delete-vs-write', path: 'note.md', kept: 'a', other: 'b', movedTo: null }]);

    const deleteFirst = planCandidate(tree({ 'note.md': 'old' }), [
      { caseId: 'a', writes: [deleted('note.md')] },
      { caseId: 'b', writes: [changed('note.md', 'new')] },
    ]);
    expect(text(deleteFirst.files)).toEqual({ 'note.md': 'new' });
    expect(deleteFirst.conflicts).toEqual([{ kind: 'delete-vs-write', path: 'note.md', kept: 'b', other: 'a', movedTo: null }]);
    expect(describeConflict(deleteFirst.conflicts[0]!)).toContain('a deleted what b wrote');
  });

  it('moves a write aside when one case has a file where another needs a folder', () => {
    const fileThenDir = planCandidate(new Map(), [
      { caseId: 'a', writes: [added('notes', 'a file')] },
      { caseId: 'b', writes: [added('notes/x.md', 'in a folder')] },
    ]);
    expect(text(fileThenDir.files)).toEqual({ notes: 'a file', 'notes.conflict-b/x.md': 'in a folder' });
    expect(fileThenDir.conflicts).toEqual([{ kind: 'file-vs-directory', path: 'notes', kept: 'a', other: 'b', movedTo: 'notes.conflict-b/x.md' }]);

    const dirThenFile = planCandidate(tree({ 'notes/x.md': 'last good' }), [
      { caseId: 'b', writes: [added('notes', 'a file')] },
    ]);
    expect(text(dirThenFile.files)).toEqual({ 'notes/x.md': 'last good', 'notes.conflict-b': 'a file' });
    expect(dirThenFile.conflicts[0]).toMatchObject({ kind: 'file-vs-directory', kept: 'last-good', other: 'b' });
    expect(describeConflict(dirThenFile.conflicts[0]!)).toContain('the last good memory has it');
  });

  it('picks a free name when the conflict name is taken', () => {
    const plan = planCandidate(tree({ 'm.md.conflict-b': 'earlier' }), [
      { caseId: 'a', writes: [added('m.md', 'a')] },
      { caseId: 'b', writes: [added('m.md', 'b')] },
    ]);
    expect(text(plan.files)).toEqual({ 'm.md': 'a', 'm.md.conflict-b': 'earlier', 'm.md.conflict-b-2': 'b' });
  });

  it('refuses writes that would leave the memory, or that carry no content', () => {
    const plan = planCandidate(new Map(), [
      { caseId: 'a', writes: [added('../escape.md', 'x'), added('/abs.md', 'x'), added('.git/config', 'x'), added('ok.md', 'fine')] },
      { caseId: 'b', writes: [{ path: 'empty.md', op: 'added', savedTwice: false }] },
    ]);
    expect(text(plan.files)).toEqual({ 'ok.md': 'fine' });
    expect(plan.problems).toEqual([
      'a: write to `../escape.md` must not hold empty, `.` or `..` segments',
      'a: write to `/abs.md` must be a relative path with / separators',
      'a: write to `.git/config` must not hold a `.git` segment',
      'b: added `empty.md` records no content',
    ]);
  });
});

describe('replacing a memory tree whole', () => {
  it('lists added, changed and deleted files with their sizes', () => {
    const diff = diffTrees(tree({ 'same.md': 's', 'edit.md': 'v1', 'stale.md': 'old!' }), tree({ 'same.md': 's', 'edit.md': 'v22', 'new.md': 'n' }));
    expect(diff).toEqual({
      added: [{ path: 'new.md', bytes: 1 }],
      changed: [{ path: 'edit.md', bytes: 3 }],
      deleted: [{ path: 'stale.md', bytes: 4 }],
      unchanged: 1,
      files: 3,
      bytes: 5,
    });
  });
});
