import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { answerFrom, DONT_KNOW, ruleLine, rulesIn, slug, toRemember, type Rule } from './model-brain.js';

/**
 * A model on loopback for the real agent CLIs: the Anthropic Messages API
 * streamed (SSE: message_start, content_block_start/delta/stop with
 * text_delta and tool_use's input_json_delta, message_delta, message_stop)
 * for Claude Code (`ANTHROPIC_BASE_URL`), and the OpenAI Responses API
 * streamed (response.created, response.output_item.added/done,
 * response.output_text.delta, response.completed with usage) for Codex (a
 * `model_providers` entry with `wire_api = "responses"`). It records each
 * request and can answer the next ones with an error status.
 *
 * Its brain behaves like a model that follows its prose and uses the tools
 * it is offered (the rule format of ./model-brain.ts):
 * - a runner answers a question from the `When asked about <topic>, answer:
 *   <answer>` lines anywhere in what it was given (prose files the CLI loaded,
 *   memory files it read, its own instructions), else "I don't know.";
 * - told its memory folder (the preset's note, listing the files), it first
 *   reads them (claude: Read; codex: `cat` through exec_command);
 * - a `Remember: when asked about …` line is saved as a file in that folder
 *   (claude: Write; codex: exec_command) when the prose says "When told to
 *   remember something, save it to memory" and the fact is not known yet;
 * - told of a file-based memory of the CLI's own (Claude Code's auto-memory
 *   prompt), it saves the fact there too, as Claude does;
 * - an editor (the prompt lists "## Files you may change") applies each
 *   proposal's rule lines to its file, writes changes.md with `Aims:`, and
 *   also tries to change notes.txt, a file it may not change.
 */
export interface AgentRequest {
  wire: 'anthropic' | 'responses';
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** Every text of the request, joined (system, messages, tool results). */
  text: string;
  answered: string;
}

export interface AgentModelServer {
  url: string;
  /** ANTHROPIC_BASE_URL */
  anthropicBase: string;
  /** A provider base_url for codex (`<url>/v1`). */
  responsesBase: string;
  requests: AgentRequest[];
  /** Error statuses for the next requests, in order. */
  fail(...statuses: number[]): void;
  /** Drops the statuses not used yet. */
  clearFaults(): void;
  close(): Promise<void>;
}

/** Codex's arguments pointing it at this server, offline (its own provider; key from TEST_MODEL_KEY). */
export const codexProviderArgs = (base: string) => [
  '-c', 'model_provider="loopback"',
  '-c', `model_providers.loopback={name="loopback",base_url="${base}",wire_api="responses",env_key="TEST_MODEL_KEY",request_max_retries=1,stream_max_retries=1}`,
  '-m', 'gpt-5-codex',
];

type Call = { name: string; input: Record<string, unknown> };
type Reply = { text?: string; calls: Call[] };

interface Turn {
  /** What the CLI was asked (the case's input, or the editor's prompt). */
  question: string;
  /** Everything the model was given, tool results included. */
  text: string;
  /** The tool calls made so far, oldest first. */
  calls: Call[];
}

const MEMORY_NOTE = /Your memory is the folder (\S+?)\.(?:\s|$)/;
const MEMORY_FILES = /Its files now: ([^\n]+?)\.(?: The files| \w)/;
const AUTO_MEMORY = /persistent file-based memory at `([^`]+)`/;

function think(turn: Turn, cli: 'claude' | 'codex'): Reply {
  const done = (kind: string) => turn.calls.some((c) => c.name === kind || (cli === 'codex' && String(c.input.cmd ?? '').startsWith(`: ${kind};`)));
  const shell = (kind: string, cmd: string): Call => ({ name: 'exec_command', input: { cmd: `: ${kind}; ${cmd}` } });
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

  if (turn.question.includes('## Files you may change')) {
    // The editor.
    const files = turn.question.split('## Files you may change\n')[1]!.split('\n').filter((l) => l.startsWith('- ')).map((l) => l.slice(2));
    const changes = /Then write (\S+):/.exec(turn.question)![1]!;
    const proposals = (() => {
      try {
        return JSON.parse(turn.question.split('(merged; JSON: file, change, why, expect, cases)\n')[1]!.split('\n\n## ')[0]!) as Array<{ file: string; change: string; cases?: string[] }>;
      } catch {
        return [];
      }
    })().filter((p) => files.includes(p.file));
    if (proposals.length === 0) return { text: 'Nothing to change.', calls: [] };
    const aims = [...new Set(proposals.flatMap((p) => p.cases ?? []))];
    const note = `# Rules\n\nAdded the rules the judge proposed.\n\nAims: ${aims.join(', ')}\n`;
    if (cli === 'claude') {
      if (!done('Read')) return { calls: proposals.map((p) => ({ name: 'Read', input: { file_path: path.resolve(rootOf(turn), p.file) } })) };
      if (!done('Write')) {
        const calls: Call[] = [];
        for (const p of proposals) {
          const current = readBack(turn.text, path.resolve(rootOf(turn), p.file));
          calls.push({ name: 'Write', input: { file_path: path.resolve(rootOf(turn), p.file), content: `${current.trimEnd()}\n${p.change.trim()}\n` } });
        }
        calls.push({ name: 'Write', input: { file_path: path.resolve(rootOf(turn), changes), content: note } });
        calls.push({ name: 'Write', input: { file_path: path.resolve(rootOf(turn), 'notes.txt'), content: 'the editor was here\n' } });
        return { calls };
      }
      return { text: `Edited ${proposals.map((p) => p.file).join(', ')}.`, calls: [] };
    }
    if (!done('edit')) {
      const cmd = [...proposals.map((p) => `printf '%s\\n' ${q(p.change.trim())} >> ${q(p.file)}`), `mkdir -p ${q(path.dirname(changes))}`, `printf '%s' ${q(note)} > ${q(changes)}`, `echo 'the editor was here' > notes.txt`].join(' && ');
      return { calls: [shell('edit', cmd)] };
    }
    return { text: `Edited ${proposals.map((p) => p.file).join(', ')}.`, calls: [] };
  }

  // The runner.
  const memory = MEMORY_NOTE.exec(turn.text)?.[1] ?? null;
  const listed = memory ? (MEMORY_FILES.exec(turn.text)?.[1] ?? '').split(', ').filter(Boolean) : [];
  if (memory && listed.length > 0 && !done(cli === 'claude' ? 'Read' : 'read')) {
    const paths = listed.map((f) => path.join(memory, f));
    return cli === 'claude' ? { calls: paths.map((p) => ({ name: 'Read', input: { file_path: p } })) } : { calls: [shell('read', `cat ${paths.map(q).join(' ')}`)] };
  }
  // Claude's Read shows a file's lines numbered (`     1\t…`): the text, as the model reads it.
  const known = rulesIn(turn.text.split(turn.question).join('\n').replace(/^\s*\d+(?:\t|→)/gm, ''));
  const told = toRemember(turn.question);
  const policy = /When told to remember something, save it to memory/i.test(turn.text);
  const auto = AUTO_MEMORY.exec(turn.text)?.[1] ?? null;
  const isKnown = (r: Rule) => known.some((k) => k.topic.toLowerCase() === r.topic.toLowerCase() && k.answer === r.answer);
  const toSave = told.filter((r) => !isKnown(r));
  if (toSave.length > 0 && !done(cli === 'claude' ? 'Write' : 'save')) {
    const targets = [...(memory && policy ? [memory] : []), ...(auto && cli === 'claude' ? [auto] : [])];
    if (targets.length > 0) {
      const files = targets.flatMap((dir) => toSave.map((r) => ({ file: path.join(dir, `${slug(r.topic)}.md`), content: `${ruleLine(r)}\n` })));
      if (auto && cli === 'claude') files.push({ file: path.join(auto, 'MEMORY.md'), content: toSave.map((r) => `${ruleLine(r)}\n`).join('') });
      return cli === 'claude'
        ? { calls: files.map((f) => ({ name: 'Write', input: { file_path: f.file, content: f.content } })) }
        : { calls: [shell('save', files.map((f) => `printf '%s' ${q(f.content)} > ${q(f.file)}`).join(' && '))] };
    }
  }
  return { text: answerFrom([...told, ...known], turn.question) ?? DONT_KNOW, calls: [] };
}

/** The repository root the CLI runs in (claude: its environment note; codex: <cwd>). */
function rootOf(turn: Turn): string {
  return /Primary working directory: (\S+)/.exec(turn.text)?.[1] ?? /<cwd>([^<]+)<\/cwd>/.exec(turn.text)?.[1] ?? process.cwd();
}

/** A file's text as the Read tool showed it (claude numbers the lines: `1\t…` or `     1→…`). */
function readBack(text: string, _file: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    const m = /^\s*\d+(?:\t|→)(.*)$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out.join('\n');
}

const textOf = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('\n');
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return [o.text, o.content, o.output, o.arguments, o.input].map((x) => (x === undefined ? '' : typeof x === 'object' ? textOf(x) || JSON.stringify(x) : String(x))).join('\n');
  }
  return '';
};

/** Claude: the question is the user's last text block that is not a system reminder, in the first user message. */
function claudeTurn(body: any): Turn {
  const messages: any[] = body.messages ?? [];
  const first = messages.find((m) => m.role === 'user');
  const blocks: any[] = typeof first?.content === 'string' ? [{ type: 'text', text: first.content }] : first?.content ?? [];
  const question = [...blocks].reverse().find((b) => b.type === 'text' && !String(b.text).startsWith('<system-reminder>'))?.text ?? '';
  const calls: Call[] = messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m) => m.content.filter((b: any) => b.type === 'tool_use').map((b: any) => ({ name: b.name, input: b.input })));
  return { question, text: `${textOf(body.system)}\n${messages.map((m) => textOf(m.content)).join('\n')}`, calls };
}

/** Codex: the question is the last user message's text (after the memory note). */
function codexTurn(body: any): Turn {
  const input: any[] = body.input ?? [];
  const users = input.filter((i) => i.type === 'message' && i.role === 'user').map((i) => textOf(i.content));
  const question = users.filter((t) => !t.startsWith('<environment_context>') && !t.startsWith('# AGENTS.md')).at(-1) ?? '';
  const calls: Call[] = input.filter((i) => i.type === 'function_call').map((i) => ({ name: i.name, input: JSON.parse(i.arguments || '{}') }));
  return { question, text: `${body.instructions ?? ''}\n${input.map(textOf).join('\n')}`, calls };
}

const tokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

export async function startAgentModelServer(): Promise<AgentModelServer> {
  const requests: AgentRequest[] = [];
  const faults: number[] = [];
  const sockets = new Set<Socket>();
  let ids = 0;
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      const wire = url.startsWith('/v1/messages') && !url.includes('count_tokens') ? 'anthropic' : url.endsWith('/responses') ? 'responses' : null;
      let body: any = null;
      try {
        body = JSON.parse(data);
      } catch {
        // not JSON
      }
      if (!wire || req.method !== 'POST' || body === null) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"no route"}}');
        return;
      }
      const turn = wire === 'anthropic' ? claudeTurn(body) : codexTurn(body);
      const record: AgentRequest = { wire, path: url, headers: req.headers, body, text: turn.text, answered: '' };
      requests.push(record);
      const fault = faults.shift();
      if (fault !== undefined) {
        record.answered = String(fault);
        res.writeHead(fault, { 'content-type': 'application/json', ...(fault === 429 ? { 'retry-after': '0' } : {}) });
        res.end(JSON.stringify(wire === 'anthropic'
          ? { type: 'error', error: { type: fault === 401 ? 'authentication_error' : fault === 429 ? 'rate_limit_error' : 'api_error', message: fault === 401 ? 'invalid x-api-key' : `scripted ${fault}` } }
          : { error: { type: fault === 401 ? 'invalid_request_error' : 'server_error', code: fault === 401 ? 'invalid_api_key' : null, message: fault === 401 ? 'Incorrect API key provided' : `scripted ${fault}` } }));
        return;
      }
      const reply = think(turn, wire === 'anthropic' ? 'claude' : 'codex');
      record.answered = reply.calls.length > 0 ? `tools: ${reply.calls.map((c) => c.name).join(', ')}` : `text: ${reply.text}`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const inTokens = tokens(turn.text);
      if (wire === 'anthropic') {
        const ev = (type: string, d: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`);
        ev('message_start', { message: { id: `msg_${++ids}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inTokens, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } } });
        let index = 0;
        if (reply.text) {
          ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
          for (const part of reply.text.match(/.{1,16}/gs) ?? []) ev('content_block_delta', { index, delta: { type: 'text_delta', text: part } });
          ev('content_block_stop', { index: index++ });
        }
        for (const call of reply.calls) {
          ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${++ids}`, name: call.name, input: {} } });
          const json = JSON.stringify(call.input);
          for (let i = 0; i < json.length; i += 40) ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 40) } });
          ev('content_block_stop', { index: index++ });
        }
        ev('message_delta', { delta: { stop_reason: reply.calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: tokens(JSON.stringify(reply)) } });
        ev('message_stop', {});
      } else {
        const ev = (type: string, d: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`);
        const id = `resp_${++ids}`;
        ev('response.created', { response: { id, status: 'in_progress' } });
        let index = 0;
        if (reply.text) {
          const item = { type: 'message', role: 'assistant', id: `msg_${++ids}`, status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
          ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
          ev('response.output_text.delta', { output_index: index, content_index: 0, item_id: item.id, delta: reply.text });
          ev('response.output_item.done', { output_index: index++, item });
        }
        for (const call of reply.calls) {
          const item = { type: 'function_call', id: `fc_${++ids}`, call_id: `call_${ids}`, name: call.name, arguments: JSON.stringify(call.input), status: 'completed' };
          ev('response.output_item.added', { output_index: index, item: { ...item, arguments: '' } });
          ev('response.output_item.done', { output_index: index++, item });
        }
        ev('response.completed', { response: { id, status: 'completed', usage: { input_tokens: inTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: tokens(JSON.stringify(reply)), output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inTokens + tokens(JSON.stringify(reply)) } } });
      }
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, anthropicBase: url, responsesBase: `${url}/v1`, requests,
    fail: (...statuses) => void faults.push(...statuses),
    clearFaults: () => void faults.splice(0),
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
