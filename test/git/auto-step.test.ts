import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { autoTuning, newSession } from '../../src/app/auto.js';
import { performStep, type StepContext } from '../../src/app/auto-step.js';
import { nextFor } from '../../src/app/decide.js';
import { openTuning } from '../../src/app/tuning.js';
import type { CaseEvent } from '../../src/run/progress.js';
import { TempRepo } from '../helpers/repo.js';
import { tuneOk } from '../helpers/cli.js';
import { plainCase, plannedRepo, RUNNER, stepsBetween } from '../helpers/tuning.js';

/**
 * The steps of `git tune auto`, in-process on real repositories: each
 * returns a typed outcome (done, stuck with its reason and command, void,
 * sandbox-down, budget, interrupted, error with its exit code), and carries
 * its own listener and stop check (two tunings stepped at once do not see
 * each other's cases).
 */
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

async function planned(cases: Array<Record<string, unknown>>, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = await plannedRepo(cases, { config });
  repos.push(repo);
  return repo;
}

function context(repo: TempRepo, over: Partial<StepContext> = {}): StepContext & { lines: string[]; events: CaseEvent[] } {
  const lines: string[] = [];
  const events: CaseEvent[] = [];
  return {
    env: { ...process.env, ...repo.env }, clock: () => new Date(), say: (l) => lines.push(l), detail: (t) => lines.push(t),
    interrupted: { value: false }, stop: () => false, onCase: (e) => events.push(e), ...over, lines, events,
  };
}

/** Does the step `next` says now. */
async function step(repo: TempRepo, ctx: StepContext) {
  const tuning = await openTuning(repo.dir);
  const next = nextFor(tuning);
  return { next, outcome: await performStep(tuning, next, ctx) };
}

const wrongCase = (id: string) => plainCase(id, { checks: [{ type: 'contains', value: 'never said' }] });

describe.concurrent('auto steps: typed outcomes', () => {
  it('run and grade are done, said as the commands a person would type; two tunings stepped at once keep their own cases', async () => {
    const [a, b] = await Promise.all([planned([plainCase('a1'), plainCase('a2')]), planned([plainCase('b1')])]);
    const [ca, cb] = [context(a), context(b)];
    const [ra, rb] = await Promise.all([step(a, ca), step(b, cb)]);
    expect([ra.next.kind, ra.outcome, rb.outcome]).toEqual(['run', { kind: 'done' }, { kind: 'done' }]);
    expect(ca.events.filter((e) => e.kind === 'finished').map((e) => (e as { result: { id: string } }).result.id).sort()).toEqual(['a1', 'a2']);
    expect(cb.events.filter((e) => e.kind === 'finished').map((e) => (e as { result: { id: string } }).result.id)).toEqual(['b1']);
    expect(ca.lines[0]).toBe('$ git tune run');
    expect(ca.lines.at(-1)).toMatch(/^batch01-nomem-run1: finished\n {2}2 right, 0 wrong, 0 for the judge, 0 void; 240 tokens, \$\d+\.\d{4}\n {2}commit [0-9a-f]{7}, tag tune\/desk\/batch01-nomem-run1$/);
    const grade = await step(a, ca);
    expect([grade.next.kind, grade.outcome]).toEqual(['grade', { kind: 'done' }]);
    expect(ca.lines.slice(-4)).toEqual([
      '$ git tune grade --draft --force', 'wrote .tune/desk/runs/batch01-nomem-run1/findings.md: proposed verdict PASSED',
      '$ git tune grade', 'batch01-nomem-run1: PASSED',
    ]);
  }, 60_000);

  it('a VOID run, a downed sandbox, a spent budget, a stop request: each its own outcome', async () => {
    const [oom, down, budget, stopped] = await Promise.all([
      planned([plainCase('v1', { input: { simulate: 'oom' } }), plainCase('v2')]),
      planned([plainCase('s1', { input: { simulate: 'sandbox-down' } })]),
      planned([plainCase('m1'), plainCase('m2'), plainCase('m3')], [['concurrency', '1'], ['budget.maxTokens', '150']]),
      planned([plainCase('x1')]),
    ]);
    expect((await step(oom, context(oom))).outcome).toEqual({ kind: 'void', run: 'batch01-nomem-run1', reason: expect.stringMatching(/^1 case void \(v1: /) });
    expect((await step(down, context(down))).outcome)
      .toEqual({ kind: 'sandbox-down', run: 'batch01-nomem-run1', reason: 'batch01-nomem-run1 did not finish: sandbox down: the sandbox VM is gone' });
    expect((await step(budget, context(budget))).outcome).toEqual({ kind: 'budget', reason: 'batch01-nomem-run1 did not finish: budget spent: 240 of 150 tokens' });
    // Budget spent before the run starts: the run's own refusal, typed the same.
    expect((await step(budget, context(budget))).outcome).toMatchObject({ kind: 'budget', reason: expect.stringMatching(/cannot start: budget spent/) });
    const ctx = context(stopped, { stop: () => true });
    expect((await step(stopped, ctx)).outcome).toEqual({ kind: 'interrupted', run: 'batch01-nomem-run1' });
    expect(ctx.events).toEqual([]);
  }, 60_000);

  it('a step the history does not allow is an error with its exit code; no editor is a person\'s step, with the command', async () => {
    const repo = await planned([plainCase('e1'), wrongCase('e2')]);
    const ctx = context(repo);
    await step(repo, ctx); // run
    const tuning = await openTuning(repo.dir);
    const again = await performStep(tuning, { ...nextFor(tuning), kind: 'run', run: 'batch01-nomem-run1' }, ctx);
    expect(again).toMatchObject({ kind: 'error', exitCode: 3, message: expect.stringMatching(/^no run is due: grade batch01-nomem-run1/) });
    expect((await step(repo, ctx)).outcome).toEqual({ kind: 'done' }); // grade: NO CHANGE
    const edit = await step(repo, ctx);
    expect(edit.next.kind).toBe('edit');
    expect(edit.outcome).toEqual({
      kind: 'stuck', command: 'git tune edit',
      reason: 'batch01-nomem-run1 is NO CHANGE and no editor is configured: a person must edit the prose and write .tune/desk/runs/batch01-nomem-run1/changes.md, then record the edit',
    });
  }, 60_000);

  it('an editor that changes nothing ends the half as at maxRuns; one that also writes outside the prose has that put back', async () => {
    const [idle, over] = await Promise.all([planned([plainCase('i1'), wrongCase('i2')]), planned([plainCase('o1'), wrongCase('o2')])]);
    // The idle editor writes a changes.md saying it changed nothing: not left behind.
    await tuneOk(idle, ['config', 'set', 'editor.command', ['node', '-e', "require('fs').writeFileSync(process.env.TUNE_CHANGES, 'No prose change.\\n')"].map((a) => JSON.stringify(a)).join(' ')]);
    await tuneOk(over, ['config', 'set', 'editor.command', ['node', '-e',
      "const fs=require('fs');fs.appendFileSync('agents/prompt.md','Be brief.\\n');fs.writeFileSync('README.md','mine');fs.writeFileSync(process.env.TUNE_CHANGES,'# Changes\\n\\nBe brief.\\n')"].map((a) => JSON.stringify(a)).join(' ')]);
    for (const repo of [idle, over]) {
      const ctx = context(repo);
      await step(repo, ctx);
      await step(repo, ctx);
    }
    const before = idle.git('rev-parse', 'tune/desk').trim();
    const ended = await step(idle, context(idle));
    expect([ended.next.kind, ended.outcome]).toEqual(['edit', { kind: 'done' }]);
    expect(stepsBetween(idle, before, 'tune/desk').map((s) => s.split('\n')[0])).toEqual([
      'tune(desk): difficult add i2 (wrong)',
      'tune(desk): grade batch01-nomem-run1 PASSED (was NO CHANGE): 1/2 right',
    ]);
    expect(idle.git('show', 'tune/desk:.tune/desk/runs/batch01-nomem-run1/findings.md'))
      .toMatch(/^The half ends here, as at maxRuns: the editor changed nothing after batch01-nomem-run1 \(NO CHANGE\)\./m);
    expect(idle.git('status', '--porcelain')).toBe('?? cases.yaml\n');

    const ctx = context(over);
    expect((await step(over, ctx)).outcome).toEqual({ kind: 'done' });
    expect(ctx.lines).toContain('warning: the editor changed files it may not (an edit changes prose only); put back: README.md');
    expect(existsSync(over.path('README.md'))).toBe(false);
    expect(over.git('status', '--porcelain')).toBe('?? cases.yaml\n'); // the dataset file, imported, never committed
    const changes = over.git('show', 'tune/desk:.tune/desk/runs/batch01-nomem-run1/changes.md');
    expect(changes).toBe('# Changes\n\nBe brief.\n\nAims: o2\n\nPut back by git-tune: the editor also changed README.md, which is not prose of this tuning.\n');
    expect(over.git('show', '--stat', '--format=%s', 'tune/desk')).toMatch(/^tune\(desk\): edit after batch01-nomem-run1: agents\/prompt\.md\n/);
  }, 60_000);
});

describe('auto in-process', () => {
  it('a VOID final check runs again at half the concurrency, and auto carries on to done', async () => {
    // The test runner saves its fact again in every run: with an editor that changes nothing, each with-memory half ends listing both
    // (both end stuck, so maxStuckShare is 1: this test is about the VOID final check).
    const repo = await planned([plainCase('f1'), plainCase('f2')], [['concurrency', '8'], ['maxRetries', '1'], ['editor.command', 'node -e 0'], ['maxStuckShare', '1']]);
    // A runner killed for memory (exit 137) in the first final check only.
    repo.write({ 'oom-once.mjs': `if (process.env.TUNE_RUN === 'final-check') process.exit(137);\nawait import(${JSON.stringify(RUNNER)});\n` });
    await tuneOk(repo, ['config', 'set', 'runner.command', 'node oom-once.mjs']);
    const lines: string[] = [];
    const result = await autoTuning(repo.dir, { env: { ...process.env, ...repo.env }, session: newSession(), say: (l) => lines.push(l) });
    expect(result, lines.join('\n')).toMatchObject({ outcome: 'done', exitCode: 0 });
    expect(result.steps.map((s) => s.kind).slice(-4)).toEqual(['final', 'void-rerun', 'grade', 'done']);
    expect(lines).toEqual(expect.arrayContaining(['$ git tune config set concurrency 4', '$ git tune final']));
    const tags = repo.git('tag', '-l', 'tune/desk/final-check*').trim().split('\n');
    expect(tags).toEqual(['tune/desk/final-check', 'tune/desk/final-check-run2']);
    repo.fsck();
  }, 60_000);
});

describe('an editor that changes nothing (issue 29: a tuning that learned nothing never reads as success)', () => {
  it('maxEditorIdle halves in a row stop auto for a person (editor-idle), saying what it was given, what it answered and where its log is; a with-memory half without memory policy says so in one line', async () => {
    // The editor prints a line and changes nothing; the case is wrong every time.
    // One case a batch: w1 in batch 1, w2 in a later one.
    const repo = await planned([wrongCase('w1'), wrongCase('w2')], [['minBatch', '1'], ['maxBatch', '1'], ['recheck', '0'], ['maxRetries', '1'], ['editor.command', 'node .git/idle-editor.mjs']]);
    repo.write({ '.git/idle-editor.mjs': "console.error('no edit: nothing to change');\n" });
    const lines: string[] = [];
    const result = await autoTuning(repo.dir, { env: { ...process.env, ...repo.env }, session: newSession(), say: (l) => lines.push(l) });
    const log = lines.join('\n');
    expect(result, log).toMatchObject({ outcome: 'editor-idle', exitCode: 3 });
    expect(result.message).toMatch(/^editor-idle: the editor \(node \.git\/idle-editor\.mjs\) changed nothing 2 halves in a row \(after batch01-nomem-run1, (batch0\d-nomem-run1); maxEditorIdle 2\)\. /);
    const second = /in a row \(after batch01-nomem-run1, (batch0\d-nomem-run1)/.exec(result.message)![1]!;
    expect(result.message).toContain(`It was given .tune/desk/runs/${second}/findings.md (`);
    expect(result.message).toContain(`wrong: w2) and 0 proposals, and answered with no change ("no edit: nothing to change"); its log: .git/tune/desk/editor/${second}/ (proposals.json, stdout, stderr)`);
    expect(result.message).toMatch(/then: git tune edit$/);
    for (const f of ['proposals.json', 'stdout', 'stderr']) expect(existsSync(repo.path('.git/tune/desk/editor', second, f))).toBe(true);
    // The first idle half ended as before; the second did not: its case is not listed again, nothing was written for it.
    expect(lines.filter((l) => l.startsWith('the half ends: the editor changed nothing'))).toEqual([expect.stringMatching(/after batch01-nomem-run1 /)]);
    // The with-memory half has no memory-policy file to edit: said as such, the editor not asked.
    expect(log).toMatch(/the half ends: no memory-policy files are configured \(memoryPolicy is empty\), so a with-memory half has nothing to edit after batch01-mem-run1/);
    expect(lines.filter((l) => l.startsWith('editor: '))).toHaveLength(2);
    // `next` shows the step a person does now: the edit.
    expect(nextFor(await openTuning(repo.dir))).toMatchObject({ kind: 'edit', run: second, command: 'git tune edit' });
    // Counted in a row only: maxEditorIdle 3 lets the second idle half end as before.
    await tuneOk(repo, ['config', 'set', 'maxEditorIdle', '3']);
    const again = await autoTuning(repo.dir, { env: { ...process.env, ...repo.env }, session: newSession(), say: (l) => lines.push(l), maxSteps: 1 });
    expect(lines.at(-1)).not.toMatch(/editor-idle/);
    expect(again.steps[0]).toMatchObject({ kind: 'edit' });
  }, 90_000);
});
