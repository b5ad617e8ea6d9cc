import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, startProcess } from '../helpers/cli.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';

/**
 * The runner presets' program (dist/bin/runner-api.js) run as the run layer
 * runs it, one case at a time, against the loopback model server: options
 * refused by name, the prose it finds, the memory tools and their limits,
 * the transcript, and what each endpoint failure makes of the case.
 */
const PROGRAM = path.join(ROOT, 'dist/bin/runner-api.js');
const KEY = 'sk-test-SECRET123';
let server: ModelServer;
const dirs: string[] = [];
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
beforeEach(() => {
  server.requests.length = 0;
});

interface Case {
  files?: Record<string, string>;
  memory?: Record<string, string>;
  input: unknown;
  options?: Record<string, unknown>;
  preset?: string;
  globs?: { prose: string[]; memoryPolicy: string[] };
  env?: Record<string, string>;
}

async function runOne(c: Case) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-runner-api-'));
  dirs.push(dir);
  const root = path.join(dir, 'repo');
  const memory = path.join(dir, 'memory');
  for (const [file, text] of Object.entries({ 'agents/prompt.md': '- When asked about refunds, answer: 30 days\n', ...c.files })) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  mkdirSync(memory, { recursive: true });
  for (const [file, text] of Object.entries(c.memory ?? {})) {
    mkdirSync(path.dirname(path.join(memory, file)), { recursive: true });
    writeFileSync(path.join(memory, file), text);
  }
  writeFileSync(path.join(dir, 'case.json'), JSON.stringify({ id: 'c1', input: c.input }));
  const preset = c.preset ?? 'openai-chat';
  const env = {
    PATH: process.env.PATH!,
    TUNE_PRESET: preset,
    TUNE_PRESET_OPTIONS: JSON.stringify(c.options ?? { model: 'gpt-4o-mini', apiKeyEnv: 'LLM_AUTH' }),
    TUNE_PROSE_GLOBS: JSON.stringify(c.globs ?? { prose: ['agents/**/*.md'], memoryPolicy: [] }),
    TUNE_ROOT: root,
    TUNE_CASE: path.join(dir, 'case.json'),
    TUNE_MEMORY: memory,
    TUNE_OUTPUT: path.join(dir, 'result.json'),
    TUNE_TRANSCRIPT: path.join(dir, 'transcript.jsonl'),
    OPENAI_BASE_URL: server.openaiBase,
    ANTHROPIC_BASE_URL: server.anthropicBase,
    LLM_AUTH: KEY,
    ...c.env,
  };
  // Async: the model server answers from this very process.
  const p = await startProcess(process.execPath, [PROGRAM], root, env).done;
  const result = JSON.parse(readFileSync(env.TUNE_OUTPUT, 'utf8'));
  const transcriptText = existsSync(env.TUNE_TRANSCRIPT) ? readFileSync(env.TUNE_TRANSCRIPT, 'utf8') : '';
  const list = (d: string, pre = ''): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? list(path.join(d, e.name), `${pre}${e.name}/`) : [`${pre}${e.name}`])).sort();
  return {
    code: p.code, stderr: p.stderr, result, transcriptText,
    transcript: transcriptText.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    memory: Object.fromEntries(list(memory).map((f) => [f, readFileSync(path.join(memory, f), 'utf8')])),
    dir, root,
  };
}

describe('the runner-api program', () => {
  it('refuses bad options by name, as the case error, without calling the model', async () => {
    const missing = await runOne({ input: 'refunds?', options: {} });
    expect(missing.code).toBe(0);
    expect(missing.result.answer).toBeNull();
    expect(missing.result.error).toMatch(/^runner preset openai-chat: options\.model is required /);
    expect(missing.result.error).toContain('e.g. options: {model: gpt-4o-mini}');
    const typo = await runOne({ input: 'x', preset: 'anthropic', options: { model: 'claude-sonnet-4-5', maxTurn: 3 } });
    expect(typo.result.error).toContain('maxTurn');
    const bad = await runOne({ input: 'x', options: { model: 'm', requestTimeoutSec: -1 } });
    expect(bad.result.error).toContain('options.requestTimeoutSec');
    expect(bad.result.error).toContain('(got -1)');
    const noFile = await runOne({ input: 'x', options: { model: 'm', system: ['agents/missing.md'] } });
    expect(noFile.result.error).toBe('runner preset openai-chat: options.system: cannot read agents/missing.md in the repository (ENOENT)');
    expect(server.requests).toHaveLength(0);
  });

  it('makes its system prompt of the prose the globs match, sorted, under their paths, never .tune or node_modules', async () => {
    const r = await runOne({
      input: 'How long do refunds take?',
      files: { 'agents/z.md': 'Zed.\n', 'agents/a/b.md': 'Bee.\n', 'agents/policy/mem.md': 'Keep memory short.\n', 'agents/node_modules/x.md': 'no\n', 'notes.md': 'not prose\n', '.tune/desk/README.md': 'no\n' },
      globs: { prose: ['agents/**/*.md', '!agents/policy/**', '**/README.md'], memoryPolicy: ['agents/policy/mem.md'] },
    });
    expect(r.result).toMatchObject({ answer: '30 days', llmCalls: 1, toolCalls: 0, memoryReads: 0 });
    const system = server.requests[0]!.body.messages[0].content as string;
    const paths = [...system.matchAll(/<file path="([^"]+)">/g)].map((m) => m[1]);
    expect(paths).toEqual(['agents/a/b.md', 'agents/policy/mem.md', 'agents/prompt.md', 'agents/z.md']);
    expect(system).toContain('<file path="agents/z.md">\nZed.\n</file>');
    expect(system).toContain('# Memory\n\nYour memory is empty.');
    expect(server.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(['save_memory']);
  });

  it('offers the memory in its prompt, counts the files given, and saves through save_memory into TUNE_MEMORY', async () => {
    const r = await runOne({
      input: 'Remember: when asked about the door code, answer: 4711\nWhat is the wifi?',
      files: { 'agents/prompt.md': '- When told to remember something, save it to memory.\n' },
      memory: { 'the-wifi.md': '- When asked about the wifi, answer: tulip\n', 'notes/other.md': 'unrelated\n' },
    });
    expect(r.result).toMatchObject({ answer: 'tulip', llmCalls: 2, toolCalls: 1, memoryReads: 2 });
    expect(r.result.usage).toHaveLength(2);
    expect(r.result.usage[0]).toMatchObject({ model: 'gpt-4o-mini' });
    expect(r.result.usage[0].costUsd).toBeGreaterThan(0);
    expect(r.memory).toEqual({
      'notes/other.md': 'unrelated\n',
      'the-door-code.md': '- When asked about the door code, answer: 4711\n',
      'the-wifi.md': '- When asked about the wifi, answer: tulip\n',
    });
    expect(server.requests[0]!.body.messages[0].content).toContain('<file path="the-wifi.md">\n- When asked about the wifi, answer: tulip\n</file>');
    // The transcript: each request's new messages, each reply with its usage, each tool call with its result, the end.
    expect(r.transcript.map((e) => e.type)).toEqual(['request', 'reply', 'tool', 'request', 'reply', 'end']);
    expect(r.transcript[0].messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(r.transcript[1]).toMatchObject({ call: 1, toolCalls: [{ name: 'save_memory' }], usage: { model: 'gpt-4o-mini' } });
    expect(r.transcript[2]).toMatchObject({ name: 'save_memory', arguments: { name: 'the-door-code.md' }, result: 'saved the-door-code.md (47 bytes)' });
    expect(r.transcript[3].messages.map((m: any) => m.role)).toEqual(['assistant', 'tool']);
    expect(r.transcript[5]).toEqual({ type: 'end', answer: 'tulip' });
  });

  it('refuses a save outside the memory copy and tells the model, which goes on', async () => {
    const names = ['../escape.md', '/etc/x', 'a/../../b', '.hidden', 'ok/fine.md', 'ok', 'ok/fine.md/deeper'];
    server.enqueue({ reply: { kind: 'tools', calls: names.map((name) => ({ name: 'save_memory', arguments: { name, content: 'x' } })) } }, { reply: { kind: 'tools', calls: [{ name: 'rm_rf', arguments: {} }] } });
    const r = await runOne({ input: 'refunds?' });
    expect(r.result).toMatchObject({ answer: '30 days', llmCalls: 3, toolCalls: 8 });
    expect(r.memory).toEqual({ 'ok/fine.md': 'x' });
    expect(existsSync(path.join(r.dir, 'escape.md'))).toBe(false);
    const results = r.transcript.filter((e) => e.type === 'tool').map((e) => e.result);
    expect(results.slice(0, 4).every((t: string) => t.startsWith('error: not saved:'))).toBe(true);
    expect(results.slice(4)).toEqual(['saved ok/fine.md (1 bytes)', 'error: not saved: ok is a folder in your memory', 'error: not saved: cannot write ok/fine.md/deeper (EEXIST)', 'error: there is no tool named rm_rf']);
  });

  it('offers memory past the inline limit by name, through read_memory, and counts only what was given or read', async () => {
    const big = `${'x'.repeat(70 * 1024)}\n`;
    server.enqueue({ reply: { kind: 'tools', calls: [{ name: 'read_memory', arguments: { name: 'z-late.md' } }, { name: 'read_memory', arguments: { name: 'nope.md' } }] } });
    const r = await runOne({ input: 'refunds?', memory: { 'a-small.md': 'small\n', 'b-big.md': big, 'z-late.md': 'late\n' } });
    expect(r.result).toMatchObject({ answer: '30 days', toolCalls: 2, memoryReads: 2 }); // a-small given, z-late read; b-big neither
    const system = server.requests[0]!.body.messages[0].content as string;
    expect(system).toContain('More files in your memory, read with read_memory: b-big.md, z-late.md');
    expect(server.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(['save_memory', 'read_memory']);
    expect(r.transcript.filter((e) => e.type === 'tool').map((e) => e.result)).toEqual(['late\n', 'error: your memory has no file "nope.md"']);
  });

  it('stops at maxTurns with a case error that says what to raise', async () => {
    server.enqueue(...[1, 2].map(() => ({ reply: { kind: 'tools' as const, calls: [{ name: 'save_memory', arguments: { name: 'loop.md', content: 'again' } }] } })));
    const r = await runOne({ input: 'x', options: { model: 'gpt-4o-mini', apiKeyEnv: 'LLM_AUTH', maxTurns: 2 } });
    expect(r.result).toMatchObject({ answer: null, llmCalls: 2, toolCalls: 1 });
    expect(r.result.error).toContain('still calling tools after 2 calls (options.maxTurns)');
  });

  it('makes 401 sandbox-down, 5xx past its retries void, another 4xx an error; the key nowhere', async () => {
    server.enqueue({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } });
    const auth = await runOne({ input: 'x' });
    expect(auth.result.sandboxDown).toBe('the OpenAI-compatible endpoint refused the key with HTTP 401: Incorrect API key provided: [redacted]');
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    server.enqueue({ status: 500, body: { error: { message: `boom ${KEY}` } } }, { status: 503 });
    const down = await runOne({ input: 'x', preset: 'anthropic', options: { model: 'claude-haiku-4-5', apiKeyEnv: 'LLM_AUTH', maxRetries: 1 } });
    expect(down.result.void).toBe('the Anthropic API answered HTTP 503: scripted 503 (after 2 tries)');
    expect(down.stderr).toContain('HTTP 500: boom [redacted]; trying again in');
    server.enqueue({ status: 422, body: { error: { message: 'bad schema' } } });
    const refused = await runOne({ input: 'x' });
    expect(refused.result).toMatchObject({ answer: null, error: 'the OpenAI-compatible endpoint answered HTTP 422: bad schema', llmCalls: 0 });
    for (const r of [auth, down, refused]) {
      expect(JSON.stringify(r.result) + r.stderr + r.transcriptText).not.toContain(KEY);
      expect(r.transcript.at(-1).type).toBe('end');
    }
  });
});
