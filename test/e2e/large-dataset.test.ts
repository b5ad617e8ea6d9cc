import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TempRepo } from '../helpers/repo.js';

/**
 * A dataset bigger than a call's argument list: reading its cases once went
 * through `push(...cases)`, which overflows V8's stack past some 120,000
 * elements ("Maximum call stack size exceeded").
 */
describe('dataset import of 130,000 cases', () => {
  const COUNT = 130_000;
  let repo: TempRepo;

  beforeAll(() => {
    const lines = Array.from({ length: COUNT }, (_, i) => JSON.stringify({ id: `c-${i}`, class: `k${i % 7}`, input: `question ${i}` }));
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'big.jsonl': `${lines.join('\n')}\n` });
  });
  afterAll(() => repo.cleanup());

  it('imports every case in one commit', () => {
    expect(repo.tune(['init', 'big', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']).code).toBe(0);
    const r = repo.tune(['dataset', 'import', 'big.jsonl']);
    expect(r.code, r.stderr).toBe(0);
    const stored = readFileSync(repo.path('.tune/big/dataset.jsonl'), 'utf8').trim().split('\n');
    expect(stored).toHaveLength(COUNT);
    expect(JSON.parse(stored[COUNT - 1]!)).toMatchObject({ id: `c-${COUNT - 1}` });
    expect(repo.git('log', '--format=%s', '-1').trim()).toBe(`tune(big): dataset of ${COUNT} cases in 7 classes`);
  }, 120_000);
});
