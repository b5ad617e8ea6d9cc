import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tuneOk } from '../helpers/cli.js';
import { fsckProblems, TempRepo } from '../helpers/repo.js';

/**
 * Decisions that hold on a noisy agent (docs/method.md#noise), through the
 * real CLI on a scripted noisy runner (test/fixtures/noisy-runner.mjs: right
 * when the prose says `knows <id>`, turned around by a script per invocation).
 * A flip is re-run in its run before the grade decides; the majority decides;
 * answers that disagree make the case flaky; repeats are in results.json, the
 * logs ref, `show` and findings.md; the final check re-runs its failures.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/noisy-runner.mjs');
const TUNE = '.tune/desk';
const PROMPT = 'agents/prompt.md';
const RUN1 = 'batch01-nomem-run1';
const RUN2 = 'batch01-nomem-run2';
const RUN3 = 'batch01-nomem-run3';
const cases = (ids: string[]) => ids.map((id) => ({ id, class: 'c', input: id, checks: [{ type: 'contains', value: 'RIGHT' }] }));

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

/** A tuning of the noisy runner over `ids`, all in batch 1, with `prose` and a script per case. */
async function noisy(ids: string[], prose: string, script: Record<string, string[]>, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = TempRepo.create({ [PROMPT]: prose, 'cases.json': JSON.stringify(cases(ids)) });
  repos.push(repo);
  writeFileSync(repo.path('.git', 'script.json'), JSON.stringify(script));
  repo.env.TEST_SCRIPT = repo.path('.git', 'script.json');
  repo.env.TEST_STATE = repo.path('.git', 'noisy-state');
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.json', '--no-hooks']);
  for (const [k, v] of [['minBatch', String(ids.length)], ['maxBatch', String(ids.length)], ['recheck', '0'], ...config]) await tuneOk(repo, ['config', 'set', k!, v!]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  return repo;
}

const invocations = (repo: TempRepo) => readFileSync(repo.path('.git', 'noisy-state', 'invocations'), 'utf8').trim().split('\n');
const resultsOf = (repo: TempRepo, run: string) =>
  JSON.parse(repo.git('show', `HEAD:${TUNE}/runs/${run}/results.json`)) as Array<{ id: string; right: boolean; repeats?: Array<{ n: number; right: boolean; answer: string; round?: 2 }> }>;
const findings = (repo: TempRepo, run: string) => repo.git('show', `HEAD:${TUNE}/runs/${run}/findings.md`);

async function runAndGrade(repo: TempRepo): Promise<{ verdict: string; wrong: string[]; reverted: Array<{ edit: string }> }> {
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  return JSON.parse((await tuneOk(repo, ['grade', '--json'])).stdout) as { verdict: string; wrong: string[]; reverted: Array<{ edit: string }> };
}

async function edit(repo: TempRepo, run: string, prose: string, changes: string): Promise<string> {
  repo.write({ [PROMPT]: prose, [`${TUNE}/runs/${run}/changes.md`]: `${changes}\n` });
  await tuneOk(repo, ['edit']);
  return repo.git('rev-parse', 'HEAD').trim();
}

async function editStatus(repo: TempRepo): Promise<Array<[string, string]>> {
  const s = JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as { edits: Array<{ commit: string; status: string }> };
  return s.edits.map((e) => [e.commit, e.status]);
}

describe.concurrent('a flip is re-run before it decides (the noisy runner)', { timeout: 600_000 }, () => {
  it('a real fix is not reverted because another case slipped once: the repeats outvote the slip; the repeats are in results.json, the logs ref, show and findings.md; the slip is flaky', async () => {
    // b slips on its second invocation only: the first answer of run 2.
    const repo = await noisy(['a', 'b'], 'knows b\n', { b: ['-', 'slip'] });
    expect((await runAndGrade(repo)).wrong).toEqual(['a']);
    const fix = await edit(repo, RUN1, 'knows b\nknows a\n', '## Fix a\n\nAims: a');
    const run = await tuneOk(repo, ['run']);
    expect(run.stderr).toContain('re-running 1 case up to 3 times before it decides (b: turned wrong)');
    // Each repeat's progress line says which repeat it is.
    expect(run.stderr).toMatch(/^\[1\/1\] b \(repeat 2\): right, /m);
    expect(run.stderr).toMatch(/^\[1\/1\] b \(repeat 3\): right, /m);
    const b = resultsOf(repo, RUN2).find((r) => r.id === 'b')!;
    expect(b.right).toBe(false);
    // Two right repeats settle it: no third answer could change the majority.
    expect(b.repeats?.map((r) => [r.n, r.right])).toEqual([[2, true], [3, true]]);
    expect(resultsOf(repo, RUN2).find((r) => r.id === 'a')!.repeats).toBeUndefined();

    // Each repeat's logs in the logs ref, under the case's folder; show and show --log tell them.
    const logs = repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk', `${RUN2}/b`).split('\n');
    expect(logs).toEqual(expect.arrayContaining([`${RUN2}/b/stdout`, `${RUN2}/b/repeat-2/stdout`, `${RUN2}/b/repeat-3/result.json`, `${RUN2}/b/repeat-3/stderr`]));
    expect(logs.some((f) => f.includes('repeat-4'))).toBe(false);
    const shown = (await tuneOk(repo, ['show', RUN2, 'b'])).stdout;
    expect(shown).toContain('repeats: re-run 2 times on the same prose; 2/3 right (67%): the majority says right (flaky: the answers disagree)');
    expect(shown).toContain('repeat 2: right');
    const log = (await tuneOk(repo, ['show', RUN2, 'b', '--log'])).stdout;
    expect(log).toContain('invocation 2 of b: WRONG');
    expect(log).toContain('--- repeat-3/stdout\ninvocation 4 of b: RIGHT');

    await tuneOk(repo, ['grade', '--draft']);
    const draft = readFileSync(repo.path(TUNE, 'runs', RUN2, 'findings.md'), 'utf8');
    expect(draft.split('\n')[0]).toBe('## PASSED');
    expect(draft).toContain('| b | right |');
    expect(draft).toContain('### Noise');
    expect(draft).toContain('- b: answers here wrong, right, right: 2/3 right, the majority says right; on this prose and memory 2/3 right (67%) over 1 run');
    expect(draft).toContain('add b flaky — its answers disagree on the same prose: 2/3 right (wrong, right, right)');
    const graded = JSON.parse((await tuneOk(repo, ['grade', '--json'])).stdout) as { verdict: string; wrong: string[]; reverted: unknown[] };
    expect(graded).toMatchObject({ verdict: 'PASSED', wrong: [], reverted: [] });
    expect(await editStatus(repo)).toEqual([[fix, 'confirmed']]);
    expect(findings(repo, RUN2)).toContain('### Noise');
    const listed = JSON.parse((await tuneOk(repo, ['difficult', '--json'])).stdout) as { entries: Array<{ id: string; reason: string }> } | Array<{ id: string; reason: string }>;
    const entries = Array.isArray(listed) ? listed : listed.entries;
    expect(entries.map((e) => [e.id, e.reason])).toEqual([['b', 'flaky']]);
    // Runs: 2 + 2 cases, 2 repeats of a's first wrong answer in run 1 (wrong again twice: settled), 2 of b's flip.
    expect(invocations(repo)).toHaveLength(8);
    expect(fsckProblems(repo)).toBe('');
  });

  it('three slips in a row are not a verdict: a second round must reproduce the first, and here it does not; show and findings say so', async () => {
    // b slips on its first answer of run 2 and on both repeats (round 1 says wrong), then is right twice (round 2).
    const repo = await noisy(['a', 'b'], 'knows b\n', { b: ['-', 'slip', 'slip', 'slip'] });
    expect((await runAndGrade(repo)).wrong).toEqual(['a']);
    const fix = await edit(repo, RUN1, 'knows b\nknows a\n', '## Fix a\n\nAims: a');
    const run = await tuneOk(repo, ['run']);
    expect(run.stderr).toContain(`${RUN2}: re-running b a second round (up to 3 more): its answers still contradict the last graded one`);
    const b = resultsOf(repo, RUN2).find((r) => r.id === 'b')!;
    expect(b.repeats?.map((r) => [r.n, r.right, r.round ?? 1])).toEqual([[2, false, 1], [3, false, 1], [5, true, 2], [6, true, 2]]);
    const shown = (await tuneOk(repo, ['show', RUN2, 'b'])).stdout;
    expect(shown).toContain('2/5 right (40%): the second round (its last 2), which had to reproduce the first, says right');
    expect(shown).toContain('repeat 5 (round 2): right');
    await tuneOk(repo, ['grade', '--draft']);
    expect(readFileSync(repo.path(TUNE, 'runs', RUN2, 'findings.md'), 'utf8')).toContain('- b: answers here wrong, wrong, wrong, right, right: 2/5 right, the second round (its last 2), which had to reproduce the first, says right;');
    const graded = JSON.parse((await tuneOk(repo, ['grade', '--json'])).stdout) as { verdict: string; wrong: string[]; reverted: unknown[] };
    expect(graded).toMatchObject({ verdict: 'PASSED', wrong: [], reverted: [] });
    expect(await editStatus(repo)).toEqual([[fix, 'confirmed']]);
    // 2 + 2 cases, 2 repeats of a's first wrong answer in run 1, 2 + 2 of b's flip.
    expect(invocations(repo)).toHaveLength(10);
  });

  it('a real fix whose aimed case slips in the confirming run is not reverted on that one answer: the aim is re-run', async () => {
    // a is wrong in run 1 (settled by its repeats); the edit fixes it; its first answer in run 2 slips, its repeats are right.
    const repo = await noisy(['a', 'b'], 'knows b\n', { a: ['-', '-', '-', 'slip'] });
    expect((await runAndGrade(repo)).wrong).toEqual(['a']);
    const fix = await edit(repo, RUN1, 'knows b\nknows a\n', '## Fix a\n\nAims: a');
    const run = await tuneOk(repo, ['run']);
    expect(run.stderr).toContain('re-running 1 case up to 3 times before it decides (a: still wrong after an edit aimed at it)');
    expect(resultsOf(repo, RUN2).find((r) => r.id === 'a')!.repeats?.map((r) => r.right)).toEqual([true, true]);
    await tuneOk(repo, ['grade', '--draft']);
    const graded = JSON.parse((await tuneOk(repo, ['grade', '--json'])).stdout) as { verdict: string; wrong: string[]; reverted: unknown[] };
    expect(graded).toMatchObject({ verdict: 'PASSED', wrong: [], reverted: [] });
    expect(await editStatus(repo)).toEqual([[fix, 'confirmed']]);
  });

  it('a flaky case does not unconfirm the edit that fixed its aim; a useless edit is not confirmed because its aimed case, known to slip, was right once', async () => {
    // a: right by luck in run 1; in run 2 wrong, then wrong, right, wrong (round 1: wrong, which contradicts run 1), and a
    // second round right, wrong, wrong that reproduces it; in run 3 right by luck, then wrong twice (settled).
    const repo = await noisy(['a', 'b'], '# desk\n', { a: ['luck', '-', '-', 'luck', '-', 'luck', '-', '-', 'luck', '-', '-'] });
    expect((await runAndGrade(repo)).wrong).toEqual(['b']);
    const fixB = await edit(repo, RUN1, '# desk\nknows b\n', '## Fix b\n\nAims: b');
    const second = await runAndGrade(repo);
    expect(resultsOf(repo, RUN2).find((r) => r.id === 'a')!.repeats?.map((r) => [r.n, r.right, r.round ?? 1])).toEqual([
      [2, false, 1], [3, true, 1], [4, false, 1], [5, true, 2], [6, false, 2], [7, false, 2],
    ]);
    expect(second).toMatchObject({ verdict: 'MIXED', wrong: ['a'], reverted: [] });
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Flaky,valueonly)').trim()).toBe('a');
    expect(await editStatus(repo)).toEqual([[fixB, 'confirmed']]);

    const useless = await edit(repo, RUN2, '# desk\nknows b\nbe careful with the first case\n', '## Care\n\nAims: a');
    const third = await runAndGrade(repo);
    const a3 = resultsOf(repo, RUN3).find((r) => r.id === 'a')!;
    expect([a3.right, ...(a3.repeats ?? []).map((r) => r.right)]).toEqual([true, false, false]);
    expect(third.wrong).toEqual(['a']);
    expect(third.reverted.map((r) => r.edit)).toEqual([useless]);
    expect(await editStatus(repo)).toEqual([[fixB, 'confirmed'], [useless, 'reverted']]);
    expect(readFileSync(repo.path(PROMPT), 'utf8')).toBe('# desk\nknows b\n');
  });
});

describe('noise.repeats 0', { timeout: 600_000 }, () => {
  it('turns the repeats off: a case that turned wrong is recorded on its one answer, and nothing is re-run', async () => {
    const repo = await noisy(['a'], 'knows a\n', { a: ['-', 'slip'] }, [['noise.repeats', '0']]);
    await runAndGrade(repo);
    await edit(repo, RUN1, 'knows a\n\nbe brief\n', '## Brief\n\nAims: a');
    const run = await tuneOk(repo, ['run']);
    expect(run.stderr).not.toContain('re-running');
    expect(resultsOf(repo, RUN2).map((r) => [r.id, r.right, r.repeats])).toEqual([['a', false, undefined]]);
    expect(invocations(repo)).toEqual([`${RUN1} a`, `${RUN2} a`]);
  });
});

describe('the final check re-runs its failures', { timeout: 600_000 }, () => {
  it('a case wrong in the final check is re-run noise.repeats times, its right-rate recorded; a slip there is outvoted', async () => {
    // One case the prose knows; it slips once, in the final check (its 3rd invocation).
    const repo = await noisy(['a'], 'knows a\n', { a: ['-', '-', 'slip'] }, [['noise.repeats', '2']]);
    for (let i = 0; i < 20; i++) {
      const next = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout) as { kind: string };
      if (next.kind === 'done' || next.kind === 'final-failed') break;
      const args: Record<string, string[][]> = {
        run: [['run']], 'mem-run': [['run']], confirm: [['run']], resume: [['run']], grade: [['grade', '--draft'], ['grade']],
        candidate: [['memory', 'candidate']], checkpoint: [['memory', 'checkpoint']], final: [['final']],
      };
      const steps = args[next.kind];
      if (!steps) throw new Error(`unexpected step ${next.kind}`);
      for (const s of steps) await tuneAsync(repo, s);
    }
    const final = resultsOf(repo, 'final-check');
    expect(final.map((r) => [r.id, r.right, r.repeats?.map((x) => x.right)])).toEqual([['a', false, [true, true]]]);
    expect(findings(repo, 'final-check').split('\n')[0]).toBe('## VERIFIED');
    expect(invocations(repo).filter((l) => l.startsWith('final-check'))).toHaveLength(3);
  });

  it('in CI too: a shard re-runs its slip before its result set is written; the collected set records the repeats and their logs, and is VERIFIED', async () => {
    // b slips once, in the final check (its 3rd invocation); a never does.
    const repo = await noisy(['a', 'b'], 'knows a\nknows b\n', { b: ['-', '-', 'slip'] }, [['noise.repeats', '2']]);
    for (let i = 0; i < 20; i++) {
      const next = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout) as { kind: string };
      if (next.kind === 'final') break;
      const args: Record<string, string[][]> = {
        run: [['run']], 'mem-run': [['run']], confirm: [['run']], resume: [['run']], grade: [['grade', '--draft'], ['grade']],
        candidate: [['memory', 'candidate']], checkpoint: [['memory', 'checkpoint']],
      };
      const steps = args[next.kind];
      if (!steps) throw new Error(`unexpected step ${next.kind}`);
      for (const st of steps) await tuneOk(repo, st);
    }
    // A judge that says what the checks say: each shard judges its repeats too.
    writeFileSync(repo.path('.git', 'judge.cjs'), "const fs = require('fs'); const r = JSON.parse(fs.readFileSync(process.env.TUNE_RESULT, 'utf8')); fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify({ right: String(r.answer).startsWith('RIGHT'), summary: 'by its answer' }));\n");
    await tuneOk(repo, ['config', 'set', 'judge.command', JSON.stringify(['node', repo.path('.git', 'judge.cjs')])]);
    const shards = [1, 2].map((i) => repo.path('.git', `shard-${i}`));
    for (const [i, dir] of shards.entries()) await tuneOk(repo, ['final', '--shard', `${i + 1}/2`, '--out', dir]);
    const shard = shards.find((d) => (JSON.parse(readFileSync(path.join(d, 'manifest.json'), 'utf8')) as { cases: string[] }).cases.includes('b'))!;
    const inSet = JSON.parse(readFileSync(path.join(shard, 'results.json'), 'utf8')) as Array<{ id: string; right: boolean; repeats?: Array<{ n: number; right: boolean }> }>;
    expect(inSet.find((r) => r.id === 'b')).toMatchObject({ right: false, repeats: [{ n: 2, right: true }, { n: 3, right: true }] });
    expect(readFileSync(path.join(shard, 'logs', 'b', 'repeat-2', 'stdout'), 'utf8')).not.toBe('');
    const judged = JSON.parse(readFileSync(path.join(shard, 'judge.json'), 'utf8')) as Record<string, { right: boolean }>;
    expect(Object.fromEntries(Object.entries(judged).map(([k, v]) => [k, v.right]))).toMatchObject({ b: false, 'b/repeat-2': true, 'b/repeat-3': true });
    expect(invocations(repo).filter((l) => l.startsWith('final-check') && l.includes('b'))).toHaveLength(3);

    const collected = await tuneOk(repo, ['final', '--collect', ...shards, '--commit']);
    expect(collected.stdout).toContain('VERIFIED');
    expect(resultsOf(repo, 'final-check').map((r) => [r.id, r.right, r.repeats?.map((x) => x.right)])).toEqual([['a', true, undefined], ['b', false, [true, true]]]);
    expect(repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk', 'final-check/b').split('\n')).toEqual(expect.arrayContaining(['final-check/b/repeat-2/stdout', 'final-check/b/repeat-3/stdout']));
    expect(findings(repo, 'final-check').split('\n')[0]).toBe('## VERIFIED');
    // The stores of the shards and their repeats are gone once the sets are written.
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
  });
});

// The final check exits 6 when not VERIFIED; the loop above reads `next` after each step either way.
async function tuneAsync(repo: TempRepo, args: string[]) {
  const { tuneAsync: run } = await import('../helpers/cli.js');
  return run(repo, args);
}
