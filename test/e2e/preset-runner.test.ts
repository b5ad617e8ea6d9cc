import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';
import { TempRepo } from '../helpers/repo.js';
import { passGrade, yamlCases } from '../helpers/tuning.js';

/**
 * `git tune run` with the runner presets (openai-chat, anthropic) against the
 * loopback model server, whose model follows its prose: a case a prose rule
 * covers is right, one none covers is wrong; a fact the prose says to save
 * lands in the memory, and the with-memory run, offered it, answers the case
 * the no-memory run could not. The key is found nowhere afterwards.
 */
const KEY = 'sk-test-SECRET123';
const PROSE = [
  '# Help desk',
  '',
  '- When asked about refunds, answer: 30 days',
  '- When told to remember something, save it to memory.',
  '',
].join('\n');

const CASES = [
  { id: 'refund', class: 'desk', input: 'How long do refunds take?', checks: [{ type: 'equals', value: '30 days' }] },
  { id: 'office', class: 'desk', input: 'Where is the office?', checks: [{ type: 'equals', value: 'Main Street 1' }] },
  { id: 'teach', class: 'desk', input: 'Remember: when asked about the wifi, answer: tulip\nWhat is the wifi?', checks: [{ type: 'equals', value: 'tulip' }] },
  { id: 'wifi', class: 'desk', input: 'What is the wifi password?', checks: [{ type: 'equals', value: 'tulip' }] },
];

let server: ModelServer;
const repos: TempRepo[] = [];
beforeAll(async () => {
  server = await startModelServer({ answeredModel: (m) => `${m}-2025-01-01` });
});
afterAll(async () => {
  await server.close();
  for (const r of repos.splice(0)) r.cleanup();
});
beforeEach(() => {
  server.requests.length = 0;
});

async function presetRepo(runner: Record<string, unknown>, cases = CASES, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': PROSE });
  repos.push(repo);
  repo.write({ 'cases.yaml': yamlCases(cases) });
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node none.mjs', '--dataset', 'cases.yaml']);
  for (const [k, v] of [['runner', JSON.stringify(runner)], ['minBatch', String(cases.length)], ['maxBatch', '10'], ...config] as Array<[string, string]>) {
    await tuneOk(repo, ['config', 'set', k, v]);
  }
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  return repo;
}

type Result = { id: string; right: boolean; answer: unknown; llmCalls: number; toolCalls: number; memoryReads: number; memoryWrites: { added: number; changed: number; savedTwice: number }; usage: Array<{ model: string; costUsd: number }>; costUsd: number; error?: string };

async function run(repo: TempRepo, env: Record<string, string>): Promise<Record<string, Result>> {
  const r = await tuneAsync(repo, ['run', '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(r.stdout).results as Result[]).map((x) => [x.id, x]));
}

describe('the openai-chat runner preset', () => {
  it('answers from its prose, saves what it is told to remember, and the with-memory run uses it', async () => {
    const env = { OPENAI_BASE_URL: server.openaiBase, OPENAI_API_KEY: KEY };
    const repo = await presetRepo({ preset: 'openai-chat', options: { model: 'gpt-4o-mini' } });
    const nomem = await run(repo, env);
    expect(Object.fromEntries(Object.entries(nomem).map(([id, r]) => [id, [r.right, r.answer]]))).toEqual({
      refund: [true, '30 days'], // a prose rule covers it
      office: [false, "I don't know."], // none does
      teach: [true, 'tulip'],
      wifi: [false, "I don't know."], // nothing saved yet in this run's memory
    });
    expect(nomem.teach).toMatchObject({ llmCalls: 2, toolCalls: 1, memoryReads: 0, memoryWrites: { added: 1, changed: 0, savedTwice: 0 } });
    expect(nomem.refund).toMatchObject({ llmCalls: 1, toolCalls: 0, memoryWrites: { added: 0 } });
    // one usage item per model call, priced from the table by the answered (dated) name
    expect(nomem.teach!.usage.map((u) => u.model)).toEqual(['gpt-4o-mini-2025-01-01', 'gpt-4o-mini-2025-01-01']);
    expect(nomem.teach!.costUsd).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const writes = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/memory-writes.json'), 'utf8'));
    expect(writes).toEqual({ teach: [expect.objectContaining({ path: 'the-wifi.md', op: 'added', content: '- When asked about the wifi, answer: tulip\n' })] });

    // The conversation is kept in the logs ref: each request, reply (with usage) and tool call.
    const transcript = repo.git('show', 'refs/tune-logs/desk:batch01-nomem-run1/teach/transcript.jsonl').trim().split('\n').map((l) => JSON.parse(l));
    expect(transcript.map((e) => e.type)).toEqual(['request', 'reply', 'tool', 'request', 'reply', 'end']);
    expect(transcript[2]).toMatchObject({ name: 'save_memory', arguments: { name: 'the-wifi.md' }, result: 'saved the-wifi.md (43 bytes)' });
    expect(transcript[4].usage).toMatchObject({ model: 'gpt-4o-mini-2025-01-01' });
    expect(repo.git('ls-tree', '-r', '--name-only', 'tune/desk')).not.toContain('transcript');
    const shown = await tuneOk(repo, ['show', 'batch01-nomem-run1', 'teach', '--log']);
    expect(shown.stdout).toContain('--- transcript.jsonl\n{"type":"request","call":1,');
    expect(shown.stdout).toContain('"name":"save_memory"');

    passGrade(repo, 'batch01-nomem-run1');
    await tuneOk(repo, ['memory', 'candidate']);
    server.requests.length = 0;
    const mem = await run(repo, env);
    expect(Object.fromEntries(Object.entries(mem).map(([id, r]) => [id, [r.right, r.answer]]))).toEqual({
      refund: [true, '30 days'], office: [false, "I don't know."], teach: [true, 'tulip'],
      wifi: [true, 'tulip'], // the memory answered it
    });
    for (const r of Object.values(mem)) expect(r.memoryReads).toBe(1); // the one memory file, offered to each case
    // The model knew the fact already: no second save.
    expect(mem.teach).toMatchObject({ llmCalls: 1, toolCalls: 0, memoryWrites: { added: 0, changed: 0, savedTwice: 0 } });
    expect(server.requests[0]!.body.messages[0].content).toContain('<file path="the-wifi.md">');
    repo.fsck();
  });
});

describe('the anthropic runner preset', () => {
  it('answers from its prose, saves through its tool over the Messages API, and a model that always saves is seen saving twice', async () => {
    const repo = await presetRepo({ preset: 'anthropic', options: { model: 'claude-haiku-4-5' } }, CASES.slice(0, 3));
    // This agent's prose says to save even what its memory already holds.
    repo.write({ 'agents/prompt.md': PROSE.replace('- When told to remember something, save it to memory.', '- Always save what you are told to remember.') });
    repo.git('commit', '-q', '-am', 'always save');
    const env = { ANTHROPIC_BASE_URL: server.anthropicBase, ANTHROPIC_API_KEY: KEY };
    const results = await run(repo, env);
    expect(Object.fromEntries(Object.entries(results).map(([id, r]) => [id, [r.right, r.answer]]))).toEqual({
      refund: [true, '30 days'], office: [false, "I don't know."], teach: [true, 'tulip'],
    });
    expect(results.teach).toMatchObject({ llmCalls: 2, toolCalls: 1, memoryWrites: { added: 1, savedTwice: 0 } });
    expect(results.teach!.usage[0]!.model).toBe('claude-haiku-4-5-2025-01-01');
    expect(results.teach!.costUsd).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.path === '/v1/messages' && q.headers['x-api-key'] === KEY && q.headers['anthropic-version'] === '2023-06-01')).toBe(true);
    expect(server.requests[0]!.body.system).toContain('- When asked about refunds, answer: 30 days');

    passGrade(repo, 'batch01-nomem-run1');
    await tuneOk(repo, ['memory', 'candidate']);
    const mem = await run(repo, env);
    // Offered the fact, it saves it again all the same: the run records it as saved twice.
    expect(mem.teach).toMatchObject({ right: true, memoryReads: 1, toolCalls: 1, memoryWrites: { added: 0, changed: 1, savedTwice: 1 } });
    expect(mem.refund).toMatchObject({ right: true, memoryReads: 1, toolCalls: 0, memoryWrites: { savedTwice: 0 } });
  });
});

describe('the API key', () => {
  it('is found nowhere after a run whose endpoint echoed it: not in objects, refs, the logs ref, results or output', async () => {
    // A key in a variable not named like a secret: only the preset's own redaction keeps it out.
    const repo = await presetRepo({ preset: 'openai-chat', options: { model: 'gpt-4o-mini', apiKeyEnv: 'LLM_AUTH' } }, CASES.slice(0, 2), [['concurrency', '1']]);
    server.enqueue(
      { status: 500, body: { error: { message: `upstream refused ${KEY}` } } },
      { status: 400, body: { error: { message: `Incorrect API key provided: ${KEY}` } } },
    );
    const r = await tuneAsync(repo, ['run', '--json'], { OPENAI_BASE_URL: server.openaiBase, LLM_AUTH: KEY });
    expect(r.code, r.stderr).toBe(0);
    const results = JSON.parse(r.stdout).results as Result[];
    // The first case got the 500 and, retried, its answer; the second the 400, as its error.
    expect(results.map((x) => x.error ?? 'answered').sort()).toEqual(['answered', 'the OpenAI-compatible endpoint answered HTTP 400: Incorrect API key provided: [redacted]']);
    // The errored case's answer is a wrong one no earlier answer establishes, so it is re-run (the faults used up,
    // the model answers it wrong) until its majority settles: 2 repeats, one call each.
    const errored = results.find((x) => x.error)!;
    expect((errored as Result & { repeats?: Array<{ right: boolean }> }).repeats?.map((x) => x.right)).toEqual([false, false]);
    // 500, its retry, 400, and the 2 repeats' calls: each sent the key.
    expect(server.requests.filter((q) => q.headers.authorization === `Bearer ${KEY}`)).toHaveLength(5);
    const logs = repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk');
    expect(logs).toContain('stderr');
    const show = await tuneAsync(repo, ['show', 'batch01-nomem-run1', results[0]!.id, '--log']);
    expect(show.stdout + show.stderr).toContain('upstream refused [redacted]');
    const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, { cwd: repo.dir, maxBuffer: 1 << 30 }).stdout.toString('latin1');
    const places = {
      'git objects': sh('git', ['cat-file', '--batch-all-objects', '--batch']),
      refs: sh('git', ['for-each-ref']),
      'working tree and .git/tune': sh('grep', ['-r', '-a', '-l', KEY, '.']),
      'the output of git tune run': r.stdout + r.stderr,
      'git tune show --log': show.stdout + show.stderr,
    };
    for (const [where, text] of Object.entries(places)) expect(text.includes(KEY), `${where} holds the key`).toBe(false);
    expect(places['git objects']).toContain('upstream refused [redacted]'); // the log was stored, redacted
    expect(logs).toContain('transcript.jsonl');
  });
});
