import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTune, tuneAsync } from '../helpers/cli.js';
import type { TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

/** A repo with a tuning planned up to batch 1 over `cases` (all in batch 1 when minBatch is large). */
async function setup(cases: Array<Record<string, unknown>>, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = await plannedRepo(cases, { config });
  repos.push(repo);
  return repo;
}

const plain = plainCase;

describe('git tune run', () => {
  it('runs every case (the wrong one re-run until its majority settles), records a tagged run commit native git accepts, and next asks for the grade', async () => {
    const repo = await setup([plain('a'), plain('b'), plain('c', { checks: [{ type: 'equals', value: 'nope' }] })]);
    const r = repo.tune(['run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('batch01-nomem-run1: finished');
    expect(r.stdout).toContain('2 right, 1 wrong');
    // c's wrong answer is its first ever, so it is re-run (noise.repeats 3) and stops after 2 repeats: 3 of 4 wrong settles it.
    expect(r.stdout).toContain('re-run before deciding: c 0/3 right');
    expect(repo.git('tag', '-l', 'tune/*').trim()).toBe('tune/desk/batch01-nomem-run1');
    const trailers = repo.git('log', '-1', '--format=%(trailers:only)', 'tune/desk');
    expect(trailers).toContain('Tune-Step: run');
    expect(trailers).toContain('Tune-Run: batch01-nomem-run1');
    // 5 runner calls at 120 tokens and $0.01 each (test/fixtures/runner.mjs): a, b, c and c's 2 repeats.
    expect(trailers).toContain('Tune-Tokens: 600');
    expect(trailers).toContain('Tune-Cost-Usd: 0.050000');
    expect(repo.git('status', '--porcelain').replace(/^\?\? cases.yaml\n/m, '')).toBe('');
    repo.fsck();
    const results = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/results.json'), 'utf8'));
    expect(results.map((x: { id: string; right: boolean }) => [x.id, x.right])).toEqual([['a', true], ['b', true], ['c', false]]);
    expect(results[0].memoryWrites).toMatchObject({ added: 1, savedTwice: 0 });
    const next = repo.tuneJson(['next']);
    expect(next).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run1', command: 'git tune grade' });
    // Logs are in git, outside the branch's diff.
    const log = repo.tune(['show', 'batch01-nomem-run1', 'a', '--log']);
    expect(log.stdout).toContain('answering a');
    expect(log.stdout).toContain('debug a');
    expect(repo.git('ls-tree', '-r', '--name-only', 'tune/desk')).not.toContain('stdout');
    expect(repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk')).toContain('batch01-nomem-run1/a/stdout');
    const report = repo.tune(['report', 'batch01-nomem-run1']);
    expect(report.stdout).toMatch(/\| c \| wrong \|/);
    // Nothing is due to run now.
    const again = repo.tune(['run']);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('no run is due');
  });

  it('makes a run VOID when a case is killed with exit 137, and next halves the concurrency', async () => {
    const repo = await setup([plain('a'), plain('b', { input: { simulate: 'oom' } })], [['concurrency', '12']]);
    expect(repo.tune(['run']).code).toBe(0);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Void,valueonly)', 'tune/desk')).toContain('killed (exit 137');
    const next = repo.tuneJson(['next']);
    expect(next.kind).toBe('void-rerun');
    expect(next.command).toBe('git tune config set concurrency 6 && git tune run');
    const cfg = repo.tune(['config', 'set', 'concurrency', '6']);
    expect(cfg.code).toBe(0);
    const second = repo.tune(['run']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('batch01-nomem-run2');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Concurrency,valueonly)', 'tune/desk').trim()).toBe('6');
  });

  it('makes a hanging case VOID after its timeout, and records garbage output as a case error', async () => {
    const repo = await setup([plain('hangs', { input: { simulate: 'hang' } }), plain('junk', { input: { simulate: 'garbage' } }), plain('shape', { input: { simulate: 'bad-shape' } })], [['runner.timeoutSec', '2']]);
    const r = repo.tune(['run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const byId = Object.fromEntries(out.results.map((x: { id: string }) => [x.id, x]));
    expect(byId.hangs).toMatchObject({ status: 'void', void: 'timeout after 2s' });
    expect(byId.junk).toMatchObject({ status: 'error', right: false });
    expect(byId.junk.error).toContain('not JSON');
    expect(byId.shape.error).toContain('does not match the runner contract');
    expect(byId.shape.error).toContain('answer');
    expect(out.void).toContain('hangs');
  });

  it('survives kill -9 mid-run: next says resume, and the resumed run records every case exactly once', async () => {
    const ids = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
    const repo = await setup(ids.map((id) => plain(id)), [['concurrency', '2']]);
    const invocations = repo.path('invocations.txt');
    const { child } = startTune(repo, ['run'], { TEST_SLEEP_MS: '400', TEST_INVOCATIONS: invocations });
    const casesDir = repo.path('.git/tune/desk/runs/batch01-nomem-run1/cases');
    const deadline = Date.now() + 20_000;
    while ((!existsSync(casesDir) || readdirSync(casesDir).filter((f) => f.endsWith('.json')).length < 2) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const doneBefore = readdirSync(casesDir).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(doneBefore.length).toBeGreaterThanOrEqual(2);
    expect(doneBefore.length).toBeLessThan(ids.length);
    repo.fsck();
    expect(repo.tuneJson(['next']).kind).toBe('resume');
    const resumed = repo.tune(['run'], { TEST_INVOCATIONS: invocations });
    expect(resumed.code, resumed.stderr).toBe(0);
    const results = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/results.json'), 'utf8'));
    expect(results.map((x: { id: string }) => x.id).sort()).toEqual(ids);
    const calls = readFileSync(invocations, 'utf8').trim().split('\n');
    for (const id of doneBefore) expect(calls.filter((c) => c === id)).toHaveLength(1); // finished cases never run again
    expect(repo.git('tag', '-l').trim()).toBe('tune/desk/batch01-nomem-run1');
    repo.fsck();
  });

  it('stops launching cases when the budget runs out, records the stop, and refuses to start until it is raised', async () => {
    const repo = await setup(['b1', 'b2', 'b3', 'b4'].map((id) => plain(id)), [['concurrency', '1'], ['budget.maxTokens', '250']]);
    const r = repo.tune(['run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('budget spent');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)', 'tune/desk').trim()).toBe('run-stop');
    const next = repo.tuneJson(['next']);
    expect(next.kind).toBe('resume');
    expect(next.command).toBe('git tune config set budget.maxTokens 500 && git tune run');
    expect(next.notes.join(' ')).toContain('token budget spent');
    const refused = repo.tune(['run']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('cannot start');
    expect(repo.tune(['config', 'set', 'budget.maxTokens', '5000']).code).toBe(0);
    const done = repo.tune(['run']);
    expect(done.code, done.stderr).toBe(0);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Tokens,valueonly)', 'tune/desk').trim()).toBe('480');
  });

  it('keeps a runner that escapes its memory copy from changing the repository or the recorded memory', async () => {
    const repo = await setup([plain('esc', { input: { simulate: 'escape' } })]);
    const r = repo.tune(['run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('restored');
    expect(readFileSync(repo.path('agents/prompt.md'), 'utf8')).toBe('Answer politely.\n');
    const writes = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/memory-writes.json'), 'utf8'));
    expect(writes.esc.map((w: { path: string }) => w.path)).toEqual(['note.md']);
    const results = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/results.json'), 'utf8'));
    expect(results[0].memoryWrites.refused.join(' ')).toMatch(/etc-link \(symlink: ignored\)/);
    expect(repo.git('status', '--porcelain').replace(/^\?\? cases.yaml\n/m, '')).toBe('');
    repo.fsck();
  });

  it('stops the whole run when the runner reports its sandbox is down', async () => {
    const repo = await setup([plain('s1', { input: { simulate: 'sandbox-down' } }), plain('s2'), plain('s3')], [['concurrency', '1']]);
    const r = repo.tune(['run']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('sandbox down: the sandbox VM is gone');
    expect(repo.git('tag', '-l').trim()).toBe('');
    const next = repo.tuneJson(['next']);
    expect(next.kind).toBe('resume');
    expect(next.message).toContain('sandbox');
  });

  it('refuses to start over uncommitted prose edits', async () => {
    const repo = await setup([plain('a')]);
    repo.write({ 'agents/prompt.md': 'Answer rudely.\n' });
    const r = repo.tune(['run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agents/prompt.md');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)', 'tune/desk').trim()).toBe('plan');
  });

  it('runs the openai-chat preset against an OpenAI-compatible endpoint', async () => {
    const seen: Array<{ auth: string | undefined; body: any }> = [];
    const server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body: JSON.parse(data) });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({
          model: 'loop-model',
          choices: [{ message: { role: 'assistant', content: 'We answer politely.' } }],
          usage: { prompt_tokens: 50, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 10 } },
        }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const repo = await setup([plain('p1')]);
      expect(repo.tune(['config', 'set', 'runner', JSON.stringify({ preset: 'openai-chat', options: { model: 'loop-model', system: ['agents/prompt.md'], pricing: { inputPerMTok: 1000, outputPerMTok: 2000 } } })]).code).toBe(0);
      const r = await tuneAsync(repo, ['run', '--json'], { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: 'sk-test-secret' });
      expect(r.code, r.stderr).toBe(0);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.auth).toBe('Bearer sk-test-secret');
      const [system, user] = seen[0]!.body.messages;
      expect(system.content).toContain('<file path="agents/prompt.md">\nAnswer politely.\n</file>');
      expect(user).toEqual({ role: 'user', content: 'p1' });
      const result = JSON.parse(r.stdout).results[0];
      expect(result).toMatchObject({ answer: 'We answer politely.', right: true, tokens: 57, llmCalls: 1 });
      expect(result.usage[0]).toMatchObject({ model: 'loop-model', inputTokens: 50, outputTokens: 7, cachedTokens: 10 });
      expect(result.costUsd).toBeCloseTo(0.064, 6);
      const grep = spawnSync('git', ['grep', '-q', 'sk-test-secret', 'tune/desk', 'refs/tune-logs/desk'], { cwd: repo.dir });
      expect(grep.status).toBe(1); // no match anywhere in the branch or the logs
    } finally {
      server.close();
    }
  });
});
