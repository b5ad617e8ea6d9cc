import type { ApiOptions, ApiPreset } from '../../../contracts/presets.js';
import { costOf, priceOf } from './prices.js';
import { decideRetry, DEFAULT_RETRY, isRetryableStatus, type AttemptFailure, type RetryPolicy } from './retry.js';
import { ModelError, type ChatMessage, type ChatReply, type ChatRequest, type Model, type ToolCall } from './types.js';

/**
 * The `Model` of the API presets over HTTP: an OpenAI-compatible
 * chat-completions endpoint (`openai-chat`: OpenAI, Azure, vLLM, Ollama,
 * llama.cpp, LM Studio) or the Anthropic Messages API (`anthropic`), with
 * retries (./retry.ts), errors as `ModelError` kinds, and cost from the
 * price table (./prices.ts). The key is read from the environment, sent
 * in a header, and never appears in an error, a log line or a reply.
 *
 * Why our own `fetch` and not the official SDKs (issue 17 asked): each case
 * spawns a preset process, so start-up is paid per case and role. Measured
 * 2026-12-03 on the 2-core dev machine, Node 20, CPU time of a cold start,
 * median of 15: `node -e 0` 126 ms; our whole runner-api.js bundle 171 ms;
 * importing `openai` 6.49 265 ms, `@anthropic-ai/sdk` 1.16 480 ms, both
 * 581 ms (wall time on a quiet machine: 141, 354, 691, 838 ms). Installed:
 * openai 20 MB, @anthropic-ai/sdk 30 MB (55 MB with their dependencies).
 * What they would bring (retries with Retry-After, typed errors) is the page
 * below, tested at the wire; neither speaks the other provider, so a common
 * `Model` over both stays ours; and we need no streaming (a case waits for
 * the whole answer).
 */
export interface ClientDeps {
  fetch?: typeof fetch;
  /** Waits between retries (tests pass one that records and returns at once). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  /** Narration for stderr (a retry, a model with no known price); never holds the key. */
  log?: (line: string) => void;
  /** Backoff settings besides `options.maxRetries` (tests shorten them). */
  retry?: Partial<Omit<RetryPolicy, 'maxRetries'>>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** What a wire format makes of a reply body, before prices. */
interface Parsed {
  text: string;
  toolCalls: ToolCall[];
  json?: unknown;
  stopReason: string;
  model: string | undefined;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
}

interface Wire {
  provider: string;
  url: string;
  headers: Record<string, string>;
  keyEnv: string;
  body(request: ChatRequest): unknown;
  /** Throws a plain Error when the body is not the shape the wire promises. */
  parse(body: any, request: ChatRequest): Parsed;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

function parseArgs(raw: unknown, tool: string): Record<string, unknown> {
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  if (typeof raw === 'string') {
    let value: unknown;
    try {
      value = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch {
      throw new Error(`the arguments of its call to ${tool} are not JSON`);
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  throw new Error(`the arguments of its call to ${tool} are not an object`);
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

function openAiWire(options: ApiOptions, env: Env): Wire {
  const keyEnv = options.apiKeyEnv ?? 'OPENAI_API_KEY';
  const key = env[keyEnv];
  const base = trimSlash(env[options.baseUrlEnv ?? 'OPENAI_BASE_URL'] || 'https://api.openai.com/v1');
  // OpenAI's reasoning models refuse `max_tokens` for `max_completion_tokens`, which not every compatible server knows yet.
  const maxTokensKey = /^https:\/\/api\.openai\.com\//.test(`${base}/`) ? 'max_completion_tokens' : 'max_tokens';
  return {
    provider: 'the OpenAI-compatible endpoint',
    url: `${base}/chat/completions`,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    keyEnv,
    body: (request) => ({
      model: options.model,
      messages: request.messages.map(openAiMessage),
      ...(request.tools?.length ? { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })) } : {}),
      ...(request.output ? { response_format: { type: 'json_schema', json_schema: { name: request.output.name, schema: request.output.schema, strict: true } } } : {}),
      ...((request.maxTokens ?? options.maxTokens) !== undefined ? { [maxTokensKey]: request.maxTokens ?? options.maxTokens } : {}),
      ...((request.temperature ?? options.temperature) !== undefined ? { temperature: request.temperature ?? options.temperature } : {}),
    }),
    parse(body, request) {
      const choice = body?.choices?.[0];
      const message = choice?.message;
      if (!message || typeof message !== 'object') throw new Error('the reply has no choices[0].message');
      if (request.output && typeof message.refusal === 'string' && message.refusal) throw new Error(`the model refused: ${message.refusal}`);
      const text = typeof message.content === 'string' ? message.content : '';
      const toolCalls: ToolCall[] = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((c: any, i: number) => {
        const name = String(c?.function?.name ?? '');
        if (!name) throw new Error(`its tool call ${i + 1} names no function`);
        return { id: String(c.id ?? `call_${i}`), name, arguments: parseArgs(c.function.arguments, name) };
      });
      let json: unknown;
      if (request.output && toolCalls.length === 0) {
        try {
          json = JSON.parse(text);
        } catch {
          throw new Error(`its structured output (${request.output.name}) is not JSON`);
        }
      }
      const usage = body.usage ?? {};
      return {
        text, toolCalls, ...(json !== undefined ? { json } : {}),
        stopReason: String(choice.finish_reason ?? ''), model: typeof body.model === 'string' ? body.model : undefined,
        inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens), cachedTokens: num(usage.prompt_tokens_details?.cached_tokens),
      };
    },
  };
}

function openAiMessage(m: ChatMessage): unknown {
  switch (m.role) {
    case 'assistant':
      return m.toolCalls?.length
        ? { role: 'assistant', content: m.content || null, tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
        : { role: 'assistant', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}

/** Anthropic wants at most one system text, alternating user/assistant turns, and every tool result of a turn in one user message. */
function anthropicMessages(messages: readonly ChatMessage[]): { system: string; messages: Array<{ role: string; content: unknown }> } {
  const system: string[] = [];
  const out: Array<{ role: string; content: any }> = [];
  const push = (role: 'user' | 'assistant', blocks: unknown[]) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: [...blocks] });
  };
  for (const m of messages) {
    if (m.role === 'system') system.push(m.content);
    else if (m.role === 'user') push('user', [{ type: 'text', text: m.content }]);
    else if (m.role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }]);
    else push('assistant', [...(m.content ? [{ type: 'text', text: m.content }] : []), ...(m.toolCalls ?? []).map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments }))]);
  }
  return { system: system.join('\n\n'), messages: out };
}

function anthropicWire(options: ApiOptions, env: Env): Wire {
  const keyEnv = options.apiKeyEnv ?? 'ANTHROPIC_API_KEY';
  const key = env[keyEnv];
  return {
    provider: 'the Anthropic API',
    url: `${trimSlash(env[options.baseUrlEnv ?? 'ANTHROPIC_BASE_URL'] || 'https://api.anthropic.com')}/v1/messages`,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) },
    keyEnv,
    body(request) {
      const { system, messages } = anthropicMessages(request.messages);
      const tools = (request.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
      // Structured output: one tool whose input is the object, and the model made to call it.
      if (request.output) tools.push({ name: request.output.name, description: `Answer with the ${request.output.name} object.`, input_schema: request.output.schema });
      return {
        model: options.model,
        max_tokens: request.maxTokens ?? options.maxTokens ?? 4096,
        ...(system ? { system } : {}),
        messages,
        ...(tools.length ? { tools } : {}),
        ...(request.output ? { tool_choice: { type: 'tool', name: request.output.name } } : {}),
        ...((request.temperature ?? options.temperature) !== undefined ? { temperature: Math.min(1, (request.temperature ?? options.temperature)!) } : {}),
      };
    },
    parse(body, request) {
      if (!Array.isArray(body?.content)) throw new Error('the reply has no content blocks');
      const text = body.content.filter((b: any) => b?.type === 'text').map((b: any) => String(b.text ?? '')).join('');
      let json: unknown;
      const toolCalls: ToolCall[] = [];
      for (const b of body.content) {
        if (b?.type !== 'tool_use') continue;
        const name = String(b.name ?? '');
        if (request.output && name === request.output.name) json = parseArgs(b.input, name);
        else toolCalls.push({ id: String(b.id ?? `toolu_${toolCalls.length}`), name, arguments: parseArgs(b.input, name) });
      }
      if (request.output && json === undefined && toolCalls.length === 0) throw new Error(`it did not answer with its structured output (${request.output.name})`);
      const usage = body.usage ?? {};
      const cached = num(usage.cache_read_input_tokens);
      return {
        text, toolCalls, ...(json !== undefined ? { json } : {}),
        stopReason: String(body.stop_reason ?? ''), model: typeof body.model === 'string' ? body.model : undefined,
        // Anthropic counts cache reads and writes apart from `input_tokens`; ours holds all input, as OpenAI's does.
        inputTokens: num(usage.input_tokens) + cached + num(usage.cache_creation_input_tokens), outputTokens: num(usage.output_tokens), cachedTokens: cached,
      };
    },
  };
}

/** Replaces the key (in the forms text may carry it) with `[redacted]`. */
export function redactKey(text: string, key: string | undefined): string {
  if (!key || key.length < 4) return text;
  let out = text;
  for (const form of new Set([key, JSON.stringify(key).slice(1, -1), encodeURIComponent(key)])) out = out.split(form).join('[redacted]');
  return out;
}

/** The message a failed response carries (OpenAI's error.message, Anthropic's error.message), or the start of its text. */
function errorDetail(text: string): string {
  let detail = text.trim();
  try {
    const body = JSON.parse(text);
    const m = body?.error?.message ?? body?.message ?? body?.error;
    if (typeof m === 'string' && m) detail = m;
  } catch {
    // not JSON: the text itself
  }
  detail = detail.replace(/\s+/g, ' ');
  return detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
}

const lowerHeaders = (h: Headers): Record<string, string> => {
  const out: Record<string, string> = {};
  h.forEach((v, k) => (out[k.toLowerCase()] = v));
  return out;
};

const warnedUnpriced = new Set<string>();

export function makeModel(preset: ApiPreset, options: ApiOptions, env: Env, deps: ClientDeps = {}): Model {
  const wire = preset === 'anthropic' ? anthropicWire(options, env) : openAiWire(options, env);
  const key = env[wire.keyEnv];
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = deps.random ?? Math.random;
  const now = deps.now ?? Date.now;
  const log = (line: string) => (deps.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(redactKey(line, key));
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...deps.retry, maxRetries: options.maxRetries };
  const timeoutMs = options.requestTimeoutSec * 1000;
  const fail = (kind: ModelError['kind'], message: string, status?: number) => new ModelError(kind, redactKey(message, key), status);

  /** One HTTP call: the parsed reply, or what went wrong (a failure to retry, or a final ModelError). */
  async function attempt(payload: string): Promise<{ ok: true; body: unknown } | { ok: false; failure: AttemptFailure; message: string }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      let response: Response;
      try {
        response = await doFetch(wire.url, { method: 'POST', headers: wire.headers, body: payload, signal: controller.signal });
      } catch (err) {
        if (controller.signal.aborted) return { ok: false, failure: { kind: 'timeout' }, message: `no answer within ${options.requestTimeoutSec}s` };
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        return { ok: false, failure: { kind: 'network' }, message: `cannot reach ${wire.provider} (${cause?.code ?? cause?.message ?? (err as Error).message})` };
      }
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        if (controller.signal.aborted) return { ok: false, failure: { kind: 'timeout' }, message: `no whole answer within ${options.requestTimeoutSec}s` };
        return { ok: false, failure: { kind: 'network' }, message: `the answer of ${wire.provider} broke off (${(err as Error).message})` };
      }
      const status = response.status;
      if (status === 401 || status === 403) {
        const hint = key ? '' : ` ($${wire.keyEnv} is not set)`;
        throw fail('auth', `${wire.provider} refused the key with HTTP ${status}${hint}: ${errorDetail(text)}`, status);
      }
      if (!response.ok) {
        return { ok: false, failure: { kind: 'status', status, headers: lowerHeaders(response.headers) }, message: `${wire.provider} answered HTTP ${status}: ${errorDetail(text)}` };
      }
      try {
        return { ok: true, body: JSON.parse(text) };
      } catch {
        throw fail('refused', `${wire.provider} answered HTTP ${status} with a body that is not JSON: ${errorDetail(text)}`, status);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  async function post(payload: string): Promise<unknown> {
    for (let retry = 0; ; retry++) {
      const outcome = await attempt(payload);
      if (outcome.ok) return outcome.body;
      const decision = decideRetry(outcome.failure, retry, policy, random(), now());
      if (!decision.retry) {
        const retryable = outcome.failure.kind !== 'status' || isRetryableStatus(outcome.failure.status);
        const status = outcome.failure.kind === 'status' ? outcome.failure.status : undefined;
        if (!retryable) throw fail('refused', outcome.message, status);
        throw fail('unavailable', `${outcome.message} (after ${retry + 1} ${retry === 0 ? 'try' : 'tries'})`, status);
      }
      log(`git-tune: ${outcome.message}; trying again in ${(decision.waitMs / 1000).toFixed(1)}s (retry ${retry + 1} of ${policy.maxRetries})`);
      await sleep(decision.waitMs);
    }
  }

  return {
    name: options.model,
    async chat(request: ChatRequest): Promise<ChatReply> {
      const body = await post(JSON.stringify(wire.body(request)));
      let parsed: Parsed;
      try {
        parsed = wire.parse(body, request);
      } catch (err) {
        throw fail('refused', `${wire.provider} answered in a shape we cannot read: ${(err as Error).message}`);
      }
      const model = parsed.model || options.model;
      const price = priceOf(model, options);
      if (!price && !warnedUnpriced.has(model)) {
        warnedUnpriced.add(model);
        log(`git-tune: no price known for model ${model}: its cost counts as 0 (set options.pricing, or options.prices for it)`);
      }
      const tokens = { inputTokens: parsed.inputTokens, outputTokens: parsed.outputTokens, cachedTokens: parsed.cachedTokens };
      return {
        text: redactKey(parsed.text, key),
        toolCalls: parsed.toolCalls,
        ...(parsed.json !== undefined ? { json: parsed.json } : {}),
        usage: { model, ...tokens, costUsd: price ? costOf(price, tokens) : 0 },
        stopReason: parsed.stopReason,
      };
    },
  };
}
