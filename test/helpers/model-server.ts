import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { brain as defaultBrain, type Brain, type BrainMessage, type BrainReply, type BrainRequest, type BrainTool, type Wire } from './model-brain.js';

/**
 * A model on loopback that speaks both wire formats the API presets use: an
 * OpenAI-compatible `POST <base>/chat/completions` and the Anthropic
 * `POST /v1/messages`, with tool calls, structured output (OpenAI's
 * `response_format: json_schema`; Anthropic's one forced tool), usage, and
 * scripted faults (401, 429 with Retry-After, 500, an answer slower than a
 * timeout). Its answers come from a pure brain (./model-brain.ts). It records
 * every request (headers and body), so tests assert what the client sent.
 *
 * It checks the rules each wire enforces (Anthropic's `max_tokens`, turns
 * alternating from a user turn, each tool result answering a tool call of
 * the turn before; OpenAI's tool messages answering the assistant's calls)
 * and answers 400 when one is broken, as the real APIs do.
 */
export type Fault =
  /** An error answer: this status, a JSON body (default: the wire's error shape), headers. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** An answer held back this long (the brain's, unless `status` is given elsewhere). */
  | { delayMs: number }
  /** A 200 whose body is this text, as is (not JSON, or JSON of the wrong shape). */
  | { raw: string }
  /** This reply instead of the brain's. */
  | { reply: BrainReply };

export interface RecordedRequest {
  wire: Wire | 'unknown';
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** The request as the brain saw it (absent for a request that was refused). */
  normalized?: BrainRequest;
  /** What the server did: `brain`, a fault's status, `delayed`, `raw`. */
  answered: string;
}

export interface ModelServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The OPENAI_BASE_URL to give a client: `<url>/v1`. */
  openaiBase: string;
  /** The ANTHROPIC_BASE_URL to give a client: `<url>` (the client adds /v1/messages). */
  anthropicBase: string;
  requests: RecordedRequest[];
  /** Faults for the next requests, in order; once they are used up the brain answers. */
  enqueue(...faults: Fault[]): void;
  close(): Promise<void>;
}

export interface ModelServerOptions {
  brain?: Brain;
  /** The model name the server answers with (default: the requested one). */
  answeredModel?: (requested: string) => string;
  /** Input tokens reported as served from cache, per call (default 0). */
  cachedTokens?: number;
}

const tokensOf = (value: unknown) => Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));

class WireError extends Error {}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (typeof b === 'string' ? b : b?.type === 'text' ? String(b.text ?? '') : '')).join('');
  return '';
}

function normalizeOpenAi(body: any): BrainRequest {
  if (typeof body?.model !== 'string') throw new WireError('model is required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new WireError('messages must be a non-empty array');
  const system: string[] = [];
  const messages: BrainMessage[] = [];
  let pending = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== 'tool' && pending.size > 0) throw new WireError(`messages[${i}]: the tool calls ${[...pending].join(', ')} have no tool message answering them`);
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') messages.push({ role: 'user', text: textOf(m.content) });
    else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c: any) => {
        if (c.type !== 'function' || typeof c.function?.arguments !== 'string') throw new WireError(`messages[${i}].tool_calls: each is {type: function, function: {name, arguments: string}}`);
        return { id: String(c.id), name: String(c.function.name), arguments: JSON.parse(c.function.arguments) };
      });
      pending = new Set(calls.map((c: { id: string }) => c.id));
      messages.push({ role: 'assistant', text: textOf(m.content), toolCalls: calls });
    } else if (m.role === 'tool') {
      if (!pending.has(m.tool_call_id)) throw new WireError(`messages[${i}]: tool message for ${m.tool_call_id}, which no preceding assistant message called`);
      pending.delete(m.tool_call_id);
      messages.push({ role: 'tool', toolCallId: String(m.tool_call_id), text: textOf(m.content) });
    } else throw new WireError(`messages[${i}].role "${m.role}" is not a role`);
  }
  const tools: BrainTool[] = (body.tools ?? []).map((t: any) => {
    if (t.type !== 'function' || !t.function?.name) throw new WireError('tools: each is {type: function, function: {name, description, parameters}}');
    return { name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} };
  });
  const rf = body.response_format;
  let output: BrainRequest['output'];
  if (rf !== undefined) {
    if (rf.type !== 'json_schema' || typeof rf.json_schema?.name !== 'string' || typeof rf.json_schema?.schema !== 'object') throw new WireError('response_format: {type: json_schema, json_schema: {name, schema, strict}}');
    output = { name: rf.json_schema.name, schema: rf.json_schema.schema };
  }
  return { wire: 'openai', model: body.model, system: system.join('\n\n'), messages, tools, ...(output ? { output } : {}) };
}

function normalizeAnthropic(body: any): BrainRequest {
  if (typeof body?.model !== 'string') throw new WireError('model: Field required');
  if (typeof body.max_tokens !== 'number') throw new WireError('max_tokens: Field required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new WireError('messages: at least one message is required');
  const messages: BrainMessage[] = [];
  let pending = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== expected) throw new WireError(`messages: roles must alternate between "user" and "assistant", starting with "user" (messages[${i}] is "${m.role}")`);
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks)) throw new WireError(`messages[${i}].content: a string or an array of blocks`);
    if (m.role === 'user') {
      const results = blocks.filter((b) => b.type === 'tool_result');
      for (const b of results) {
        if (!pending.has(b.tool_use_id)) throw new WireError(`messages[${i}]: unexpected tool_use_id ${b.tool_use_id} in tool_result blocks: each tool_result must answer a tool_use of the previous message`);
        pending.delete(b.tool_use_id);
        messages.push({ role: 'tool', toolCallId: b.tool_use_id, text: textOf(b.content) });
      }
      if (pending.size > 0) throw new WireError(`messages[${i}]: tool_use ids were found without tool_result blocks immediately after: ${[...pending].join(', ')}`);
      const text = blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join('');
      if (text) messages.push({ role: 'user', text });
    } else {
      const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: String(b.id), name: String(b.name), arguments: b.input }));
      pending = new Set(calls.map((c) => c.id));
      messages.push({ role: 'assistant', text: blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join(''), toolCalls: calls });
    }
  }
  const all: BrainTool[] = (body.tools ?? []).map((t: any) => {
    if (!t.name || typeof t.input_schema !== 'object') throw new WireError('tools: each is {name, description, input_schema}');
    return { name: t.name, description: t.description ?? '', parameters: t.input_schema };
  });
  let output: BrainRequest['output'];
  const choice = body.tool_choice;
  if (choice?.type === 'tool') {
    const forced = all.find((t) => t.name === choice.name);
    if (!forced) throw new WireError(`tool_choice names the tool ${choice.name}, which is not in tools`);
    output = { name: forced.name, schema: forced.parameters };
  }
  const system = typeof body.system === 'string' ? body.system : textOf(body.system);
  return { wire: 'anthropic', model: body.model, system, messages, tools: all.filter((t) => t.name !== output?.name), ...(output ? { output } : {}) };
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const think = options.brain ?? defaultBrain;
  const faults: Fault[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let ids = 0;

  const encode = (wire: Wire, req: BrainRequest, reply: BrainReply, body: any) => {
    const model = options.answeredModel?.(req.model) ?? req.model;
    const inputTokens = tokensOf(body.messages) + tokensOf(body.system ?? '') + tokensOf(body.tools ?? []);
    const cached = Math.min(options.cachedTokens ?? 0, inputTokens);
    if (wire === 'openai') {
      const message: any = { role: 'assistant', content: null };
      let finish = 'stop';
      if (reply.kind === 'text') message.content = reply.text;
      else if (reply.kind === 'json') message.content = JSON.stringify(reply.json);
      else {
        message.content = reply.text ?? null;
        message.tool_calls = reply.calls.map((c) => ({ id: `call_${++ids}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
        finish = 'tool_calls';
      }
      return {
        id: `chatcmpl-${++ids}`, object: 'chat.completion', model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: { prompt_tokens: inputTokens, completion_tokens: tokensOf(message), total_tokens: inputTokens + tokensOf(message), prompt_tokens_details: { cached_tokens: cached } },
      };
    }
    let content: any[];
    let stop = 'end_turn';
    if (reply.kind === 'text') content = [{ type: 'text', text: reply.text }];
    else if (reply.kind === 'json') {
      content = [{ type: 'tool_use', id: `toolu_${++ids}`, name: req.output?.name ?? 'output', input: reply.json }];
      stop = 'tool_use';
    } else {
      content = [...(reply.text ? [{ type: 'text', text: reply.text }] : []), ...reply.calls.map((c) => ({ type: 'tool_use', id: `toolu_${++ids}`, name: c.name, input: c.arguments }))];
      stop = 'tool_use';
    }
    // Anthropic's input_tokens leave out cache reads.
    return {
      id: `msg_${++ids}`, type: 'message', role: 'assistant', model, content, stop_reason: stop,
      usage: { input_tokens: inputTokens - cached, output_tokens: tokensOf(content), cache_read_input_tokens: cached, cache_creation_input_tokens: 0 },
    };
  };

  const errorBody = (wire: Wire | 'unknown', status: number, message: string) => (wire === 'anthropic'
    ? { type: 'error', error: { type: status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message } }
    : { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null } });

  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      const wire: Wire | 'unknown' = req.method === 'POST' && url.endsWith('/chat/completions') ? 'openai' : req.method === 'POST' && url === '/v1/messages' ? 'anthropic' : 'unknown';
      let body: any = null;
      try {
        body = JSON.parse(data);
      } catch {
        // recorded as null; refused below
      }
      const record: RecordedRequest = { wire, method: req.method ?? '', path: url, headers: req.headers, body, answered: '' };
      requests.push(record);
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        if (res.destroyed || res.writableEnded) return;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      };
      if (wire === 'unknown') {
        record.answered = '404';
        return send(404, { error: { message: `no route for ${req.method} ${url}` } });
      }
      const fault = faults.shift();
      if (fault && 'status' in fault) {
        record.answered = String(fault.status);
        return send(fault.status, fault.body ?? errorBody(wire, fault.status, `scripted ${fault.status}`), fault.headers);
      }
      if (fault && 'raw' in fault) {
        record.answered = 'raw';
        return send(200, fault.raw);
      }
      if (body === null) {
        record.answered = '400';
        return send(400, errorBody(wire, 400, 'the body is not JSON'));
      }
      let normalized: BrainRequest;
      try {
        normalized = wire === 'openai' ? normalizeOpenAi(body) : normalizeAnthropic(body);
      } catch (err) {
        record.answered = '400';
        return send(400, errorBody(wire, 400, err instanceof WireError ? err.message : `bad request: ${(err as Error).message}`));
      }
      record.normalized = normalized;
      const reply = fault && 'reply' in fault ? fault.reply : think(normalized);
      const answer = () => send(200, encode(wire, normalized, reply, body));
      if (fault && 'delayMs' in fault) {
        record.answered = 'delayed';
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, fault.delayMs);
        timers.add(timer);
        return;
      }
      record.answered = 'brain';
      answer();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBase: `${url}/v1`,
    anthropicBase: url,
    requests,
    enqueue: (...more) => void faults.push(...more),
    close: () => new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
