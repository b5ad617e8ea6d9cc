import { describe, expect, it } from 'vitest';
import { judgeOutputSchema } from '../../src/contracts/judge.js';
import { checkVerdict, judgeCase, judgeRequest, JudgeReplyError, VERDICT, type JudgeCaseInput } from '../../src/run/presets/judge-logic.js';
import { ModelError, type JsonSchema } from '../../src/run/presets/llm/types.js';
import { said, ScriptedModel } from '../helpers/scripted-model.js';

/** The judge preset's logic against a scripted model: what it asks, what it accepts, what it asks again. */
const input: JudgeCaseInput = {
  item: {
    id: 'billing-refund-window', class: 'billing', input: { question: 'How long do I have to ask for a refund?' },
    expected: '30 days',
    rubric: [{ id: 'r1', text: 'names the window in days' }, { id: 'r2', text: 'gives no apology' }],
  },
  result: { answer: 'about two weeks', usage: [{ model: 'm', inputTokens: 900, outputTokens: 12, costUsd: 0.0004 }], llmCalls: 3, toolCalls: 1 },
  prose: [
    { path: 'agents/prompts/billing.md', text: '# Billing\n\n- currency: EUR\n', memoryPolicy: false },
    { path: 'agents/memory-policy.md', text: '# Memory\n\n- save: names\n', memoryPolicy: true },
  ],
};

const verdict = (over: Record<string, unknown> = {}) => ({
  right: false,
  rubric: { r1: 'missed', r2: 'met' },
  evidence: { r1: "says 'about two weeks'", r2: '' },
  summary: 'gives the wrong refund window',
  caseOnly: false,
  proposals: [{ file: './agents/prompts/billing.md', change: '- refund window: 30 days', why: 'r1 missed', expect: 'r1 met' }],
  ...over,
});

/** Every object of a JSON schema closed and all its properties required, as OpenAI's strict structured output wants. */
function strictObjects(schema: unknown, at = '$'): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as JsonSchema & { properties?: Record<string, unknown>; required?: string[] };
  const out: string[] = [];
  if (s.type === 'object') {
    if (s.additionalProperties !== false) out.push(`${at}: additionalProperties is not false`);
    const keys = Object.keys(s.properties ?? {}).sort();
    if (JSON.stringify([...(s.required ?? [])].sort()) !== JSON.stringify(keys)) out.push(`${at}: required ${JSON.stringify(s.required)} is not every property ${JSON.stringify(keys)}`);
  }
  for (const [k, v] of Object.entries(s)) {
    if (['$schema', 'default', 'minLength', 'maxLength'].includes(k)) out.push(`${at}: has ${k}`);
    if (v && typeof v === 'object') out.push(...strictObjects(v, `${at}.${k}`));
  }
  return out;
}

describe('judge preset: the request', () => {
  it('carries the case, the answer, what it cost and the prose, and asks for a strict verdict naming the rubric ids and prose files', () => {
    const request = judgeRequest(input);
    const text = said(request);
    for (const part of ['30 days', 'names the window in days', 'about two weeks', '"llmCalls": 3', '### agents/prompts/billing.md', '- currency: EUR', '### agents/memory-policy.md (memory policy)']) {
      expect(text).toContain(part);
    }
    expect(request.output?.name).toBe(VERDICT);
    const schema = request.output!.schema as any;
    expect(strictObjects(schema)).toEqual([]);
    expect(Object.keys(schema.properties.rubric.properties)).toEqual(['r1', 'r2']);
    expect(schema.properties.rubric.properties.r1.enum).toEqual(['met', 'partial', 'missed']);
    expect(schema.properties.proposals.items.properties.file.enum).toEqual(['agents/prompts/billing.md', 'agents/memory-policy.md']);
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(judgeOutputSchema.shape).sort());
    // No temperature of ours: some models take none but their default, and options.temperature is the user's.
    expect(request.temperature).toBeUndefined();
  });

  it('a case without rubric or expected still gets a closed verdict schema', () => {
    const request = judgeRequest({ ...input, item: { id: 'x', input: 'hi' } });
    expect(strictObjects(request.output!.schema)).toEqual([]);
  });
});

describe('judge preset: the reply', () => {
  it('marks and proposals come through as the judge contract has them, with the path as the repository writes it', async () => {
    const model = new ScriptedModel([verdict()]);
    const { output, calls } = await judgeCase(model, input);
    expect(calls).toBe(1);
    expect(judgeOutputSchema.parse(output)).toMatchObject({ right: false, rubric: { r1: 'missed', r2: 'met' } });
    expect(output.proposals).toEqual([{ file: 'agents/prompts/billing.md', change: '- refund window: 30 days', why: 'r1 missed', expect: 'r1 met' }]);
    expect(output.usage).toHaveLength(1);
    expect(output.droppedProposals).toBeUndefined();
  });

  it('a reply that does not validate is asked for again once, with what was wrong', async () => {
    const model = new ScriptedModel([verdict({ right: 'no' }), verdict()]);
    const { output, calls } = await judgeCase(model, input);
    expect(calls).toBe(2);
    expect(output.right).toBe(false);
    const again = model.requests[1]!;
    expect(again.messages.at(-2)).toMatchObject({ role: 'assistant', content: expect.stringContaining('"right":"no"') });
    expect(again.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('right: must be true or false') });
    expect(again.output?.name).toBe(VERDICT);
  });

  it('a rubric item left unmarked is asked for again; twice bad fails with the reason after two calls', async () => {
    const model = new ScriptedModel([verdict({ rubric: { r1: 'missed' } }), verdict({ rubric: { r1: 'missed', r2: 'sort of' } }), verdict()]);
    const err = await judgeCase(model, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JudgeReplyError);
    expect((err as Error).message).toMatch(/did not validate twice.*rubric\.r2: must be met, partial or missed/);
    expect(model.requests).toHaveLength(2);
    expect(said(model.requests[1]!)).toContain('missing: r2');
  });

  it('a reply with no structured object at all is asked again', () => {
    expect(checkVerdict(undefined, input)).toEqual({ ok: false, error: 'the reply holds no verdict object' });
    expect(checkVerdict([verdict()], input)).toMatchObject({ ok: false });
  });

  it('proposals naming files that are not prose are dropped and listed, the rest kept', async () => {
    const model = new ScriptedModel([verdict({
      proposals: [
        { file: 'agents/prompts/billing.md', change: '- refund window: 30 days', why: 'r1', expect: 'r1 met' },
        { file: 'src/agent.ts', change: 'hard-code 30 days', why: 'r1', expect: 'r1 met' },
        { file: '.tune/demo/config.yaml', change: 'drop the rubric', why: 'r1', expect: '' },
      ],
    })]);
    const { output } = await judgeCase(model, input);
    expect(output.proposals.map((p) => p.file)).toEqual(['agents/prompts/billing.md']);
    expect(output.droppedProposals?.map((p) => p.file)).toEqual(['src/agent.ts', '.tune/demo/config.yaml']);
    expect(output.droppedProposals?.[0]?.reason).toContain('not one of the prose files (agents/prompts/billing.md, agents/memory-policy.md)');
  });

  it('caseOnly keeps no proposal (the fault is in the case); rubric ids the case does not have are left out', async () => {
    const model = new ScriptedModel([verdict({ caseOnly: true, rubric: { r1: 'missed', r2: 'met', r9: 'met' }, evidence: { r9: 'x' } })]);
    const { output } = await judgeCase(model, input);
    expect(output.caseOnly).toBe(true);
    expect(output.proposals).toEqual([]);
    expect(Object.keys(output.rubric)).toEqual(['r1', 'r2']);
    expect(output.evidence).toEqual({});
  });

  it("the model's own failure (a refused key, a server that stays down) reaches the program as it is", async () => {
    const model = new ScriptedModel([new ModelError('auth', 'the endpoint refused the key (HTTP 401)', 401)]);
    await expect(judgeCase(model, input)).rejects.toMatchObject({ name: 'ModelError', kind: 'auth' });
  });
});
