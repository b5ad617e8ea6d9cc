import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { brain, type Brain } from '../helpers/model-brain.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';
import { TempRepo } from '../helpers/repo.js';
import { stepCommits, yamlCases } from '../helpers/tuning.js';

/**
 * `git tune auto` with all three roles on presets and no program of the
 * user's: runner, judge and editor on `openai-chat` against the loopback
 * model (test/helpers/model-server.ts), whose brain follows the rules in
 * its prose. The prose lacks the rules for three cases: the judge grades
 * them wrong and proposes the missing rules, the editor adds them as
 * patches, the next run confirms them, and the tuning ends VERIFIED. What
 * it wrote is read with native git; the key is in no object.
 */
const KEY = 'sk-presets-e2e-0123456789abcdefghij';

const PROSE = {
  'agents/prompts/billing.md': '# Billing\n\nAnswer with the value only.\n\n- When asked about currency, answer: EUR\n',
  'agents/prompts/shipping.md': '# Shipping\n\nAnswer with the value only.\n',
  'agents/memory-policy.md': '# Memory policy\n\nSave nothing.\n',
};

const CASES = [
  { id: 'billing-currency', class: 'billing', topic: 'currency', input: 'Which currency do you bill in?', expected: 'EUR' },
  { id: 'billing-refund', class: 'billing', topic: 'refund window', input: 'How long is the refund window?', expected: '30 days' },
  { id: 'shipping-time', class: 'shipping', topic: 'delivery time', input: 'What is the usual delivery time?', expected: '3 days' },
  { id: 'shipping-cost', class: 'shipping', topic: 'shipping cost', input: 'What is the shipping cost for a parcel?', expected: 'free' },
].map((c) => ({ ...c, complexity: 'simple', rubric: [{ id: 'r1', text: 'gives the right value' }], checks: [{ type: 'equals', value: c.expected }] }));

let server: ModelServer;
const repos: TempRepo[] = [];
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
  for (const r of repos) r.cleanup();
});

/** A repository whose tuning has every role on `preset`. */
async function presetRepo(preset: 'openai-chat' | 'anthropic', env: Record<string, string>): Promise<TempRepo> {
  const repo = TempRepo.create({ ...PROSE, 'cases.yaml': yamlCases(CASES) });
  repos.push(repo);
  await tuneOk(repo, ['init', 'shop', '--prose', 'agents/prompts/**/*.md', '--memory-policy', 'agents/memory-policy.md', '--runner', 'node none.js', '--dataset', 'cases.yaml'], env);
  const options = { model: preset === 'anthropic' ? 'claude-loop' : 'gpt-loop', maxRetries: 1 };
  // The runner's system prompt is every prose file (its default): the rules the editor adds reach it.
  for (const role of ['runner', 'judge', 'editor']) await tuneOk(repo, ['config', 'set', role, JSON.stringify({ preset, options })], env);
  for (const [key, value] of [['minBatch', '4'], ['maxBatch', '4'], ['recheck', '0'], ['concurrency', '2'], ['maxRuns', '3']]) {
    await tuneOk(repo, ['config', 'set', key!, value!], env);
  }
  return repo;
}

/** Every object of the repository, as native git prints it, and every file under .git that is not an object. */
function everything(repo: TempRepo): string {
  const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: repo.dir, maxBuffer: 256 * 1024 * 1024 }).toString('latin1');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (full !== repo.path('.git', 'objects')) walk(full);
      } else files.push(readFileSync(full, 'latin1'));
    }
  };
  walk(repo.dir);
  return `${objects}\n${files.join('\n')}`;
}

describe.concurrent('git tune auto with the runner, judge and editor on presets', () => {
  it('openai-chat: to VERIFIED; the judge\'s proposals become prose edits that fix the cases, and the key is nowhere', async () => {
    const env = { OPENAI_BASE_URL: server.openaiBase, OPENAI_API_KEY: KEY };
    const repo = await presetRepo('openai-chat', env);
    const r = await tuneAsync(repo, ['auto'], env);
    expect(r.code, `${r.stderr.slice(-3000)}\n${r.stdout}`).toBe(0);
    expect(r.stdout).toMatch(/^shop: done: the final check is VERIFIED/m);
    expect(r.stderr).not.toContain('it tunes to the test');

    const steps = stepCommits(repo, 'tune/shop');
    const edits = steps.filter((s) => s.step === 'edit');
    expect(edits.length).toBeGreaterThanOrEqual(1);
    for (const edit of edits) {
      // An edit touches prose (besides its run's changes.md and the tuning's README, git-tune's own), nothing else.
      const files = repo.git('show', '--format=', '--name-only', edit.oid).trim().split('\n');
      expect(files).toContain(`.tune/shop/runs/${edit.run}/changes.md`);
      const prose = files.filter((f) => !f.startsWith('.tune/shop/'));
      expect(prose.length, files.join(', ')).toBeGreaterThan(0);
      expect(prose.filter((f) => !/^agents\/prompts\/[a-z]+\.md$/.test(f)), files.join(', ')).toEqual([]);
      const changes = repo.git('show', `${edit.oid}:.tune/shop/runs/${edit.run}/changes.md`);
      expect(changes).toMatch(/^Aims: [a-z-]+(, [a-z-]+)*$/m);
    }
    // Every wrong case was aimed at and is right at the end: the rules are in the prose, as the editor patched them in.
    const aimed = edits.flatMap((e) => e.aims.split(',').map((s) => s.trim())).sort();
    expect(aimed).toEqual(['billing-refund', 'shipping-cost', 'shipping-time']);
    expect(repo.git('show', 'tune/shop:agents/prompts/billing.md')).toContain('- When asked about refund window, answer: 30 days\n');
    expect(repo.git('show', 'tune/shop:agents/prompts/shipping.md')).toContain('- When asked about delivery time, answer: 3 days\n');
    expect(repo.git('show', 'tune/shop:agents/prompts/shipping.md')).toContain('- When asked about shipping cost, answer: free\n');
    expect(repo.git('show', 'tune/shop:agents/memory-policy.md')).toBe(PROSE['agents/memory-policy.md']);

    // The judge's marks are in the first run's findings and its judge.json, with evidence.
    const first = steps.find((s) => s.step === 'grade')!;
    const findings = repo.git('show', `tune/shop:.tune/shop/runs/${first.run}/findings.md`);
    expect(findings).toMatch(/^\| billing-refund \|.*\| 0 met, 0 partial, 1 missed \|/m);
    expect(findings).toMatch(/^\| billing-currency \|.*\| 1 met, 0 partial, 0 missed \|/m);
    const judge = JSON.parse(repo.git('show', `tune/shop:.tune/shop/runs/${first.run}/judge.json`));
    expect(judge['billing-refund']).toMatchObject({ right: false, rubric: { r1: 'missed' }, evidence: { r1: `says "I don't know."` } });
    expect(judge['billing-refund'].proposals).toEqual([expect.objectContaining({ file: 'agents/prompts/billing.md', change: '- When asked about refund window, answer: 30 days' })]);

    // All three roles went to the model, with the key in the header only.
    const roles = new Set(server.requests.map((q) => q.normalized?.output?.name ?? 'runner'));
    expect([...roles].sort()).toEqual(['edits', 'runner', 'verdict']);
    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(everything(repo)).not.toContain(KEY);
    repo.fsck();
    expect(repo.git('status', '--porcelain').trim()).toBe('');
  }, 240_000);

  describe('every role on the anthropic wire, an editor whose patch does not apply', () => {
    /** The loopback brain, with the editor's patches broken for the first `bad` edits requests (a context line the file does not hold). */
    const breaking = (bad: number): { brain: Brain; asked: () => number } => {
      let asked = 0;
      return {
        asked: () => asked,
        brain: (request) => {
          const reply = brain(request);
          if (request.output?.name !== 'edits' || reply.kind !== 'json') return reply;
          asked++;
          if (asked > bad) return reply;
          const json = reply.json as { edits: Array<{ file: string; patch: string }> };
          return { kind: 'json', json: { ...json, edits: json.edits.map((e) => ({ ...e, patch: '@@ -1,2 +1,3 @@\n # Nothing like this file\n+- When asked about anything, answer: no\n' })) } };
        },
      };
    };

    it('asked again once, the fixed patch applies and the tuning ends VERIFIED', async () => {
      const script = breaking(1);
      const own = await startModelServer({ brain: script.brain });
      try {
        const env = { ANTHROPIC_BASE_URL: own.anthropicBase, ANTHROPIC_API_KEY: KEY };
        const repo = await presetRepo('anthropic', env);
        const r = await tuneAsync(repo, ['auto'], env);
        expect(r.code, `${r.stderr.slice(-3000)}\n${r.stdout}`).toBe(0);
        expect(own.requests.every((q) => q.wire === 'anthropic' && q.headers['x-api-key'] === KEY)).toBe(true);
        expect(r.stdout).toMatch(/^shop: done: the final check is VERIFIED/m);
        expect(script.asked()).toBe(2);
        const editRequests = own.requests.filter((q) => q.normalized?.output?.name === 'edits');
        expect(editRequests.every((q) => q.wire === 'anthropic' && q.headers['x-api-key'] === KEY)).toBe(true);
        const again = editRequests[1]!.normalized!.messages.at(-1)!;
        expect(again).toMatchObject({ role: 'user', text: expect.stringContaining('the patch does not apply: hunk 1 of 1 does not match the file\'s text') });
        expect(own.requests.filter((q) => q.normalized?.output?.name === 'verdict').every((q) => q.wire === 'anthropic')).toBe(true);
        expect(everything(repo)).not.toContain(KEY);
      } finally {
        await own.close();
      }
    }, 240_000);

    it('still failing, the editor step fails with the reason and the prose is as committed', async () => {
      const own = await startModelServer({ brain: breaking(2).brain });
      try {
        const env = { ANTHROPIC_BASE_URL: own.anthropicBase, ANTHROPIC_API_KEY: KEY };
        const repo = await presetRepo('anthropic', env);
        const r = await tuneAsync(repo, ['auto'], env);
        expect(r.code).not.toBe(0);
        expect(`${r.stdout}${r.stderr}`).toMatch(/^shop: error: edit failed \(exit 2\): the editor failed on batch01-nomem-run1 \(exit 1\): .*editor preset: the editor's patches failed twice \(asked again once\): agents\/prompts\/[a-z]+\.md: the patch does not apply/);
        expect(`${r.stdout}${r.stderr}`).not.toContain(KEY);
        expect(repo.git('status', '--porcelain', '--', 'agents').trim()).toBe('');
        expect(stepCommits(repo, 'tune/shop').filter((s) => s.step === 'edit')).toEqual([]);
      } finally {
        await own.close();
      }
    }, 240_000);
  });
});
