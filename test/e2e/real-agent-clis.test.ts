import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCli, realClis, type RealCli } from '../helpers/agent-clis.js';
import { codexProviderArgs, startAgentModelServer, type AgentModelServer } from '../helpers/agent-model-server.js';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';
import { TempRepo } from '../helpers/repo.js';
import { stepCommits, yamlCases } from '../helpers/tuning.js';

/**
 * The agent-CLI presets on the real Claude Code and Codex (pinned in
 * test/helpers/agent-clis.ts, installed once into a cache folder), run
 * offline against a loopback model speaking their wire formats
 * (test/helpers/agent-model-server.ts): inputs as data, hermetic homes,
 * errors per the runner contract.
 */
const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-real-cli-'));
let server: AgentModelServer;
const bins = {} as Record<RealCli, string>;
/** The user's home as the tests fake it: what a hermetic run must not see. */
const userHome = path.join(tmp, 'user-home');

beforeAll(async () => {
  for (const cli of ['claude-code', 'codex'] as const) {
    const { bin, installMs } = installCli(cli);
    bins[cli] = bin;
    if (installMs > 0) process.stderr.write(`installed ${cli} in ${installMs} ms\n`);
  }
  server = await startAgentModelServer();
}, 900_000);
afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
interface CaseRun {
  result: Record<string, any>;
  dir: string;
  memory: string | null;
  /** The requests this case sent. */
  sent: AgentModelServer['requests'];
}

/** One case run by the runner preset as git-tune runs it, the real CLI pointed at the loopback model. */
async function runCase(cli: RealCli, input: string, opts: { memory?: Record<string, string> | null; prose?: string; options?: Record<string, unknown>; env?: Record<string, string> } = {}): Promise<CaseRun> {
  const dir = path.join(tmp, `case-${++n}`);
  const root = path.join(dir, 'root');
  mkdirSync(root, { recursive: true });
  const prose = opts.prose ?? '- When asked about refunds, answer: within 30 days\n- When told to remember something, save it to memory.\n';
  writeFileSync(path.join(root, cli === 'claude-code' ? 'CLAUDE.md' : 'AGENTS.md'), prose);
  let memory: string | null = null;
  if (opts.memory !== null && opts.memory !== undefined) {
    memory = path.join(dir, 'memory');
    mkdirSync(memory);
    for (const [f, text] of Object.entries(opts.memory)) writeFileSync(path.join(memory, f), text);
  }
  writeFileSync(path.join(dir, 'case.json'), JSON.stringify({ id: `c${n}`, input }));
  const tmpdir = path.join(dir, 'tmp');
  mkdirSync(tmpdir);
  const before = server.requests.length;
  const args = cli === 'codex' ? codexProviderArgs(server.responsesBase) : [];
  // Not spawnSync: the loopback model answers from this process's event loop.
  const r = await run(process.execPath, [path.join(ROOT, 'dist/bin/runner-cli.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH, HOME: userHome, TMPDIR: tmpdir, ANTHROPIC_BASE_URL: server.anthropicBase, ANTHROPIC_API_KEY: 'sk-test-key', TEST_MODEL_KEY: 'sk-test-key',
      ...opts.env,
      TUNE_PRESET: cli, TUNE_PRESET_OPTIONS: JSON.stringify({ bin: bins[cli], args, ...opts.options }), TUNE_ROOT: root,
      ...(memory ? { TUNE_MEMORY: memory } : {}),
      TUNE_CASE: path.join(dir, 'case.json'), TUNE_OUTPUT: path.join(dir, 'result.json'), TUNE_WORKSPACE: dir, TUNE_TRANSCRIPT: path.join(dir, 'transcript.jsonl'),
    },
  });
  expect(r.status, r.stderr).toBe(0);
  // The case's own home is gone with it: nothing it wrote there reaches another case.
  expect(readdirSync(tmpdir).filter((f) => f.startsWith('git-tune-agent-home-'))).toEqual([]);
  return { result: JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8')), dir, memory, sent: server.requests.slice(before) };
}

/** A child process to its end, without blocking this process (the model server lives here). */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Claude Code's project folder name for a working directory (its auto-memory lives under it). */
const claudeProject = (dir: string) => dir.replace(/[^a-zA-Z0-9]/g, '-');

describe.runIf(realClis)('the real Claude Code and Codex as runner presets', () => {
  for (const cli of ['claude-code', 'codex'] as const) {
    it(`${cli}: an input that starts with a dash is the input, not an option`, async () => {
      const dashed = await runCase(cli, '--where are refunds?');
      expect(dashed.result.error).toBeUndefined();
      expect(dashed.result.answer).toBe('within 30 days');
      const bullet = await runCase(cli, '- refunds: how long?');
      expect(bullet.result.answer).toBe('within 30 days');
      expect(bullet.result.llmCalls).toBeGreaterThanOrEqual(1);
      expect(bullet.result.usage[0].inputTokens).toBeGreaterThan(0);
    });

    it(`${cli}: reads its memory, saves a fact there when its prose says so, and counts the tool calls`, async () => {
      const r = await runCase(cli, 'Remember: when asked about the office, answer: Room 4\nWhere is the office?', { memory: { 'warranty.md': '- When asked about warranty, answer: two years\n' } });
      expect(r.result.error).toBeUndefined();
      expect(r.result.answer).toBe('Room 4');
      expect(readdirSync(r.memory!).sort()).toEqual(['the-office.md', 'warranty.md']);
      expect(readFileSync(path.join(r.memory!, 'the-office.md'), 'utf8')).toBe('- When asked about the office, answer: Room 4\n');
      // Codex reads and writes through its shell: the command that saved names the folder too, and counts (docs/presets.md).
      expect(r.result.memoryReads).toBe(cli === 'claude-code' ? 1 : 2);
      expect(r.result.toolCalls).toBeGreaterThanOrEqual(2);
      const next = await runCase(cli, 'what about the warranty?', { memory: { 'warranty.md': '- When asked about warranty, answer: two years\n' } });
      expect(next.result.answer).toBe('two years');
    });

    it(`${cli}: a refused key (401) is sandbox-down at once, after bounded retries, with no model call counted`, async () => {
      server.fail(...Array(12).fill(401));
      const started = Date.now();
      const r = await runCase(cli, 'refunds?', { options: { maxRetries: 1 } });
      server.clearFaults();
      expect(r.result.sandboxDown).toMatch(/refused the key \(HTTP 401\)/);
      expect(r.result.answer).toBeNull();
      expect(r.result.llmCalls).toBeUndefined();
      expect(r.sent.length).toBeLessThanOrEqual(cli === 'codex' ? 2 : 2);
      expect(Date.now() - started).toBeLessThan(30_000);
    });

    it(`${cli}: a rate limit (429) is retried; one that outlasts the retries makes the case VOID`, async () => {
      server.fail(429);
      const once = await runCase(cli, 'refunds?', { options: { maxRetries: 1 } });
      expect(once.result.answer).toBe('within 30 days');
      expect(once.sent.map((s) => s.answered)[0]).toBe('429');
      server.fail(429, 429, 429, 429);
      const always = await runCase(cli, 'refunds?', { options: { maxRetries: 1 } });
      server.clearFaults();
      expect(always.result.void).toMatch(/HTTP 429/);
      expect(always.result.error).toBeUndefined();
      expect(always.result.sandboxDown).toBeUndefined();
    });
  }

  it('claude-code: its auto-memory is off: a MEMORY.md in the user\'s home reaches no case, and a fact one case saves there reaches no other', async () => {
    // Seeded where Claude Code keeps the project's auto-memory, and the user's own CLAUDE.md.
    const root = path.join(tmp, `case-${n + 1}`, 'root');
    const seeded = path.join(userHome, '.claude/projects', claudeProject(root), 'memory');
    mkdirSync(seeded, { recursive: true });
    writeFileSync(path.join(seeded, 'MEMORY.md'), '- When asked about the vault, answer: code 1234 (leaked)\n');
    writeFileSync(path.join(userHome, '.claude/CLAUDE.md'), '- When asked about the lobby, answer: leaked from the user CLAUDE.md\n');
    const first = await runCase('claude-code', 'Remember: when asked about the parking, answer: level 2\nAnd the vault?');
    expect(first.result.answer).toBe('level 2');
    for (const s of first.sent) {
      expect(s.text).not.toContain('leaked');
      expect(s.text).not.toMatch(/persistent file-based memory at/);
    }
    const second = await runCase('claude-code', 'where is the parking? and the lobby?');
    expect(second.result.answer).toBe("I don't know.");
    for (const s of second.sent) expect(s.text).not.toContain('level 2');
    // Nothing was written to the user's home either.
    expect(readdirSync(seeded)).toEqual(['MEMORY.md']);
  });

  it('codex: the user\'s ~/.codex/AGENTS.md reaches no case, unless fromHome lets it in on purpose', async () => {
    mkdirSync(path.join(userHome, '.codex'), { recursive: true });
    writeFileSync(path.join(userHome, '.codex/AGENTS.md'), '- When asked about the lobby, answer: leaked from the user AGENTS.md\n');
    const first = await runCase('codex', 'where is the lobby?');
    expect(first.result.answer).toBe("I don't know.");
    for (const s of first.sent) expect(s.text).not.toContain('leaked');
    // Opting back in on purpose: fromHome copies that file into the case's home.
    const opted = await runCase('codex', 'where is the lobby?', { options: { fromHome: ['.codex/AGENTS.md'] } });
    expect(opted.result.answer).toBe('leaked from the user AGENTS.md');
  });

  it('an input larger than one argument may be reaches the CLI whole (on its stdin)', async () => {
    const long = `${'context line\n'.repeat(12_000)}so, refunds?`;
    for (const cli of ['claude-code', 'codex'] as const) {
      const r = await runCase(cli, long);
      expect(r.result.error).toBeUndefined();
      expect(r.result.answer).toBe('within 30 days');
      expect(r.sent[0]!.text).toContain('context line\ncontext line');
    }
  });
});

/**
 * `git tune auto` to done with each real CLI as runner and the other as
 * editor (so both are exercised in both roles, in two tunings run side by
 * side), the judge on the anthropic preset against the API loopback model
 * (test/helpers/model-server.ts), which proposes the missing rule.
 */
describe.runIf(realClis).concurrent('git tune auto with the real CLIs as runner and editor', () => {
  const repos: TempRepo[] = [];
  let judge: ModelServer;
  beforeAll(async () => {
    judge = await startModelServer();
  });
  afterAll(async () => {
    await judge?.close();
    for (const r of repos) r.cleanup();
  });

  for (const [runner, editor] of [['claude-code', 'codex'], ['codex', 'claude-code']] as const) {
    it(`${runner} as runner, ${editor} as editor: to done; the edit lands in the prose alone and changes.md says what it aims at`, async () => {
      const prose = runner === 'claude-code' ? 'CLAUDE.md' : 'AGENTS.md';
      const cases = [
        { id: 'currency', class: 'billing', topic: 'currency', input: '-- which currency do you bill in?', expected: 'EUR' },
        { id: 'refund', class: 'billing', topic: 'refund window', input: 'How long is the refund window?', expected: '30 days' },
      ].map((c) => ({ ...c, complexity: 'simple', rubric: [{ id: 'r1', text: 'gives the right value' }], checks: [{ type: 'equals', value: c.expected }] }));
      const repo = TempRepo.create({ [prose]: '# Shop\n\n- When asked about currency, answer: EUR\n', 'notes.txt': 'mine\n', 'cases.yaml': yamlCases(cases) });
      repos.push(repo);
      const env = {
        HOME: userHome, ANTHROPIC_BASE_URL: server.anthropicBase, ANTHROPIC_API_KEY: 'sk-test-key', TEST_MODEL_KEY: 'sk-test-key',
        JUDGE_BASE_URL: judge.anthropicBase, JUDGE_KEY: 'sk-judge',
      };
      const cliRole = (cli: RealCli) => JSON.stringify({ preset: cli, options: { bin: bins[cli], args: cli === 'codex' ? codexProviderArgs(server.responsesBase) : [], maxRetries: 1 } });
      await tuneOk(repo, ['init', 'shop', '--prose', prose, '--runner', 'node none.js', '--dataset', 'cases.yaml', '--no-hooks'], env);
      await tuneOk(repo, ['config', 'set', 'runner', cliRole(runner), 'editor', cliRole(editor),
        'judge', JSON.stringify({ preset: 'anthropic', options: { model: 'claude-loop', baseUrlEnv: 'JUDGE_BASE_URL', apiKeyEnv: 'JUDGE_KEY', maxRetries: 1 } }),
        'minBatch', '2', 'maxBatch', '2', 'recheck', '0', 'concurrency', '2', 'maxRuns', '3'], env);
      const r = await tuneAsync(repo, ['auto'], env);
      expect(r.code, `${r.stderr.slice(-3000)}\n${r.stdout}`).toBe(0);
      expect(r.stdout).toMatch(/^shop: done/m);
      const steps = stepCommits(repo, 'tune/shop');
      const edits = steps.filter((s) => s.step === 'edit');
      expect(edits.length).toBeGreaterThanOrEqual(1);
      const edit = edits[0]!;
      const files = repo.git('show', '--format=', '--name-only', edit.oid).trim().split('\n').sort();
      expect(files.filter((f) => !f.startsWith('.tune/shop/') || f.endsWith('changes.md'))).toEqual([`.tune/shop/runs/${edit.run}/changes.md`, prose].sort());
      const changes = repo.git('show', `${edit.oid}:.tune/shop/runs/${edit.run}/changes.md`);
      expect(changes).toMatch(/^Aims: refund$/m);
      // The editor also tried notes.txt: claude's permissions refused it; codex's change was put back and named.
      if (editor === 'codex') expect(changes).toContain('Put back by git-tune: the editor also changed notes.txt');
      expect(readFileSync(repo.path('notes.txt'), 'utf8')).toBe('mine\n');
      expect(repo.git('show', `tune/shop:${prose}`)).toContain('- When asked about refund window, answer: 30 days\n');
      repo.fsck();
    }, 300_000);
  }
});
