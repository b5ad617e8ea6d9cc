import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCaseStory } from '../../src/app/blame.js';
import { openTuning } from '../../src/app/tuning.js';
import { renderStory } from '../../src/cli/commands/blame.js';
import type { CaseStory } from '../../src/core/case-story.js';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * `git tune blame <case>` on the desk agent (test/fixtures/desk-agent.mjs
 * answers a topic from the `- topic: answer` rules of its prompt): refund is
 * wrong in run 1, an edit adds its rule, run 2 gets it right. The story names
 * that edit as the one that turned it, from the history alone.
 */
const AGENT = path.join(ROOT, 'test/fixtures/desk-agent.mjs');
const MAIN = 'desk/prompts/main.md';
const MAIN_TEXT = '# Desk rules\n\n- hello: greet the customer politely\n';
const RUN1 = 'batch01-nomem-run1';
const RUN2 = 'batch01-nomem-run2';
const CASES = [
  { id: 'hello', class: 'greeting', input: { topic: 'hello' }, checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'refund', class: 'billing', input: { topic: 'refund' }, checks: [{ type: 'contains', value: '30 days' }] },
];

const repos: TempRepo[] = [];
/** A judge (outside the repository) that keeps what TUNE_HISTORY held per run and case, and says right as the checks do. */
const JUDGED = mkdtempSync(path.join(os.tmpdir(), 'tune-blame-judge-'));
const JUDGE = path.join(JUDGED, 'judge.mjs');
writeFileSync(JUDGE, `import fs from 'node:fs';
const env = process.env;
const item = JSON.parse(fs.readFileSync(env.TUNE_CASE, 'utf8'));
const result = JSON.parse(fs.readFileSync(env.TUNE_RESULT, 'utf8'));
const answer = typeof result.answer === 'string' ? result.answer : JSON.stringify(result.answer);
fs.writeFileSync(${JSON.stringify(JUDGED)} + '/' + env.TUNE_RUN + '.' + env.TUNE_CASE_ID + '.json', env.TUNE_HISTORY ? fs.readFileSync(env.TUNE_HISTORY, 'utf8') : 'null');
fs.writeFileSync(env.TUNE_OUTPUT, JSON.stringify({ right: item.checks.every((c) => answer.includes(c.value)) }));
`);
afterAll(() => {
  repos.splice(0).forEach((r) => r.cleanup());
  rmSync(JUDGED, { recursive: true, force: true });
});
const judged = (run: string, id: string) => JSON.parse(readFileSync(path.join(JUDGED, `${run}.${id}.json`), 'utf8')) as CaseStory | null;

async function fixedRefund(): Promise<{ repo: TempRepo; fix: string }> {
  const repo = TempRepo.create({ [MAIN]: MAIN_TEXT, 'cases.json': JSON.stringify(CASES) });
  repos.push(repo);
  await tuneOk(repo, ['init', 'desk', '--prose', 'desk/**/*.md', '--runner', `node ${AGENT}`, '--dataset', 'cases.json', '--judge', `node ${JUDGE}`, '--no-hooks']);
  await tuneOk(repo, ['config', 'set', 'minBatch', '2', 'maxBatch', '2']);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  await tuneOk(repo, ['grade']);
  const changes = `.tune/desk/runs/${RUN1}/changes.md`;
  const before = existsSync(repo.path(changes)) ? readFileSync(repo.path(changes), 'utf8') : '';
  repo.write({ [MAIN]: `${MAIN_TEXT}- refund: refunds within 30 days\n`, [changes]: `${before}## Refunds\n\nAims: refund\n` });
  await tuneOk(repo, ['edit']);
  const fix = repo.git('rev-parse', 'HEAD').trim();
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  await tuneOk(repo, ['grade']);
  return { repo, fix };
}

describe('git tune blame', { timeout: 120_000 }, () => {
  it('tells the case story and marks the edit that turned it right; an unknown case is refused naming the close one', async () => {
    const { repo, fix } = await fixedRefund();

    const json = JSON.parse((await tuneOk(repo, ['blame', 'refund', '--json'])).stdout) as CaseStory & { tuning: string };
    expect(json.tuning).toBe('desk');
    expect(json.runs.map((r) => [r.run, r.outcome, r.turned ?? null])).toEqual([[RUN1, 'wrong', null], [RUN2, 'right', 'right']]);
    expect(json.runs[1]!.editsBefore).toEqual([expect.objectContaining({ oid: fix, status: 'confirmed', aimsHere: true, fate: `confirmed by ${RUN2}` })]);
    expect(json.runs[1]!.answer).toEqual(expect.stringContaining('30 days'));
    expect(json.runs[0]!.answer).toEqual(expect.not.stringContaining('30 days'));
    expect(json.runs[1]!.llmCalls).toBeTypeOf('number');

    const text = (await tuneOk(repo, ['blame', 'refund'])).stdout;
    const lines = text.trimEnd().split('\n');
    const editAt = lines.findIndex((l) => l.includes(`> edit ${fix.slice(0, 7)}`));
    expect(editAt).toBeGreaterThan(lines.findIndex((l) => l.startsWith(`${RUN1}  wrong`)));
    expect(lines[editAt]).toContain(`aimed at this case: confirmed by ${RUN2}`);
    expect(lines.find((l) => l.startsWith(`${RUN2}  right`))).toContain('<- turned right after the edits above');

    const unknown = await tuneAsync(repo, ['blame', 'refnd']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('tuning desk has no case refnd: did you mean refund?');
    const far = await tuneAsync(repo, ['blame', 'zzzzzzzzzzzz']);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('tuning desk has no case zzzzzzzzzzzz (its cases: hello, refund)');

    // The judge saw the story before the run it judged: nothing before run 1; run 1 wrong and the edit since, when judging run 2.
    expect(judged(RUN1, 'refund')).toMatchObject({ case: 'refund', runs: [], editsSince: [] });
    const seen = judged(RUN2, 'refund')!;
    expect(seen.runs.map((r) => [r.run, r.outcome])).toEqual([[RUN1, 'wrong']]);
    expect(seen.runs[0]!.answer).toEqual(json.runs[0]!.answer);
    expect(seen.editsSince).toEqual([expect.objectContaining({ oid: fix, aimsHere: true, status: 'pending' })]);

    // In-process, the same story: hello never turned, and no edit is blamed.
    const hello = await readCaseStory(await openTuning(repo.dir), 'hello');
    expect(hello.runs.map((r) => r.outcome)).toEqual(['right', 'right']);
    expect(renderStory(hello)).not.toContain('turned');
    expect(renderStory(hello)).toContain(`  edit ${fix.slice(0, 7)} after ${RUN1}: confirmed by ${RUN2}`);
  });
});
