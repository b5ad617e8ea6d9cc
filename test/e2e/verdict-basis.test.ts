import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, startTune, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * No verdict on prose no run has seen (docs/method.md#noise, issue 28 item
 * 4), through the real CLI on an agent written for it (test/fixtures/verdict:
 * it answers from agent/rules.md, learns each answer as a fact in its memory,
 * and slips where slips.json says). The trajectory: an edit that
 * fixes refund is tried by a run where hello is wrong (MIXED: slips.json
 * keys slips by run name, so hello's flip repeats agree, wrong on every
 * answer, and it unconfirms the edit; docs/method.md#noise), so the grade
 * reverts it; the half then ends PASSED. The candidate memory must not hold
 * the refund fact learned under the reverted prose, and the half passes on
 * the run of the prose the branch holds, with that run's wrong cases listed.
 */
const FIXTURE = path.join(ROOT, 'test/fixtures/verdict');
const TUNE = '.tune/verdict';
const RUN1 = 'batch01-nomem-run1';
const RUN2 = 'batch01-nomem-run2';
const RULES = 'agent/rules.md';
const P0 = '# Rules\n\n- hello: greet the customer politely\n- reset: send a reset link by mail\n';
const CASES = [
  { id: 'hello', class: 'greeting', input: { topic: 'hello' }, checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'reset', class: 'account', input: { topic: 'reset' }, checks: [{ type: 'contains', value: 'reset link' }] },
  { id: 'refund', class: 'billing', input: { topic: 'refund' }, checks: [{ type: 'contains', value: '30 days' }] },
];

const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup.splice(0)) c();
});

async function verdictRepo(settings: Array<[string, string]>, editor: boolean): Promise<{ repo: TempRepo; env: Record<string, string> }> {
  const repo = TempRepo.create({ [RULES]: P0, 'cases.json': JSON.stringify(CASES), 'slips.json': JSON.stringify({ [RUN2]: ['hello'] }) });
  cpSync(FIXTURE, repo.path('bin'), { recursive: true });
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'the verdict agent');
  await tuneOk(repo, ['init', 'verdict', '--prose', 'agent/**/*.md', '--runner', 'node bin/agent.mjs', '--dataset', 'cases.json', '--no-hooks',
    ...(editor ? ['--editor', 'node bin/editor.mjs'] : [])]);
  for (const [key, value] of [['minBatch', '3'], ['maxBatch', '3'], ['concurrency', '3'], ...settings]) await tuneOk(repo, ['config', 'set', key!, value!]);
  const state = mkdtempSync(path.join(os.tmpdir(), 'git-tune-verdict-'));
  cleanup.push(() => repo.cleanup(), () => rmSync(state, { recursive: true, force: true }));
  return { repo, env: { EDITOR_CALLS: path.join(state, 'editor-calls') } };
}

const at = (repo: TempRepo, file: string) => repo.git('show', `tune/verdict:${file}`);
const filesAt = (repo: TempRepo, dir: string) => repo.git('ls-tree', '-r', '--name-only', 'tune/verdict', `${dir}/`).split('\n').filter(Boolean).map((f) => f.slice(dir.length + 1));
const nextOf = async (repo: TempRepo) => JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout) as { kind: string; command: string; message: string; run: string };

describe.concurrent('no verdict on prose no run has seen (the verdict agent)', { timeout: 240_000 }, () => {
  it('stop-batch after the grade reverted the edit: PASSED on the run of the prose the branch holds, the candidate from it', async () => {
    const { repo } = await verdictRepo([['maxRuns', '2'], ['recheck', '0']], false);
    await tuneOk(repo, ['select']);
    await tuneOk(repo, ['batch']);
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    // The edit that truly fixes refund.
    repo.write({ [RULES]: `${P0}- refund: refunds within 30 days\n`, [`${TUNE}/runs/${RUN1}/changes.md`]: '# Changes\n\nThe refund rule.\n\nAims: refund\n' });
    await tuneOk(repo, ['edit']);
    const edit = repo.git('rev-parse', 'HEAD').trim();
    // hello slips in the confirming run: MIXED, so the edit is unconfirmed and the grade reverts it.
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const graded = await tuneOk(repo, ['grade']);
    expect(graded.stdout).toContain(`reverted ${edit.slice(0, 7)}`);
    expect(graded.stdout).toContain(`${RUN2}: MIXED (wrong: hello)`);
    // What run 2's cases learned includes the refund fact, under prose the branch no longer holds.
    expect(at(repo, `${TUNE}/runs/${RUN2}/memory-writes.json`)).toContain('refunds within 30 days');
    expect(at(repo, RULES)).toBe(P0);
    // Run and grade record the prose: run 1's and the grade's are the same, run 2's is not.
    const prose = (rev: string) => repo.git('log', '-1', '--format=%(trailers:key=Tune-Prose,valueonly)', rev).trim();
    expect(prose(`tune/verdict/${RUN1}`)).toBe(prose('tune/verdict'));
    expect(prose(`tune/verdict/${RUN2}`)).not.toBe(prose('tune/verdict'));

    // At maxRuns the half stops: on run 1, the run of the prose the branch holds; what is wrong there (refund) is listed, not hello.
    const stop = await nextOf(repo);
    expect(stop.kind).toBe('stop-batch');
    expect(stop.command).toBe(`git tune revert && git tune difficult add refund --why wrong && git tune grade --verdict PASSED --run ${RUN2}`);
    expect(stop.message).toContain(`it passes on ${RUN1}`);
    await tuneOk(repo, ['revert']);
    await tuneOk(repo, ['difficult', 'add', 'refund', '--why', 'wrong']);
    const passed = await tuneOk(repo, ['grade', '--verdict', 'PASSED', '--run', RUN2]);
    expect(passed.stdout).toContain(`the half passes on ${RUN1}, the run of the prose the branch holds (wrong there: refund)`);

    // The candidate comes from run 1: the facts learned under the prose the branch holds, never the reverted prose's refund fact.
    const candidate = await nextOf(repo);
    expect(candidate).toMatchObject({ kind: 'candidate', run: RUN1 });
    const built = await tuneOk(repo, ['memory', 'candidate']);
    expect(built.stdout + built.stderr).toContain(RUN1);
    expect(filesAt(repo, `${TUNE}/memory/candidate`).sort()).toEqual(['facts/hello.md', 'facts/reset.md']);
    for (const fact of ['hello', 'reset']) expect(at(repo, `${TUNE}/memory/candidate/facts/${fact}.md`)).not.toContain('30 days');
    expect(repo.git('log', '-1', '--format=%s', 'tune/verdict')).toContain(`candidate memory from ${RUN1}`);
    expect((await nextOf(repo)).kind).toBe('mem-run');
    repo.git('fsck', '--strict');
  });

  it('auto to done: the editor has nothing after the reverted edit, the half ends on run 1, its candidate holds no fact of the reverted prose', async () => {
    // refund is never fixed here (the edit that fixed it was reverted), so it ends stuck: 1 of 3 cases, above the default maxStuckShare.
    const { repo, env } = await verdictRepo([['maxRetries', '1'], ['maxStuckShare', '0.5']], true);
    const result = await startTune(repo, ['auto'], env).done;
    expect(result.code, `${result.stderr.slice(-3000)}\nstdout: ${result.stdout.slice(-3000)}`).toBe(0);
    expect(result.stdout).toMatch(/done: the final check is VERIFIED/);
    // Batch 1's half ended PASSED on run 2 ("was MIXED") and passed on run 1; its candidate came from run 1.
    expect(result.stderr).toContain(`passes on ${RUN1}: the run of the prose the branch holds`);
    const subjects = repo.git('log', '--format=%s', 'tune/verdict').split('\n');
    expect(subjects).toContain(`tune(verdict): candidate memory from ${RUN1} (2 files)`);
    expect(subjects.some((s) => s.includes(`candidate memory from ${RUN2}`))).toBe(false);
    expect(at(repo, `${TUNE}/runs/${RUN2}/findings.md`)).toContain(`It passes on ${RUN1}, the run of the prose the branch holds`);
    // Batch 2 holds refund as a difficult case under the prose that never fixed it: no run of the prose the branch holds learned a refund fact.
    const candidates = repo.git('log', '--format=%s', '--grep', 'candidate memory from', 'tune/verdict').split('\n').filter(Boolean);
    expect(candidates.map((s) => /from (\S+)/.exec(s)![1]).reverse()).toEqual([RUN1, 'batch02-nomem-run1']);
    expect(filesAt(repo, `${TUNE}/memory/last-good`).sort()).toEqual(['facts/hello.md', 'facts/reset.md']);
    repo.git('fsck', '--strict');
  });
});
