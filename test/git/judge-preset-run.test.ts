import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeRun } from '../../src/app/judge.js';
import type { Case } from '../../src/contracts/dataset.js';
import type { CaseResult } from '../../src/contracts/result.js';
import { ROOT } from '../helpers/cli.js';
import { brain } from '../helpers/model-brain.js';
import { startModelServer, type ModelServer } from '../helpers/model-server.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The judge preset's program (the built dist/bin/judge-api.js) under
 * git-tune's judge run, against the loopback model: a good verdict is kept,
 * a model whose verdict never validates makes the case VOID for the judge
 * after git-tune's retries (the program's reason in the error), and the key
 * the program was given is in nothing the run keeps.
 */
const KEY = 'sk-judge-run-0123456789abcdefghijkl';
const PROGRAM = path.join(ROOT, 'dist/bin/judge-api.js');
let server: ModelServer;
const repos: TempRepo[] = [];

beforeAll(async () => {
  // The model answers a verdict with a `right` that is not a boolean for the case about "cursed".
  server = await startModelServer({
    brain: (request) => {
      const reply = brain(request);
      const text = request.messages.map((m) => m.text).join('\n');
      return request.output?.name === 'verdict' && text.includes('cursed') && reply.kind === 'json'
        ? { kind: 'json', json: { ...(reply.json as object), right: 'maybe' } }
        : reply;
    },
  });
});
afterAll(async () => {
  await server.close();
  repos.forEach((r) => r.cleanup());
});

const item = (id: string, input: string, expected: string): Case =>
  ({ id, class: 'billing', complexity: 'simple', input, expected, topic: input, rubric: [{ id: 'r1', text: 'right value' }] } as unknown as Case);
const result = (id: string, answer: string) => ({ id, status: 'ok', answer, right: null, usage: [] } as unknown as CaseResult);

describe('the judge preset under git-tune\'s judge run', () => {
  it('keeps a good verdict; a verdict that never validates makes its case VOID for the judge, with the reason', async () => {
    const repo = TempRepo.create({ 'agents/billing.md': '# Billing\n' });
    repos.push(repo);
    const waits: number[] = [];
    const cases = [item('refund', 'refund window', '30 days'), item('cursed', 'cursed question', 'x')];
    const out = await judgeRun(repo.dir, {
      command: [process.execPath, PROGRAM], shell: false, timeoutSec: 30,
      env: {
        TUNE_PRESET: 'openai-chat',
        TUNE_PRESET_OPTIONS: JSON.stringify({ model: 'gpt-loop', maxRetries: 0 }),
        TUNE_PROSE_GLOBS: JSON.stringify({ prose: ['agents/**/*.md'], memoryPolicy: [] }),
      },
    } as never, cases, [result('refund', "I don't know."), result('cursed', 'y')], new Map(), {
      env: { ...process.env, ...repo.env, OPENAI_BASE_URL: server.openaiBase, OPENAI_API_KEY: KEY },
      concurrency: 2, run: 'batch01-nomem-run1', scope: { prose: [], memoryPolicy: [] },
      sleep: async (ms) => { waits.push(ms); },
    });
    expect(out.refund).toMatchObject({ right: false, rubric: { r1: 'missed' }, proposals: [{ file: 'agents/billing.md', change: '- When asked about refund window, answer: 30 days' }] });
    // Asked again once by the program, then retried by git-tune with backoff: 4 tries, each of 2 calls.
    expect(out.cursed).toEqual({
      error: "the judge failed (exit 1): judge preset: the model's verdict did not validate twice (asked again once): right: must be true or false (4 tries)",
      tries: 4,
    });
    expect(waits).toEqual([1000, 2000, 4000]);
    const cursedCalls = server.requests.filter((q) => q.normalized?.messages.some((m) => m.text.includes('cursed')));
    expect(cursedCalls).toHaveLength(8);
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(repo.git('status', '--porcelain').trim()).toBe('');
  }, 60_000);
});
