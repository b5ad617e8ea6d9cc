import { promises as fs } from 'node:fs';
import path from 'node:path';
import { filesUnder } from '../../files.js';
import { ModelError, type CallUsage, type ChatMessage, type Model, type ToolCall, type ToolSpec } from './types.js';

/**
 * The runner presets' agent (openai-chat, anthropic): the prose as its
 * system prompt, the case's input as the user's message, and a tool loop
 * that honours the memory contract (docs/contracts.md, Presets):
 *
 * - the files of the case's memory copy (TUNE_MEMORY) are offered to the
 *   model: their text in the system prompt under `# Memory`, up to
 *   MEMORY_INLINE_CHARS; past that, by name, read through `read_memory`.
 *   `memoryReads` counts the files the model was given or read, no more;
 * - `save_memory` (name, content) writes a file into the memory copy, which
 *   the run records as a memory write; names that would leave the copy are
 *   refused (told to the model, not a crash);
 * - up to `maxTurns` model calls; the tool calls between them are counted.
 *
 * A `ModelError` ends the case as the runner contract says: `auth` is
 * `sandboxDown` (every later case would fail alike), `unavailable` makes
 * the case VOID, `refused` is the case's `error`.
 */

/** Memory text inlined in the system prompt at most; later files are offered by name. */
export const MEMORY_INLINE_CHARS = 64 * 1024;
const MAX_NAME = 200;

export interface ProseFile {
  path: string;
  text: string;
}

/** The system prompt's prose: each file under a tag naming its path. */
export const proseSection = (files: readonly ProseFile[]): string =>
  files.map((f) => `<file path="${f.path}">\n${f.text.endsWith('\n') ? f.text : `${f.text}\n`}</file>`).join('\n\n');

export interface MemoryFileText {
  path: string;
  text: string;
}

/** The memory copy's text files, sorted by path (binary files and links are not offered). */
export async function readMemoryFiles(dir: string): Promise<MemoryFileText[]> {
  const out: MemoryFileText[] = [];
  for (const r of await filesUnder(dir, '')) {
    const data = await fs.readFile(path.join(dir, r));
    const text = data.toString('utf8');
    if (!text.includes('\u0000') && Buffer.from(text, 'utf8').equals(data)) out.push({ path: r, text });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Why a name given to save_memory is refused, or null: a relative path of plain segments, inside the memory copy. */
export function memoryNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'name must be a non-empty string';
  if (name.length > MAX_NAME) return `name must be at most ${MAX_NAME} characters`;
  const segments = name.split('/');
  if (name.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..')) return 'name must be a relative path inside the memory, with no empty, "." or ".." parts';
  if (segments.some((s) => !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(s))) return 'each part of name may hold only letters, digits, ".", "_" and "-", and may not start with "." or "-"';
  return null;
}

export const SAVE_MEMORY: ToolSpec = {
  name: 'save_memory',
  description: 'Save a file into your memory, kept for later cases. Give a short file name (e.g. "facts/refund-window.md") and its whole content; a file of that name is replaced.',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', description: 'a relative file name, e.g. facts/refund-window.md' }, content: { type: 'string', description: 'the whole text of the file' } },
    required: ['name', 'content'],
    additionalProperties: false,
  },
};

export const READ_MEMORY: ToolSpec = {
  name: 'read_memory',
  description: 'Read one file of your memory by its name (the Memory section lists the files not shown there).',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', description: 'the file name as listed' } },
    required: ['name'],
    additionalProperties: false,
  },
};

/** The system prompt's memory section, and the files it left out (offered through read_memory). */
export function memorySection(files: readonly MemoryFileText[], budget = MEMORY_INLINE_CHARS): { text: string; inlined: string[]; listed: string[] } {
  if (files.length === 0) return { text: '# Memory\n\nYour memory is empty. Save what later cases will need with save_memory.\n', inlined: [], listed: [] };
  const inlined: MemoryFileText[] = [];
  const listed: string[] = [];
  let used = 0;
  for (const f of files) {
    if (listed.length === 0 && used + f.text.length <= budget) {
      inlined.push(f);
      used += f.text.length;
    } else listed.push(f.path);
  }
  const parts = ['# Memory', '', 'Your memory holds what earlier cases saved. Use it; save with save_memory only what it does not hold yet.', ''];
  if (inlined.length > 0) parts.push(proseSection(inlined), '');
  if (listed.length > 0) parts.push(`More files in your memory, read with read_memory: ${listed.join(', ')}`, '');
  return { text: parts.join('\n'), inlined: inlined.map((f) => f.path), listed };
}

/** One line of the transcript (TUNE_TRANSCRIPT, JSONL). */
export type TranscriptEntry =
  | { type: 'request'; call: number; messages: ChatMessage[]; tools: string[] }
  | { type: 'reply'; call: number; text: string; toolCalls: ToolCall[]; stopReason: string; usage: CallUsage }
  | { type: 'tool'; call: number; id: string; name: string; arguments: Record<string, unknown>; result: string }
  | { type: 'end'; answer: unknown; error?: string; void?: string; sandboxDown?: string };

export interface AgentInput {
  model: Model;
  prose: readonly ProseFile[];
  question: string;
  /** The case's memory copy (TUNE_MEMORY); none: no memory tools. */
  memoryDir: string | null;
  maxTurns: number;
  temperature?: number;
  transcript?: (entry: TranscriptEntry) => void;
}

export interface AgentResult {
  answer: unknown;
  usage: CallUsage[];
  llmCalls: number;
  toolCalls: number;
  memoryReads: number;
  error?: string;
  void?: string;
  sandboxDown?: string;
}

export async function runAgent(input: AgentInput): Promise<AgentResult> {
  const memory = input.memoryDir ? await readMemoryFiles(input.memoryDir) : [];
  const section = input.memoryDir ? memorySection(memory) : null;
  const read = new Set(section?.inlined ?? []);
  const system = [proseSection(input.prose), section?.text].filter(Boolean).join('\n\n');
  const tools = input.memoryDir ? [SAVE_MEMORY, ...(section!.listed.length > 0 ? [READ_MEMORY] : [])] : [];
  const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: input.question }];
  const result: AgentResult = { answer: null, usage: [], llmCalls: 0, toolCalls: 0, memoryReads: 0 };
  let sent = 0;
  const note = input.transcript ?? (() => {});

  const runTool = async (call: ToolCall): Promise<string> => {
    if (!input.memoryDir) return `error: there is no tool named ${call.name}`;
    const name = call.arguments.name;
    if (call.name === 'save_memory') {
      const problem = memoryNameProblem(name);
      if (problem) return `error: not saved: ${problem} (got ${JSON.stringify(name)})`;
      if (typeof call.arguments.content !== 'string') return 'error: not saved: content must be a string';
      const full = path.join(input.memoryDir, name as string);
      try {
        await fs.mkdir(path.dirname(full), { recursive: true });
        // A link in the copy's place is replaced, never followed out of the copy.
        await fs.rm(full, { force: true });
        await fs.writeFile(full, call.arguments.content);
      } catch (err) {
        return `error: not saved: ${(err as NodeJS.ErrnoException).code === 'ERR_FS_EISDIR' ? `${name} is a folder in your memory` : `cannot write ${name} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`}`;
      }
      return `saved ${name} (${Buffer.byteLength(call.arguments.content)} bytes)`;
    }
    if (call.name === 'read_memory') {
      const file = memory.find((f) => f.path === name);
      if (!file) return `error: your memory has no file ${JSON.stringify(name)}`;
      read.add(file.path);
      return file.text;
    }
    return `error: there is no tool named ${call.name}`;
  };

  try {
    for (let turn = 1; turn <= input.maxTurns; turn++) {
      note({ type: 'request', call: turn, messages: messages.slice(sent), tools: tools.map((t) => t.name) });
      sent = messages.length;
      const reply = await input.model.chat({ messages, ...(tools.length > 0 ? { tools } : {}), ...(input.temperature !== undefined ? { temperature: input.temperature } : {}) });
      result.llmCalls += 1;
      result.usage.push(reply.usage);
      note({ type: 'reply', call: turn, text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason, usage: reply.usage });
      if (reply.toolCalls.length === 0) {
        result.answer = reply.text;
        break;
      }
      if (turn === input.maxTurns) {
        result.error = `the model was still calling tools after ${input.maxTurns} calls (options.maxTurns): raise it, or tell the prose to answer sooner`;
        break;
      }
      messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls });
      for (const call of reply.toolCalls) {
        result.toolCalls += 1;
        const output = await runTool(call);
        note({ type: 'tool', call: turn, id: call.id, name: call.name, arguments: call.arguments, result: output });
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: output });
      }
    }
  } catch (err) {
    if (!(err instanceof ModelError)) throw err;
    if (err.kind === 'auth') result.sandboxDown = err.message;
    else if (err.kind === 'unavailable') result.void = err.message;
    else result.error = err.message;
  }
  result.memoryReads = read.size;
  note({ type: 'end', answer: result.answer, ...(result.error ? { error: result.error } : {}), ...(result.void ? { void: result.void } : {}), ...(result.sandboxDown ? { sandboxDown: result.sandboxDown } : {}) });
  return result;
}
