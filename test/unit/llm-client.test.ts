import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiOptionsSchema, type ApiPreset } from '../../src/contracts/presets.js';
import { makeModel, type ClientDeps } from '../../src/run/presets/llm/client.js';
import { BUILT_IN_PRICES, costOf } from '../../src/run/presets/llm/prices.js';
import { ModelError, type ChatRequest, type ToolSpec } from '../../src/run/presets/llm/types.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';

/**
 * The API presets' HTTP client against the loopback model server, over both
 * wire formats: tool calls round trip, structured output, usage and cost,
 * the retries (asserted on the waits asked of an injected sleep, never on
 * wall time), the error kinds, and the key kept out of every message.
 */
const KEY = 'sk-test-SECRET123';
let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer({ answeredModel: (m) => (m === 'gpt-4o-mini' ? 'gpt-4o-mini-2024-07-18' : m), cachedTokens: 3 });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

interface Harness extends Required<Pick<ClientDeps, 'sleep' | 'log'>> {
  waits: number[];
  lines: string[];
}
const harness = (): Harness => {
  const waits: number[] = [];
  const lines: string[] = [];
  return { waits, lines, sleep: async (ms) => void waits.push(ms), log: (l) => void lines.push(l) };
};

function model(preset: ApiPreset, opts: Record<string, unknown> = {}, h: Harness = harness(), env: Record<string, string> = {}) {
  const options = apiOptionsSchema().parse({ model: preset === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini', ...opts });
  const keyEnv = preset === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  const baseEnv = preset === 'anthropic' ? { ANTHROPIC_BASE_URL: server.anthropicBase } : { OPENAI_BASE_URL: server.openaiBase };
  return makeModel(preset, options, { ...baseEnv, [keyEnv]: KEY, ...env }, { sleep: h.sleep, log: h.log, random: () => 0 });
}

const SAVE: ToolSpec = {
  name: 'save_memory', description: 'Save a file to memory',
  parameters: { type: 'object', properties: { name: { type: 'string' }, content: { type: 'string' } }, required: ['name', 'content'] },
};
const PROSE = '- When asked about refunds, answer: 30 days\n- When told to remember something, save it to memory.\n';

const expectModelError = async (p: Promise<unknown>, kind: ModelError['kind']): Promise<ModelError> => {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ModelError);
  expect((err as ModelError).kind).toBe(kind);
  expect((err as ModelError).message).not.toContain(KEY);
  return err as ModelError;
};

describe.each(['openai-chat', 'anthropic'] as const)('the %s client', (preset) => {
  it('answers from the prose, sends the key in the right header, and prices the call', async () => {
    const m = model(preset);
    const reply = await m.chat({ messages: [{ role: 'system', content: PROSE }, { role: 'user', content: 'How long do refunds take?' }] });
    expect(reply.text).toBe('30 days');
    expect(reply.toolCalls).toEqual([]);
    const sent = server.requests[0]!;
    if (preset === 'anthropic') {
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(KEY);
      expect(sent.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.body.system).toBe(PROSE);
      expect(sent.body.max_tokens).toBe(4096);
      expect(sent.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'How long do refunds take?' }] }]);
      expect(reply.stopReason).toBe('end_turn');
      // input counts cache reads too, as OpenAI's does
      expect(reply.usage.cachedTokens).toBe(3);
      expect(reply.usage.model).toBe('claude-sonnet-4-5');
    } else {
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(sent.body.messages[0]).toEqual({ role: 'system', content: PROSE });
      expect(sent.body).not.toHaveProperty('temperature'); // only when configured (some models refuse one)
      expect(reply.stopReason).toBe('stop');
      expect(reply.usage.model).toBe('gpt-4o-mini-2024-07-18'); // the provider's name, priced by its prefix
    }
    expect(reply.usage.inputTokens).toBeGreaterThan(3);
    expect(reply.usage.outputTokens).toBeGreaterThan(0);
    const price = BUILT_IN_PRICES[preset === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini']!;
    expect(reply.usage.costUsd).toBeCloseTo(costOf(price, reply.usage), 12);
    expect(reply.usage.costUsd).toBeGreaterThan(0);
  });

  it('round-trips tool calls: the model calls save_memory, the tool result goes back, the model answers', async () => {
    const m = model(preset);
    const request: ChatRequest = {
      messages: [{ role: 'system', content: PROSE }, { role: 'user', content: 'Remember: when asked about the wifi, answer: tulip\nRemember: when asked about the door code, answer: 4711\nWhat is the wifi?' }],
      tools: [SAVE],
    };
    const first = await m.chat(request);
    expect(first.toolCalls.map((c) => c.arguments)).toEqual([
      { name: 'the-wifi.md', content: '- When asked about the wifi, answer: tulip\n' },
      { name: 'the-door-code.md', content: '- When asked about the door code, answer: 4711\n' },
    ]);
    expect(first.stopReason).toBe(preset === 'anthropic' ? 'tool_use' : 'tool_calls');
    const sentTools = server.requests[0]!.body.tools;
    expect(sentTools).toEqual(preset === 'anthropic'
      ? [{ name: 'save_memory', description: SAVE.description, input_schema: SAVE.parameters }]
      : [{ type: 'function', function: { name: 'save_memory', description: SAVE.description, parameters: SAVE.parameters } }]);
    const second = await m.chat({
      ...request,
      messages: [...request.messages, { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
        ...first.toolCalls.map((c) => ({ role: 'tool' as const, toolCallId: c.id, name: c.name, content: 'saved' }))],
    });
    expect(second.text).toBe('tulip');
    const messages = server.requests[1]!.body.messages;
    if (preset === 'anthropic') {
      // both results in one user turn, answering the assistant's tool_use blocks
      expect(messages.map((x: { role: string }) => x.role)).toEqual(['user', 'assistant', 'user']);
      expect(messages[2].content.map((b: { type: string; tool_use_id: string }) => [b.type, b.tool_use_id])).toEqual(first.toolCalls.map((c) => ['tool_result', c.id]));
    } else {
      expect(messages.map((x: { role: string }) => x.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
      expect(messages[2].tool_calls[0].function.arguments).toBe(JSON.stringify(first.toolCalls[0]!.arguments));
      expect(messages[3].tool_call_id).toBe(first.toolCalls[0]!.id);
    }
  });

  it('asks for structured output and hands back the object', async () => {
    const schema = { type: 'object', properties: { right: { type: 'boolean' } }, required: ['right'], additionalProperties: false };
    server.enqueue({ reply: { kind: 'json', json: { right: true } } });
    const reply = await model(preset).chat({ messages: [{ role: 'user', content: 'grade it' }], output: { name: 'verdict', schema } });
    expect(reply.json).toEqual({ right: true });
    const body = server.requests[0]!.body;
    if (preset === 'anthropic') {
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'verdict' });
      expect(body.tools).toEqual([{ name: 'verdict', description: 'Answer with the verdict object.', input_schema: schema }]);
    } else {
      expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } });
    }
    expect(server.requests[0]!.normalized!.output?.name).toBe('verdict');
  });

  it('refuses structured output that is not there or not JSON', async () => {
    server.enqueue({ reply: { kind: 'text', text: 'right, I think' } });
    const err = await expectModelError(model(preset).chat({ messages: [{ role: 'user', content: 'x' }], output: { name: 'verdict', schema: { type: 'object' } } }), 'refused');
    expect(err.message).toContain('verdict');
  });

  it('makes 401 an auth error at once, with no retry and no key in the message', async () => {
    const h = harness();
    server.enqueue({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}. You can find your API key at https://x/keys?k=${encodeURIComponent(KEY)}` } } });
    const err = await expectModelError(model(preset, {}, h).chat({ messages: [{ role: 'user', content: 'hi' }] }), 'auth');
    expect(err.status).toBe(401);
    expect(err.message).toContain('Incorrect API key provided: [redacted]');
    expect(h.waits).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('makes 403 an auth error, and says when the key variable is not set', async () => {
    server.enqueue({ status: 403 });
    const keyEnv = preset === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    const err = await expectModelError(model(preset, {}, harness(), { [keyEnv]: '' }).chat({ messages: [{ role: 'user', content: 'hi' }] }), 'auth');
    expect(err.message).toContain(`$${keyEnv} is not set`);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('honours Retry-After on 429 (the wait asked of the sleep), then answers', async () => {
    const h = harness();
    server.enqueue({ status: 429, headers: { 'retry-after': '7' } }, { status: 429, headers: { 'retry-after-ms': '120' } });
    const reply = await model(preset, {}, h).chat({ messages: [{ role: 'system', content: PROSE }, { role: 'user', content: 'refunds?' }] });
    expect(reply.text).toBe('30 days');
    expect(h.waits).toEqual([7000, 120]);
    expect(server.requests.map((r) => r.answered)).toEqual(['429', '429', 'brain']);
    expect(h.lines[0]).toMatch(/HTTP 429.*trying again in 7\.0s \(retry 1 of 4\)/);
  });

  it('retries a 500 with backoff, then answers', async () => {
    const h = harness();
    server.enqueue({ status: 500 }, { status: 503 });
    const reply = await model(preset, {}, h).chat({ messages: [{ role: 'system', content: PROSE }, { role: 'user', content: 'refunds?' }] });
    expect(reply.text).toBe('30 days');
    expect(h.waits).toEqual([500, 1000]);
  });

  it('gives up after maxRetries: unavailable, naming the last failure', async () => {
    const h = harness();
    server.enqueue({ status: 500 }, { status: 502 }, { status: 529 });
    const err = await expectModelError(model(preset, { maxRetries: 2 }, h).chat({ messages: [{ role: 'user', content: 'x' }] }), 'unavailable');
    expect(err.message).toContain('HTTP 529');
    expect(err.message).toContain('after 3 tries');
    expect(h.waits).toEqual([500, 1000]);
    expect(server.requests).toHaveLength(3);
  });

  it('abandons an answer slower than requestTimeoutSec, retries it, and then is unavailable', async () => {
    const h = harness();
    server.enqueue({ delayMs: 5000 }, { delayMs: 5000 });
    const started = Date.now();
    const err = await expectModelError(model(preset, { requestTimeoutSec: 0.2, maxRetries: 1 }, h).chat({ messages: [{ role: 'user', content: 'x' }] }), 'unavailable');
    expect(err.message).toContain('no answer within 0.2s');
    expect(h.waits).toEqual([500]);
    expect(server.requests.map((r) => r.answered)).toEqual(['delayed', 'delayed']);
    expect(Date.now() - started).toBeLessThan(4000); // abandoned, not waited out
  });

  it('answers after a slow first try when the retry is fast', async () => {
    const h = harness();
    server.enqueue({ delayMs: 5000 });
    const reply = await model(preset, { requestTimeoutSec: 0.2 }, h).chat({ messages: [{ role: 'system', content: PROSE }, { role: 'user', content: 'refunds?' }] });
    expect(reply.text).toBe('30 days');
    expect(h.waits).toHaveLength(1);
  });

  it('makes another 4xx, or a body that is not JSON, a refusal, never retried; the key echoed in it is redacted', async () => {
    const h = harness();
    server.enqueue({ status: 400, body: { error: { message: `bad request from key ${KEY} (${JSON.stringify(KEY)})` } } });
    const err = await expectModelError(model(preset, {}, h).chat({ messages: [{ role: 'user', content: 'x' }] }), 'refused');
    expect(err.message).toContain('HTTP 400: bad request from key [redacted]');
    server.enqueue({ raw: `<html>proxy error for ${KEY}</html>` });
    const raw = await expectModelError(model(preset, {}, h).chat({ messages: [{ role: 'user', content: 'x' }] }), 'refused');
    expect(raw.message).toContain('not JSON');
    server.enqueue({ raw: '{"unexpected": true}' });
    await expectModelError(model(preset, {}, h).chat({ messages: [{ role: 'user', content: 'x' }] }), 'refused');
    expect(h.waits).toEqual([]);
  });

  it('keeps the key out of the retry narration too', async () => {
    const h = harness();
    server.enqueue({ status: 500, body: { error: { message: `upstream rejected ${KEY}` } } });
    await model(preset, {}, h).chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(h.lines.join('\n')).toContain('upstream rejected [redacted]');
    expect(h.lines.join('\n')).not.toContain(KEY);
  });

  it('is unavailable when nothing listens, after its retries, without the key (even one inside the URL)', async () => {
    const h = harness();
    const env: Record<string, string> = preset === 'anthropic' ? { ANTHROPIC_BASE_URL: `http://127.0.0.1:9/${KEY}` } : { OPENAI_BASE_URL: `http://127.0.0.1:9/v1?key=${KEY}` };
    const err = await expectModelError(model(preset, { maxRetries: 2 }, h, env).chat({ messages: [{ role: 'user', content: 'x' }] }), 'unavailable');
    expect(err.message).toMatch(/cannot reach/);
    expect(h.waits).toEqual([500, 1000]);
    expect(h.lines.join('\n')).not.toContain(KEY);
  });

  it('says once on stderr that a model has no known price, and counts it 0', async () => {
    const h = harness();
    const m = model(preset, { model: `local-${preset}` }, h);
    const a = await m.chat({ messages: [{ role: 'user', content: 'x' }] });
    await m.chat({ messages: [{ role: 'user', content: 'y' }] });
    expect(a.usage.costUsd).toBe(0);
    expect(h.lines.filter((l) => l.includes('no price known'))).toEqual([`git-tune: no price known for model local-${preset}: its cost counts as 0 (set options.pricing, or options.prices for it)`]);
    const priced = await model(preset, { model: `local2-${preset}`, pricing: { inputPerMTok: 1_000_000, outputPerMTok: 0 } }, h).chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(priced.usage.costUsd).toBe(priced.usage.inputTokens - priced.usage.cachedTokens + priced.usage.cachedTokens); // cached at the input price when none is set
  });
});

describe('the endpoints by default', () => {
  const canned = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  it('calls api.openai.com with max_completion_tokens, a compatible server with max_tokens, and api.anthropic.com by default', async () => {
    const seen: Array<{ url: string; body: any }> = [];
    const fetchStub = (async (url: string, init: RequestInit) => {
      seen.push({ url, body: JSON.parse(String(init.body)) });
      return url.includes('anthropic')
        ? canned({ model: 'claude-haiku-4-5', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } })
        : canned({ model: 'gpt-4o', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    }) as unknown as typeof fetch;
    const options = (model: string) => apiOptionsSchema().parse({ model, maxTokens: 64, temperature: 0.5 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await makeModel('openai-chat', options('gpt-4o'), {}, { fetch: fetchStub }).chat({ messages });
    await makeModel('openai-chat', options('llama3.1:8b'), { OPENAI_BASE_URL: 'http://localhost:11434/v1/' }, { fetch: fetchStub, log: () => {} }).chat({ messages });
    await makeModel('anthropic', options('claude-haiku-4-5'), {}, { fetch: fetchStub }).chat({ messages });
    expect(seen.map((s) => s.url)).toEqual(['https://api.openai.com/v1/chat/completions', 'http://localhost:11434/v1/chat/completions', 'https://api.anthropic.com/v1/messages']);
    expect(seen[0]!.body).toMatchObject({ max_completion_tokens: 64, temperature: 0.5 });
    expect(seen[0]!.body).not.toHaveProperty('max_tokens');
    expect(seen[1]!.body).toMatchObject({ max_tokens: 64 });
    expect(seen[2]!.body).toMatchObject({ max_tokens: 64, temperature: 0.5 });
  });
});
