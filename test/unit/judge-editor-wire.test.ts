import { mkdtempSync, promises as fs, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JUDGE_EXIT_DOWN } from '../../src/contracts/judge.js';
import { apiOptionsSchema, type ApiPreset } from '../../src/contracts/presets.js';
import { runEditorApi } from '../../src/run/presets/editor-api.js';
import { runJudgeApi } from '../../src/run/presets/judge-api.js';
import { makeModel } from '../../src/run/presets/llm/client.js';
import { brain, rulesIn } from '../helpers/model-brain.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';

/**
 * The judge and editor presets' programs, in process, against the loopback
 * model over both wire formats: the judge finds the missing rule, the editor
 * adds it as a patch, and the runner brain then answers right. Faults at the
 * wire end the programs with the line git-tune shows.
 */
const KEY = 'sk-test-judge-editor-0123456789abcdef';
let server: ModelServer;
let dir: string;

beforeAll(async () => {
  server = await startModelServer();
  dir = mkdtempSync(path.join(os.tmpdir(), 'tune-judge-editor-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
};

async function repo(name: string): Promise<string> {
  const root = path.join(dir, name);
  await fs.mkdir(path.join(root, 'agents/prompts'), { recursive: true });
  await fs.writeFile(path.join(root, 'agents/prompts/billing.md'), '# Billing\n\n- When asked about the currency, answer: EUR\n');
  await fs.writeFile(path.join(root, 'agents/memory-policy.md'), '# Memory policy\n');
  await fs.writeFile(path.join(root, 'case.json'), JSON.stringify({
    id: 'refund-window', class: 'billing', topic: 'refund window', input: 'How long is the refund window?', expected: '30 days',
    rubric: [{ id: 'r1', text: 'gives the window in days' }],
  }));
  await fs.writeFile(path.join(root, 'result.json'), JSON.stringify({ answer: "I don't know.", llmCalls: 1, usage: [{ model: 'm', inputTokens: 50, outputTokens: 4 }] }));
  return root;
}

function envFor(preset: ApiPreset, root: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TUNE_PRESET: preset,
    TUNE_PRESET_OPTIONS: JSON.stringify({ model: preset === 'anthropic' ? 'claude-test' : 'gpt-test', maxRetries: 0 }),
    TUNE_PROSE_GLOBS: JSON.stringify({ prose: ['agents/prompts/**/*.md'], memoryPolicy: ['agents/memory-policy.md'] }),
    TUNE_ROOT: root,
    ...(preset === 'anthropic' ? { ANTHROPIC_BASE_URL: server.anthropicBase, ANTHROPIC_API_KEY: KEY } : { OPENAI_BASE_URL: server.openaiBase, OPENAI_API_KEY: KEY }),
    ...extra,
  };
}

describe.each(['openai-chat', 'anthropic'] as const)('judge and editor presets over %s', (preset) => {
  it('the judge proposes the missing rule, the editor adds it as a patch, and the agent then answers right', async () => {
    const root = await repo(`loop-${preset}`);
    const judgeOut = path.join(root, 'judge.json');
    const judge = lines();
    const judgeCode = await runJudgeApi(envFor(preset, root, { TUNE_CASE: path.join(root, 'case.json'), TUNE_RESULT: path.join(root, 'result.json'), TUNE_OUTPUT: judgeOut }), judge.io);
    expect(judge.err).toEqual([]);
    expect(judgeCode).toBe(0);
    const verdict = JSON.parse(await fs.readFile(judgeOut, 'utf8'));
    expect(verdict).toMatchObject({
      right: false, rubric: { r1: 'missed' }, evidence: { r1: `says "I don't know."` }, caseOnly: false,
      proposals: [{ file: 'agents/prompts/billing.md', change: '- When asked about refund window, answer: 30 days' }],
    });
    expect(verdict.usage[0]).toMatchObject({ model: preset === 'anthropic' ? 'claude-test' : 'gpt-test' });
    // The structured output went out as the wire wants it.
    const sent = server.requests.at(-1)!;
    if (preset === 'anthropic') expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'verdict' });
    else expect(sent.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'verdict', strict: true } });

    await fs.writeFile(path.join(root, 'proposals.json'), JSON.stringify(verdict.proposals.map((p: object) => ({ ...p, cases: ['refund-window'] }))));
    await fs.writeFile(path.join(root, 'findings.md'), '# Findings\n\n## PROGRESS\n');
    const editor = lines();
    const changes = path.join(root, 'runs/r1/changes.md');
    const editorCode = await runEditorApi(envFor(preset, root, {
      TUNE_FINDINGS: path.join(root, 'findings.md'), TUNE_PROPOSALS: path.join(root, 'proposals.json'), TUNE_CHANGES: changes, TUNE_HALF: 'nomem',
    }), editor.io);
    expect(editor.err).toEqual([]);
    expect(editorCode).toBe(0);
    const billing = await fs.readFile(path.join(root, 'agents/prompts/billing.md'), 'utf8');
    expect(billing).toBe('# Billing\n\n- When asked about the currency, answer: EUR\n- When asked about refund window, answer: 30 days\n');
    expect(await fs.readFile(changes, 'utf8')).toMatch(/^# Changes\n\nRules added from the judge's proposals:[\s\S]*\nAims: refund-window\n$/);

    // The agent (the runner brain, through the same client) now answers from the added rule.
    const model = makeModel(preset, apiOptionsSchema().parse({ model: 'm', maxRetries: 0 }), envFor(preset, root));
    const reply = await model.chat({ messages: [{ role: 'system', content: billing }, { role: 'user', content: 'How long is the refund window?' }] });
    expect(reply.text).toBe('30 days');
    expect(rulesIn(billing)).toHaveLength(2);
  });

  it('a refused key ends the judge with JUDGE_EXIT_DOWN (not retried) and one line saying so, writing nothing; the key is in no line', async () => {
    const root = await repo(`auth-${preset}`);
    const out = path.join(root, 'judge.json');
    server.enqueue({ status: 401 });
    const judge = lines();
    const code = await runJudgeApi(envFor(preset, root, { TUNE_CASE: path.join(root, 'case.json'), TUNE_RESULT: path.join(root, 'result.json'), TUNE_OUTPUT: out }), judge.io);
    expect(code).toBe(JUDGE_EXIT_DOWN);
    expect(judge.err.at(-1)).toMatch(/^judge preset: the key was refused: .*HTTP 401/);
    expect(JSON.stringify(judge)).not.toContain(KEY);
    await expect(fs.access(out)).rejects.toThrow();
  });

  it('a server that stays down ends the editor non-zero with the reason, the prose untouched', async () => {
    const root = await repo(`down-${preset}`);
    await fs.writeFile(path.join(root, 'proposals.json'), JSON.stringify([{ file: 'agents/prompts/billing.md', change: '- When asked about refund window, answer: 30 days', cases: ['refund-window'] }]));
    server.enqueue({ status: 503 });
    const editor = lines();
    const code = await runEditorApi(envFor(preset, root, { TUNE_PROPOSALS: path.join(root, 'proposals.json'), TUNE_CHANGES: path.join(root, 'changes.md') }), editor.io);
    expect(code).toBe(1);
    expect(editor.err.at(-1)).toMatch(/^editor preset: the model stayed unavailable: .*HTTP 503/);
    expect(await fs.readFile(path.join(root, 'agents/prompts/billing.md'), 'utf8')).not.toContain('refund');
    await expect(fs.access(path.join(root, 'changes.md'))).rejects.toThrow();
  });
});

describe('judge and editor programs: bad set-up', () => {
  it('a misplaced preset or bad options say what is wrong and exit 2', async () => {
    const a = lines();
    expect(await runJudgeApi({ TUNE_PRESET: 'claude-code' }, a.io)).toBe(2);
    expect(a.err[0]).toContain('runs the openai-chat and anthropic presets; TUNE_PRESET is "claude-code"');
    const b = lines();
    expect(await runEditorApi({ TUNE_PRESET: 'openai-chat', TUNE_PRESET_OPTIONS: '{"modle": "x"}' }, b.io)).toBe(2);
    expect(b.err[0]).toMatch(/^editor preset openai-chat: options\.model: .*; options\.\(all\): Unrecognized key: "modle" \(e\.g\. editor: \{preset: openai-chat, options: \{model: gpt-4o-mini\}\}\)$/);
  });

  it('the brain answers the roles it is asked for', () => {
    const verdict = brain({ wire: 'openai', model: 'm', system: '', messages: [{ role: 'user', text: '## The case\n\n```json\n{"expected": "EUR"}\n```\n\nAnswer:\n\n```text\neur.\n```\n' }], tools: [], output: { name: 'verdict', schema: {} } });
    expect(verdict).toMatchObject({ kind: 'json', json: { right: true, proposals: [] } });
  });
});
