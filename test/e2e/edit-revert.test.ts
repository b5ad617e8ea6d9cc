import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { RUNNER, RUNNER_CASES, templateAsync } from '../helpers/tuning.js';

/**
 * `git tune edit` and `git tune revert` (docs/method.md#edits, docs/git-model.md) through the real CLI:
 * what an edit may touch and must say, hand commits that count as edits,
 * and reverts as new commits that restore the prose exactly, or stop on a
 * true conflict and write nothing.
 *
 * The fixture runner answers `<input> <agents/prompt.md>`: a line added to
 * prompt.md can turn a case right; agents/refunds.md is prose that no answer
 * reads, so an edit there fixes nothing.
 */
const RUN1 = 'batch01-nomem-run1';
const RUN2 = 'batch01-nomem-run2';
/** Prose no answer reads: long enough that edits at its two ends do not overlap. */
const REFUNDS = Array.from({ length: 12 }, (_, i) => `- refund rule ${i + 1}: as the handbook says`).join('\n') + '\n';

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});


const read = (repo: TempRepo, file: string) => readFileSync(repo.path(file), 'utf8');
const write = (repo: TempRepo, file: string, text: string) => writeFileSync(repo.path(file), text);
const tip = (repo: TempRepo) => repo.git('rev-parse', 'HEAD').trim();
const changesOf = (run: string) => `.tune/desk/runs/${run}/changes.md`;
const replaceLine = (text: string, n: number, line: string) => text.split('\n').map((l, i) => (i === n - 1 ? line : l)).join('\n');

/** A tuning of the three cases whose first run is graded as drafted (built once per config, a copy per test). */
async function graded(config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await templateAsync(`graded ${JSON.stringify(config)}`, () => buildGraded(config)));
  repos.push(repo);
  return repo;
}

async function buildGraded(config: Array<[string, string]>): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agents/refunds.md': REFUNDS, 'agents/memory-policy.md': '- save what you look up\n', 'notes/todo.md': 'later\n' });
  repo.write({ 'cases.yaml': RUNNER_CASES.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
  repo.git('add', 'cases.yaml');
  repo.git('commit', '-q', '-m', 'the cases');
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
  for (const [key, value] of config) await tuneOk(repo, ['config', 'set', key, value]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  await tuneOk(repo, ['grade']);
  return repo;
}

/** Writes `files`, appends `changes` to the run's changes.md, and records the edit; returns its commit. */
async function edit(repo: TempRepo, run: string, files: Record<string, string>, changes: string): Promise<string> {
  repo.write(files);
  let before = '';
  try {
    before = read(repo, changesOf(run));
  } catch {
    // the first edit after this run
  }
  write(repo, changesOf(run), `${before}${changes}\n`);
  await tuneOk(repo, ['edit']);
  return tip(repo);
}

async function edits(repo: TempRepo): Promise<Array<{ commit: string; run: string; status: string; aims: string[] }>> {
  return (JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as { edits: Array<{ commit: string; run: string; status: string; aims: string[] }> }).edits;
}

/**
 * What native git's revert makes of one file: the three-way merge of the
 * file now (HEAD) with the edit's parent, based on the edit (`git merge-file`).
 */
function nativeRevert(repo: TempRepo, edit: string, file: string): { text: string; conflicts: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-merge-file-'));
  try {
    const put = (name: string, rev: string) => {
      writeFileSync(path.join(dir, name), repo.git('show', `${rev}:${file}`));
      return path.join(dir, name);
    };
    const r = spawnSync('git', ['merge-file', '-p', put('now', 'HEAD'), put('edit', edit), put('parent', `${edit}^`)], { encoding: 'utf8' });
    return { text: r.stdout, conflicts: r.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A refused command: its exit code, and nothing written: branch tip and working tree as before. */
async function refused(repo: TempRepo, args: string[], code: number): Promise<string> {
  const before = { tip: tip(repo), status: repo.git('status', '--porcelain') };
  const r = await tuneAsync(repo, args);
  expect(r.code, r.stderr).toBe(code);
  expect({ tip: tip(repo), status: repo.git('status', '--porcelain') }).toEqual(before);
  return r.stderr;
}

/** Files a step commit carries besides its own: the reports regenerated at every step. */
const REPORTS = new Set(['.tune/desk/README.md', '.tune/desk/USAGE.md']);
const filesOf = (repo: TempRepo, rev: string) => repo.git('show', '--name-only', '--format=', rev).trim().split('\n').filter((f) => !REPORTS.has(f)).sort();

// Each test runs ten to twenty CLI commands; side by side on two busy cores that can take a while.
describe.concurrent('git tune edit', { timeout: 180_000 }, () => {
  it('refuses files outside the prose globs, prose without changes.md, and changes.md as the last edit left it', async () => {
    const repo = await graded();
    write(repo, 'notes/todo.md', 'sooner\n');
    expect(await refused(repo, ['edit', 'notes/todo.md'], 2)).toContain('error: notes/todo.md is not prose of this tuning (prose: agents/**/*.md)');
    expect(await refused(repo, ['edit'], 2)).toContain('error: no prose file changed since');
    repo.git('checkout', '--', 'notes/todo.md');

    write(repo, 'agents/prompt.md', 'Answer politely.\nRefunds: 30 days.\n');
    const missing = await refused(repo, ['edit'], 2);
    expect(missing).toContain(`error: ${changesOf(RUN1)} is missing: an edit says what changed and why`);
    expect(missing).toContain(`fix: $EDITOR ${changesOf(RUN1)}   # then: git tune edit`);

    write(repo, changesOf(RUN1), '- prompt.md: the refund window in days\n\nAims: billing-refund-03\n');
    const r = await tuneOk(repo, ['edit']);
    expect(r.stdout).toContain(`edit of ${RUN1} recorded (${tip(repo).slice(0, 7)}): agents/prompt.md; aims billing-refund-03`);
    expect(r.stderr).not.toContain('warning');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Aims,valueonly)').trim()).toBe('billing-refund-03');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Run,valueonly)').trim()).toBe(RUN1);
    expect(filesOf(repo, 'HEAD')).toEqual(['.tune/desk/runs/batch01-nomem-run1/changes.md', 'agents/prompt.md']);

    write(repo, 'agents/prompt.md', 'Answer politely.\nRefunds: 30 days.\nKeep it short.\n');
    const unchanged = await refused(repo, ['edit'], 2);
    expect(unchanged).toContain(`error: ${changesOf(RUN1)} does not describe this edit yet (it is as the last edit left it)`);

    // A second edit after the same run adds to changes.md; without an Aims line of its own it aims at the run's wrong cases.
    write(repo, changesOf(RUN1), `${read(repo, changesOf(RUN1))}\n- prompt.md: keep answers short\n`);
    await tuneOk(repo, ['edit']);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Aims,valueonly)').trim()).toBe('');
    expect((await edits(repo)).map((e) => [...e.aims].sort())).toEqual([['billing-refund-03'], ['billing-refund-03', 'tech-reset-02']]);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('warns on stderr, and still records the edit, when added prose names a case id or quotes a case input', async () => {
    const repo = await graded();
    write(repo, 'agents/prompt.md', 'Answer politely.\nFor billing-refund-03 say 30 days.\nIf asked "How do I reset my password?", send the reset link.\n');
    write(repo, changesOf(RUN1), '- prompt.md: two rules\n');
    const first = await tuneOk(repo, ['edit']);
    expect(first.stderr).toContain('warning: this edit names case id billing-refund-03: it tunes to the test\n');
    expect(first.stderr).toContain('warning: this edit quotes the input of case tech-reset-02 verbatim ("How do I reset my password?…"): it tunes to the test\n');
    expect(first.stdout).toContain(`edit of ${RUN1} recorded`);
    expect(repo.git('log', '-1', '--format=%b')).toContain(
      'Warning, this edit may tune to the test: it names case id billing-refund-03; it quotes the input of case tech-reset-02 verbatim',
    );
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)').trim()).toBe('edit');

    write(repo, 'agents/prompt.md', `${read(repo, 'agents/prompt.md')}Say hello to the customer warmly.\n`);
    write(repo, changesOf(RUN1), `${read(repo, changesOf(RUN1))}- prompt.md: greet warmly\n`);
    const second = await tuneOk(repo, ['edit']);
    expect(second.stderr).toContain('warning: this edit quotes the input of case desk-hello verbatim ("Say hello to the customer…"): it tunes to the test');
    expect(second.stderr).not.toContain('billing-refund-03'); // only lines this edit added are read
  });

  it('in a with-memory half, refuses prose outside the memory policy; the policy itself may change', async () => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agents/memory-policy.md': '- save what you look up\n' });
    repos.push(repo);
    repo.write({ 'cases.yaml': `- ${JSON.stringify(RUNNER_CASES[0])}\n` });
    repo.git('add', 'cases.yaml');
    repo.git('commit', '-q', '-m', 'the cases');
    await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
    for (const args of [['select'], ['batch'], ['run'], ['grade', '--verdict', 'PASSED'], ['memory', 'candidate'], ['run'], ['grade', '--draft'], ['grade']]) await tuneOk(repo, args);
    const step = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout);
    expect(step).toMatchObject({ kind: 'edit', half: 'mem', run: 'batch01-mem-run1' });
    expect(step.message).toContain('edit the memory-policy files');

    const run = 'batch01-mem-run1';
    write(repo, 'agents/prompt.md', 'Answer politely and briefly.\n');
    write(repo, 'agents/memory-policy.md', '- save what you look up\n- never save a fact that is already in memory\n');
    write(repo, changesOf(run), '- memory-policy.md: no fact saved twice\n');
    const err = await refused(repo, ['edit'], 2);
    expect(err).toContain(`error: ${run} is a with-memory run: only memory-policy files (agents/memory-policy.md) may change; also changed: agents/prompt.md`);
    expect(err).toContain('fix: git restore agents/prompt.md');
    expect(await refused(repo, ['edit', 'agents/prompt.md'], 2)).toContain('also changed: agents/prompt.md');

    repo.git('restore', 'agents/prompt.md');
    const r = await tuneOk(repo, ['edit']);
    expect(r.stdout).toContain(`edit of ${run} recorded`);
    expect(filesOf(repo, 'HEAD')).toEqual([changesOf(run), 'agents/memory-policy.md']);
    expect((await edits(repo)).at(-1)).toMatchObject({ run, status: 'pending' });
  });

  it('a plain native git commit of prose on the tuning branch after a graded run counts as an edit', async () => {
    const repo = await graded();
    write(repo, 'agents/prompt.md', 'Answer politely.\nRefunds: 30 days.\n');
    repo.git('commit', '-q', '-m', 'Say the refund window in days', '--', 'agents/prompt.md');
    const oid = tip(repo);
    const [hand] = await edits(repo);
    expect(hand).toMatchObject({ commit: oid, run: RUN1, status: 'pending' });
    expect([...hand!.aims].sort()).toEqual(['billing-refund-03', 'tech-reset-02']);
    expect(repo.git('log', '-1', '--format=%(trailers)').trim()).toBe(''); // no hook, no trailers: a hand commit
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout)).toMatchObject({ kind: 'confirm', run: RUN2 });

    // The next run settles it like any edit.
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    expect((await edits(repo))[0]).toMatchObject({ commit: oid, status: 'confirmed' });
  });

  it('after a VOID run, an edit waits for its re-run; refused while a run is unfinished, or when the VOID run is the first of its half', async () => {
    // A runner that answers `<input> <prose>`, or is killed for memory (TEST_OOM), or finds its sandbox down (TEST_DOWN).
    const AGENT = `import fs from 'node:fs';
if (process.env.TEST_OOM) process.exit(137);
const item = JSON.parse(fs.readFileSync(process.env.TUNE_CASE, 'utf8'));
const prose = fs.readFileSync('agents/prompt.md', 'utf8');
const result = process.env.TEST_DOWN ? { answer: null, sandboxDown: 'the sandbox is gone' }
  : { answer: item.input + ' ' + prose, usage: [{ model: 'm', inputTokens: 10, outputTokens: 5 }], llmCalls: 1 };
fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify(result));
`;
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agent.mjs': AGENT });
    repos.push(repo);
    repo.write({ 'cases.yaml': RUNNER_CASES.slice(0, 2).map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
    repo.git('add', 'cases.yaml');
    repo.git('commit', '-q', '-m', 'the cases');
    const tune = (args: string[], env: Record<string, string> = {}) => tuneAsync(repo, args, env);
    await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.mjs', '--dataset', 'cases.yaml']);
    for (const args of [['config', 'set', 'concurrency', '8'], ['select'], ['batch'], ['run'], ['grade', '--verdict', 'NO CHANGE']]) await tuneOk(repo, args);
    const fixes = await edit(repo, RUN1, { 'agents/prompt.md': 'Answer politely.\nRefunds: 30 days.\n' }, '- prompt.md: refunds in days');
    expect((await tune(['run'], { TEST_OOM: '1' })).code).toBe(0);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout)).toMatchObject({ kind: 'void-rerun', run: RUN2 });

    const more = await edit(repo, RUN1, { 'agents/prompt.md': 'Answer politely.\nRefunds: 30 days.\nBe brief.\n' }, '- prompt.md: be brief');
    expect((await edits(repo)).map((e) => [e.commit, e.run, e.status])).toEqual([[fixes, RUN1, 'pending'], [more, RUN1, 'pending']]);

    expect((await tune(['run'], { TEST_DOWN: '1' })).code).toBe(5);
    write(repo, 'agents/prompt.md', 'Answer politely.\nRefunds: 30 days.\nBe brief.\nNo jargon.\n');
    write(repo, changesOf(RUN1), `${read(repo, changesOf(RUN1))}- prompt.md: no jargon\n`);
    const unfinished = await refused(repo, ['edit'], 3);
    expect(unfinished).toContain('error: batch01-nomem-run3 started but has not finished: finish it before editing the prose it runs');
    expect(unfinished).toContain('fix: git tune run');
    repo.git('checkout', '--', 'agents/prompt.md', changesOf(RUN1));

    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    expect((await edits(repo)).map((e) => e.status)).toEqual(['confirmed', 'confirmed']);

    await tuneOk(repo, ['memory', 'candidate']);
    expect((await tune(['run'], { TEST_OOM: '1' })).code).toBe(0);
    write(repo, 'agents/prompt.md', 'Answer politely.\n');
    const first = await refused(repo, ['edit'], 3);
    expect(first).toContain('error: batch01-mem-run1 was VOID and no run of its half is graded: run its cases again before editing');
    expect(first).toContain('fix: git tune next');
  });
});

describe.concurrent('git tune revert', { timeout: 180_000 }, () => {
  it('with no argument, reverts every pending edit of the half (the grade reverted the unconfirmed one), keeps the confirmed one and says why', async () => {
    const repo = await graded();
    const fixes = await edit(repo, RUN1, { 'agents/prompt.md': 'Answer politely.\nRefunds: 30 days.\n' }, '- prompt.md: refunds in days\n\nAims: billing-refund-03');
    const fixesNothing = await edit(repo, RUN1, { 'agents/refunds.md': replaceLine(REFUNDS, 2, '- refund rule 2: reset links are for passwords') }, '\n## Second edit\n\nAims: tech-reset-02');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const graded2 = await tuneOk(repo, ['grade']);
    // Recording the grade settled the two edits: the one that fixed nothing is reverted by a commit of the grade's own.
    expect(graded2.stdout).toMatch(new RegExp(`^reverted ${fixesNothing.slice(0, 7)} with [0-9a-f]{7} \\(not confirmed by ${RUN2}\\): agents/refunds.md$`, 'm'));
    expect(read(repo, 'agents/refunds.md')).toBe(REFUNDS);
    const pending = await edit(repo, RUN2, { 'agents/refunds.md': replaceLine(read(repo, 'agents/refunds.md'), 11, '- refund rule 11: ask twice') }, '- refunds.md: rule 11');
    expect((await edits(repo)).map((e) => [e.commit, e.status])).toEqual([[fixes, 'confirmed'], [fixesNothing, 'reverted'], [pending, 'pending']]);

    const before = tip(repo);
    const r = await tuneOk(repo, ['revert']);
    expect(r.stdout).toBe([
      `reverted ${pending.slice(0, 7)} (pending): agents/refunds.md`,
      `kept ${fixes.slice(0, 7)}: confirmed by ${RUN2}`,
      '',
    ].join('\n'));
    expect(read(repo, 'agents/refunds.md')).toBe(REFUNDS);
    expect(read(repo, 'agents/prompt.md')).toBe('Answer politely.\nRefunds: 30 days.\n');

    // New commits on top, one per edit; history not rewritten.
    expect(() => repo.git('merge-base', '--is-ancestor', before, 'HEAD')).not.toThrow();
    const log = repo.git('log', '--format=%s%n%(trailers:key=Tune-Step,valueonly)%(trailers:key=Tune-Reverts,valueonly)', `${before}..HEAD`).split('\n').filter(Boolean);
    expect(log).toEqual([`Revert "tune(desk): edit after ${RUN2}: agents/refunds.md"`, 'revert', pending]);
    expect(repo.git('log', '-1', '--format=%b').trim()).toContain(`This reverts commit ${pending}: no run has tried it.`);
    expect((await edits(repo)).map((e) => e.status)).toEqual(['confirmed', 'reverted', 'reverted']);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(() => repo.fsck()).not.toThrow();

    const after = tip(repo);
    const again = await tuneOk(repo, ['revert']);
    expect(again.stdout).toBe(`nothing to revert: no unconfirmed or pending edit in this half\nkept ${fixes.slice(0, 7)}: confirmed by ${RUN2}\n`);
    expect(tip(repo)).toBe(after);
  });

  it('git tune revert <commit> reverts one edit exactly, also when a later edit changed other lines of the same file', async () => {
    const repo = await graded();
    const early = await edit(repo, RUN1, { 'agents/refunds.md': replaceLine(REFUNDS, 2, '- refund rule 2: within 30 days') }, '- rule 2');
    const late = await edit(repo, RUN1, { 'agents/refunds.md': replaceLine(read(repo, 'agents/refunds.md'), 11, '- refund rule 11: by bank transfer') }, '- rule 11');
    const native = nativeRevert(repo, early, 'agents/refunds.md');
    expect(native.conflicts).toBe(0);
    const r = await tuneOk(repo, ['revert', early.slice(0, 9)]);
    expect(r.stdout).toBe(`reverted ${early.slice(0, 7)} (pending): agents/refunds.md\n`);
    expect(read(repo, 'agents/refunds.md')).toBe(replaceLine(REFUNDS, 11, '- refund rule 11: by bank transfer'));
    expect(read(repo, 'agents/refunds.md')).toBe(native.text);
    expect(repo.git('log', '-1', '--format=%s%n%(trailers:key=Tune-Reverts,valueonly)').trim()).toBe(`Revert "tune(desk): edit after ${RUN1}: agents/refunds.md"\n${early}`);
    expect((await edits(repo)).map((e) => [e.commit, e.status])).toEqual([[early, 'reverted'], [late, 'pending']]);

    expect(await refused(repo, ['revert', early], 3)).toContain(`error: ${early.slice(0, 7)} is already reverted`);
    expect(await refused(repo, ['revert', 'deadbeef'], 2)).toContain('error: deadbeef is not an edit of tuning desk');
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('a true conflict (a later edit changed the same lines) stops with the file and hunk named, exit 4, and writes nothing', async () => {
    const repo = await graded();
    const first = await edit(repo, RUN1, { 'agents/refunds.md': replaceLine(REFUNDS, 6, '- refund rule 6: within 30 days') }, '- rule 6');
    await edit(repo, RUN1, { 'agents/refunds.md': replaceLine(read(repo, 'agents/refunds.md'), 6, '- refund rule 6: within 60 days') }, '- rule 6 again');
    const before = read(repo, 'agents/refunds.md');
    expect(nativeRevert(repo, first, 'agents/refunds.md').conflicts).toBe(1);
    const err = await refused(repo, ['revert', first], 4);
    expect(err).toContain(`error: cannot revert ${first.slice(0, 7)}: agents/refunds.md changed since, and its hunk @@ -3,7 +3,7 @@ no longer applies; nothing was written`);
    expect(err).toContain('  - -- refund rule 6: within 30 days');
    expect(err).toContain('  - +- refund rule 6: as the handbook says');
    expect(err).toContain(`fix: edit agents/refunds.md back by hand and say so in ${changesOf(RUN1)}, then: git tune edit`);
    expect(read(repo, 'agents/refunds.md')).toBe(before);
    expect((await edits(repo)).map((e) => e.status)).toEqual(['pending', 'pending']);
    expect(() => repo.fsck()).not.toThrow();
    // The fix as printed: the file edited back by hand, a line in changes.md, then `git tune edit`.
    write(repo, 'agents/refunds.md', REFUNDS);
    write(repo, changesOf(RUN1), `${read(repo, changesOf(RUN1))}- rule 6 back as the handbook says\n`);
    const fixed = await tuneAsync(repo, ['edit']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)').trim()).toBe('edit');
    expect(read(repo, 'agents/refunds.md')).toBe(REFUNDS);
  });
});
