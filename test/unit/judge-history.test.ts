import { mkdtempSync, promises as fs, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCaseStory, storyBefore } from '../../src/core/case-story.js';
import { runJudgeApi } from '../../src/run/presets/judge-api.js';
import { judgeRequest } from '../../src/run/presets/judge-logic.js';
import { History, nomem } from '../helpers/history.js';
import { said, ScriptedModel } from '../helpers/scripted-model.js';

/**
 * The judge preset reads TUNE_HISTORY (the case's story before the run it
 * judges) and puts it in its request, short: each earlier run right or
 * wrong with its tokens and calls, and the edits between.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'tune-judge-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** a: wrong in run 1, an edit fixes it, right in run 2, an edit after run 2, wrong in run 3 (the run being judged). */
function history() {
  const h = new History().setup(2).plan(1, ['a', 'b']).ran(nomem(1, 1), 'NO CHANGE', ['a']);
  const fixes = h.edit(nomem(1, 1), ['a']);
  h.ran(nomem(1, 2), 'CORRECT');
  const breaks = h.edit(nomem(1, 2), ['b']);
  h.start(nomem(1, 3));
  h.finish(nomem(1, 3));
  const facts = new Map([
    [nomem(1, 1), { answer: 'two weeks', status: 'ok' as const, tokens: 910, llmCalls: 3 }],
    [nomem(1, 2), { answer: '30 days', status: 'ok' as const, tokens: 420, llmCalls: 1 }],
    [nomem(1, 3), { answer: 'ask us', status: 'ok' as const, tokens: 2000, llmCalls: 9 }],
  ]);
  return { story: storyBefore(buildCaseStory(h.fold(), 'a', facts), nomem(1, 3)), fixes, breaks };
}

const verdict = { right: false, rubric: {}, evidence: {}, summary: 'wrong since the edit after run 2', caseOnly: false, proposals: [] };

describe('judge preset: TUNE_HISTORY', () => {
  it('the story before the judged run holds the earlier runs only, and the edits since the last of them', () => {
    const { story, fixes, breaks } = history();
    expect(story.runs.map((r) => [r.run, r.outcome])).toEqual([[nomem(1, 1), 'wrong'], [nomem(1, 2), 'right']]);
    expect(story.runs[1]!.editsBefore.map((e) => e.oid)).toEqual([fixes]);
    expect(story.editsSince.map((e) => e.oid)).toEqual([breaks]);
  });

  it('the request says each earlier run, right or wrong, tokens and calls, and the edits between', async () => {
    const { story, fixes, breaks } = history();
    const root = path.join(dir, 'r1');
    await fs.mkdir(path.join(root, 'agents'), { recursive: true });
    await fs.writeFile(path.join(root, 'agents/prompt.md'), '# Rules\n');
    await fs.writeFile(path.join(root, 'case.json'), JSON.stringify({ id: 'a', input: 'refund window?', expected: '30 days' }));
    await fs.writeFile(path.join(root, 'result.json'), JSON.stringify({ answer: 'ask us', llmCalls: 9 }));
    await fs.writeFile(path.join(root, 'history.json'), JSON.stringify(story));
    const model = new ScriptedModel([verdict]);
    const err: string[] = [];
    const code = await runJudgeApi({
      TUNE_PRESET: 'openai-chat', TUNE_PRESET_OPTIONS: JSON.stringify({ model: 'gpt-test' }), TUNE_ROOT: root,
      TUNE_PROSE_GLOBS: JSON.stringify({ prose: ['agents/**/*.md'], memoryPolicy: [] }),
      TUNE_CASE: path.join(root, 'case.json'), TUNE_RESULT: path.join(root, 'result.json'), TUNE_OUTPUT: path.join(root, 'out.json'),
      TUNE_HISTORY: path.join(root, 'history.json'),
    }, { out: () => {}, err: (l) => err.push(l), model });
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const text = said(model.requests[0]!);
    expect(text).toContain('## This case earlier in the tuning');
    expect(text).toContain(`- ${nomem(1, 1)}: wrong (910 tokens, 3 llm calls)`);
    expect(text).toContain(`  then edit ${fixes.slice(0, 7)} (aimed at this case): confirmed by ${nomem(1, 2)}`);
    expect(text).toContain(`- ${nomem(1, 2)}: right (420 tokens, 1 llm call) (turned right)`);
    expect(text).toContain(`Edits since, which the prose below holds:\n- edit ${breaks.slice(0, 7)}: pending`);
    expect(model.requests[0]!.messages[0]!.content).toContain('say in the summary when it turned');
    // The run being judged is not its own history.
    expect(text).not.toContain(nomem(1, 3));
  });

  it('without TUNE_HISTORY the request has no history section', () => {
    const text = said(judgeRequest({ item: { id: 'a', input: 'x' }, result: { answer: 'y' }, prose: [] }));
    expect(text).not.toContain('earlier in the tuning');
    expect(said(judgeRequest({ item: { id: 'a', input: 'x' }, result: { answer: 'y' }, prose: [], history: { case: 'a', runs: [], editsSince: [], difficult: [] } })))
      .toContain('No earlier run held this case.');
  });
});
