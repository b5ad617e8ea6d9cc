import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { templateAsync } from '../helpers/tuning.js';

/**
 * Edits at the edges of a batch's halves, through the real CLI (docs/method.md#edits, docs/method.md#halves,
 * 3.5): an edit between batches (after the memory checkpoint, before the
 * next batch's first run), and a memory-policy edit in the with-memory half.
 *
 * The agent answers `<input> <agents/prompt.md>`. With memory, a case that
 * finds its fact in memory reads it (fewer tokens) and saves it again (saved
 * twice) unless agents/memory-policy.md says `never save a fact twice`.
 */
const AGENT = `import fs from 'node:fs';
import path from 'node:path';
const item = JSON.parse(fs.readFileSync(process.env.TUNE_CASE, 'utf8'));
const root = process.env.TUNE_ROOT;
const prose = fs.readFileSync(path.join(root, 'agents/prompt.md'), 'utf8').trim();
const policy = fs.readFileSync(path.join(root, 'agents/memory-policy.md'), 'utf8');
const fact = path.join(process.env.TUNE_MEMORY, 'facts', item.id + '.md');
const known = fs.existsSync(fact);
if (!known || !policy.includes('never save a fact twice')) {
  fs.mkdirSync(path.dirname(fact), { recursive: true });
  fs.writeFileSync(fact, 'fact about ' + item.id + '\\n');
}
fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify({
  answer: item.input + ' ' + prose,
  usage: [{ model: 'm', inputTokens: known ? 30 : 100, outputTokens: 20, costUsd: 0.01 }],
  llmCalls: known ? 1 : 2, memoryReads: known ? 1 : 0,
}));
`;
const CASES = ['desk-hello', 'desk-bye', 'desk-thanks', 'desk-sorry'].map((id) => ({
  id, class: 'desk', input: `Reply to ${id}`, checks: [{ type: 'contains', value: 'politely' }],
}));
const POLICY = 'agents/memory-policy.md';
const changesOf = (run: string) => `.tune/desk/runs/${run}/changes.md`;

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});



const tip = (repo: TempRepo) => repo.git('rev-parse', 'HEAD').trim();
const write = (repo: TempRepo, file: string, text: string) => writeFileSync(repo.path(file), text);

interface Status {
  edits: Array<{ commit: string; run: string; status: string; aims: string[] }>;
  next: { kind: string; command: string | null; run: string | null; notes: string[] };
}
const status = async (repo: TempRepo) => JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as Status;

/** Four cases, batches of two; batch 1's no-memory run passed and its candidate memory is built (once; a copy per test). */
async function candidateBuilt(): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await templateAsync('candidate built', buildCandidate));
  repos.push(repo);
  return repo;
}

async function buildCandidate(): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', [POLICY]: '- save what you look up\n', 'agent.mjs': AGENT });
  repo.write({ 'cases.yaml': CASES.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
  repo.git('add', 'cases.yaml');
  repo.git('commit', '-q', '-m', 'the cases');
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--memory-policy', POLICY, '--runner', 'node agent.mjs', '--dataset', 'cases.yaml']);
  await tuneOk(repo, ['config', 'set', 'minBatch', '2']);
  await tuneOk(repo, ['config', 'set', 'maxBatch', '2']);
  await tuneOk(repo, ['config', 'set', 'recheck', '0']);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  expect((await tuneOk(repo, ['grade'])).stdout).toContain('PASSED');
  await tuneOk(repo, ['memory', 'candidate']);
  return repo;
}

describe.concurrent('edits at the edges of a half', { timeout: 180_000 }, () => {
  it('a memory-policy edit after a with-memory run that fell short aims at its cases, and the run that passes confirms it', async () => {
    const repo = await candidateBuilt();
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const findings = readFileSync(repo.path('.tune/desk/runs/batch01-mem-run1/findings.md'), 'utf8');
    expect(findings).toMatch(/^## CORRECT$/m); // every answer right, but each fact saved twice
    await tuneOk(repo, ['grade']);
    expect((await status(repo)).next.kind).toBe('edit');

    write(repo, POLICY, '- save what you look up\n- never save a fact twice\n');
    write(repo, changesOf('batch01-mem-run1'), '- memory-policy.md: never save a fact twice\n');
    const plan = JSON.parse(readFileSync(repo.path('.tune/desk/batches/batch01.json'), 'utf8')) as { new: string[]; recheck: string[] };
    const cases = [...plan.new, ...plan.recheck];
    expect(cases).toHaveLength(2);
    const edit = await tuneOk(repo, ['edit']);
    expect(edit.stdout).toContain(`; aims ${cases.join(', ')}\n`);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Aims,valueonly)').trim()).toBe('');
    expect((await status(repo)).edits).toMatchObject([{ run: 'batch01-mem-run1', status: 'pending', aims: cases }]);

    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    expect(readFileSync(repo.path('.tune/desk/runs/batch01-mem-run2/findings.md'), 'utf8')).toMatch(/^## PASSED$/m);
    await tuneOk(repo, ['grade']);
    const s = await status(repo);
    expect(s.edits.map((e) => e.status)).toEqual(['confirmed']);
    expect(s.next.kind).toBe('checkpoint');
    expect((await tuneOk(repo, ['log'])).stdout).toContain('edit after batch01-mem-run1: confirmed by batch01-mem-run2');
  });

  it('between batches, git tune edit refuses (exit 3) and names the run to make first; a hand commit there is unconfirmed, never pending', async () => {
    const repo = await candidateBuilt();
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade', '--verdict', 'PASSED']);
    await tuneOk(repo, ['memory', 'checkpoint']);
    expect((await status(repo)).next.kind).toBe('batch');

    // A memory-policy edit, and a prose edit: both would answer to batch01-mem-run1, whose half is over.
    write(repo, POLICY, '- save what you look up\n- never save a fact twice\n');
    write(repo, changesOf('batch01-mem-run1'), '- memory-policy.md: never save a fact twice\n');
    const before = { tip: tip(repo), status: repo.git('status', '--porcelain') };
    const refused = await tuneAsync(repo, ['edit']);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(
      "error: batch01-mem-run1 is the latest graded run and batch 1's memory was checkpointed: no run of batch 1 will try an edit now, so it could never be confirmed. Edits respond to a graded run: run batch 2, grade its first run, then edit",
    );
    expect(refused.stderr).toContain('fix: git tune batch\n');
    expect({ tip: tip(repo), status: repo.git('status', '--porcelain') }).toEqual(before);

    repo.git('checkout', '--', POLICY);
    repo.git('clean', '-fdq', '.tune');
    write(repo, 'agents/prompt.md', 'Answer politely.\nBe brief.\n');
    const prose = await tuneAsync(repo, ['edit']);
    expect(prose.code, prose.stderr).toBe(3);
    expect(prose.stderr).toContain('no run of batch 1 will try an edit now');

    // A plain commit by hand is legal (docs/git-model.md): it counts as an edit, unconfirmed at once, and next moves on.
    repo.git('commit', '-q', '-m', 'be brief', '--', 'agents/prompt.md');
    const hand = tip(repo);
    let s = await status(repo);
    expect(s.edits.map((e) => [e.commit, e.status])).toEqual([[hand, 'unconfirmed']]);
    expect(s.next.kind).toBe('batch');
    expect(s.next.notes.join('\n')).toContain(`edit ${hand.slice(0, 7)} came after batch 1's memory was checkpointed`);

    await tuneOk(repo, ['batch']);
    const refusedAgain = await tuneAsync(repo, ['edit']);
    expect(refusedAgain.code).toBe(3);
    expect(refusedAgain.stderr).toContain('fix: git tune run\n');
    await tuneOk(repo, ['run']);
    s = await status(repo);
    expect(s.next).toMatchObject({ kind: 'grade', run: 'batch02-nomem-run1' });
    expect(s.edits.map((e) => e.status)).toEqual(['unconfirmed']);
  });
});
