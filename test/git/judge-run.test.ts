import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeRun } from '../../src/app/judge.js';
import type { Case } from '../../src/contracts/dataset.js';
import type { CaseResult } from '../../src/contracts/result.js';
import { draftFindings } from '../../src/core/findings.js';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

const WAVERING = path.join(ROOT, 'test/fixtures/wavering-judge.mjs');

/**
 * The judge run in-process on a real repository with real judge processes,
 * the waits between retries recorded instead of slept: asked again after
 * bad output, retried with backoff after failures, VOID for the judge after
 * the last, and what it changed in the repository put back.
 */
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

/** A judge script: `plan` lists what each call does (by case, call n), then a good answer. */
const JUDGE = `
const fs = require('node:fs');
const id = process.env.TUNE_CASE_ID;
const counter = process.env.TUNE_ROOT + '/.git/judge-calls.' + id;
const n = (fs.existsSync(counter) ? Number(fs.readFileSync(counter, 'utf8')) : 0) + 1;
fs.writeFileSync(counter, String(n));
const plan = JSON.parse(process.env.PLAN)[id] ?? [];
const step = plan[n - 1] ?? 'ok';
if (step === 'garbage') fs.writeFileSync(process.env.TUNE_OUTPUT, 'not json {');
else if (step === '429') { console.error('HTTP 429 Too Many Requests'); process.exit(1); }
else if (step === '503') fs.writeFileSync(process.env.TUNE_OUTPUT, '503 Service Unavailable');
else if (step === 'crash') process.exit(3);
else if (step === 'touch') { fs.appendFileSync('agents/prompt.md', 'judged\\n'); fs.writeFileSync('stray.txt', 'x'); fs.writeFileSync(process.env.TUNE_OUTPUT, '{"right": true}'); }
else fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify({ right: id !== 'wrong' }));
`;

function setup(): TempRepo {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'judge.cjs': JUDGE });
  repos.push(repo);
  return repo;
}

const item = (id: string): Case => ({ id, class: 'c', complexity: 'simple', input: id } as unknown as Case);
const result = (id: string) => ({ id, status: 'ok', answer: id, right: null, usage: [] } as unknown as CaseResult);

async function judge(repo: TempRepo, plan: Record<string, string[]>, ids: string[], command = ['node', 'judge.cjs']) {
  const waits: number[] = [];
  const out = await judgeRun(repo.dir, { command, shell: false, timeoutSec: 20, env: {} } as never, ids.map(item), ids.map(result), new Map(), {
    env: { ...process.env, ...repo.env, PLAN: JSON.stringify(plan) }, concurrency: 2, run: 'batch01-nomem-run1', scope: { prose: [], memoryPolicy: [] },
    sleep: async (ms) => { waits.push(ms); },
  });
  return { out, waits };
}

describe.concurrent('judgeRun: robust graders', () => {
  it('asks again after output that does not parse, and retries a 429 and a 503 page with backoff', async () => {
    const repo = setup();
    const { out, waits } = await judge(repo, { a: ['garbage'], b: ['429', '503'] }, ['a', 'b', 'wrong']);
    expect(out).toEqual({
      a: expect.objectContaining({ right: true }),
      b: expect.objectContaining({ right: true }),
      wrong: expect.objectContaining({ right: false }),
    });
    expect(waits).toEqual([1000, 2000]);
  });

  it('a case whose judge still fails is given the error and the number of tries (VOID for the judge), never a crash', async () => {
    const repo = setup();
    const { out, waits } = await judge(repo, { a: ['crash', 'crash', 'crash', 'crash'], b: ['garbage', 'garbage'] }, ['a', 'b', 'c']);
    expect(out.a).toEqual({ error: 'the judge failed (exit 3) (4 tries)', tries: 4 });
    expect(out.b).toEqual({ error: 'the judge output is not JSON (Unexpected token \'o\', "not json {" is not valid JSON) (2 tries)', tries: 2 });
    expect(out.c).toMatchObject({ right: true });
    expect(waits).toEqual([1000, 2000, 4000]);
    // A judge that cannot start is not called again.
    const broken = await judge(repo, {}, ['d'], ['no-such-judge-binary']);
    expect(broken.out.d).toMatchObject({ error: expect.stringMatching(/^the judge could not start: /), tries: 1 });
    expect(broken.waits).toEqual([]);
  });

  it('what a judge changes in the repository is put back and named on the case; a person\'s own uncommitted work stays', async () => {
    const repo = setup();
    repo.write({ 'notes.md': 'mine, not committed\n' });
    const { out } = await judge(repo, { a: ['touch'] }, ['a']);
    expect(out.a).toMatchObject({ right: true, undone: ['agents/prompt.md', 'stray.txt'] });
    expect(readFileSync(repo.path('agents/prompt.md'), 'utf8')).toBe('Answer politely.\n');
    expect(repo.git('status', '--porcelain')).toBe('?? notes.md\n');
    // A file already changed before the judge ran gets its content back, not the committed one.
    writeFileSync(repo.path('agents/prompt.md'), 'Answer politely. (being edited)\n');
    const again = await judge(repo, { a: ['ok', 'touch'] }, ['a']);
    expect(again.out.a).toMatchObject({ right: true, undone: ['agents/prompt.md', 'stray.txt'] });
    expect(readFileSync(path.join(repo.dir, 'agents/prompt.md'), 'utf8')).toBe('Answer politely. (being edited)\n');
  });

  it('judge.repeats: a judge that disagrees with itself (seeded) is asked 3 times per answer, the majority stands, every ask is recorded', async () => {
    const repo = setup();
    const state = mkdtempSync(path.join(os.tmpdir(), 'git-tune-wavering-'));
    try {
      // Seed 11 misreads each case on its first ask only: one ask gets every case wrong, three get every case right.
      const ids = ['a', 'b', 'c', 'd'];
      const answers: Record<string, string> = { a: 'yes', b: 'yes', c: 'no', d: 'no' };
      const cases = ids.map((id) => ({ id, class: 'c', complexity: 'simple', input: { expect: 'yes' } } as unknown as Case));
      const results = ids.map((id) => ({ ...result(id), answer: answers[id] } as unknown as CaseResult));
      const run = async (repeats: number, name: string) => judgeRun(repo.dir, { command: ['node', WAVERING], shell: false, timeoutSec: 20, env: {}, repeats } as never, cases, results, new Map(), {
        env: { ...process.env, ...repo.env, JUDGE_SEED: '11', JUDGE_STATE: state }, concurrency: 2, run: name, scope: { prose: [], memoryPolicy: [] },
      });
      const once = await run(1, 'batch01-nomem-run1');
      expect(ids.map((id) => (once[id] as { right: boolean }).right)).toEqual([false, false, true, true]);
      expect(once.a).not.toHaveProperty('asks');
      const thrice = await run(3, 'batch01-nomem-run2');
      expect(ids.map((id) => (thrice[id] as { right: boolean }).right)).toEqual([true, true, false, false]);
      expect((thrice.a as unknown as { asks: unknown }).asks).toEqual([
        { right: false, summary: 'ask 1: the answer misses it (misread)' },
        { right: true, summary: 'ask 2: the answer says it' },
        { right: true, summary: 'ask 3: the answer says it' },
      ]);
      // The entry is an ask that voted with the majority: its summary and proposals, not the misread's.
      expect(thrice.a).toMatchObject({ summary: 'ask 2: the answer says it', proposals: [] });
      expect(thrice.c).toMatchObject({ right: false, summary: 'ask 2: the answer misses it' });

      // The findings: the majority is the case's result, the disagreement is said next to it.
      const draft = draftFindings({
        run: { name: 'batch01-nomem-run2', batch: 1, half: 'nomem', number: 2 },
        results: results.map((r) => ({ ...r, status: 'ok', right: null, checks: [], tokens: 10, llmCalls: 1, toolCalls: 0, memoryReads: 0, memoryWrites: { added: 0, changed: 0, deleted: 0, savedTwice: 0 }, durationMs: 1, costUsd: 0 } as unknown as CaseResult)),
        judge: thrice, previous: null, passingNomem: null, recheck: [], difficult: { onList: [], open: [] }, aimedSince: [],
      });
      expect([...draft.verdicts]).toEqual([['a', 'right'], ['b', 'right'], ['c', 'wrong'], ['d', 'wrong']]);
      expect(draft.markdown).toContain('| a | right | – | right (2 of 3 asks right, 1 wrong) |');
      expect(draft.markdown).toContain('- c: the judge disagreed with itself (1 of 3 asks right, 2 wrong); the majority stands: wrong. ask 1: right (ask 1: the answer says it (misread)); ask 2: wrong (ask 2: the answer misses it); ask 3: wrong (ask 3: the answer misses it)');
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
