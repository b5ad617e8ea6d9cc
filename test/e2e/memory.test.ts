import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { passGrade } from '../helpers/tuning.js';

/**
 * `git tune memory candidate` / `checkpoint` (docs/method.md#halves, docs/method.md#memory): the candidate
 * is the last good memory plus what the passing no-memory run's cases wrote;
 * with-memory runs give each case its own copy of it; the checkpoint makes it
 * the last good memory, whole. Checked with the real CLI and native git.
 */
const FIXTURE_RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

/**
 * An agent whose case input says what it writes to memory ({write: {path:
 * content}}); unless {quiet: true} it also leaves `visits/<run>-<case>.md`; it
 * answers with the files its memory copy held when it started.
 */
const AGENT = `import fs from 'node:fs';
import path from 'node:path';
const item = JSON.parse(fs.readFileSync(process.env.TUNE_CASE, 'utf8'));
const mem = process.env.TUNE_MEMORY;
const list = (dir, pre = '') => fs.existsSync(dir)
  ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? list(path.join(dir, e.name), pre + e.name + '/') : [pre + e.name]).sort()
  : [];
const seen = list(mem);
const put = (p, content) => { fs.mkdirSync(path.dirname(path.join(mem, p)), { recursive: true }); fs.writeFileSync(path.join(mem, p), content); };
for (const [p, content] of Object.entries(item.input.write ?? {})) put(p, content);
if (!item.input.quiet) put('visits/' + process.env.TUNE_RUN + '-' + item.id + '.md', 'visited\\n');
fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify({ answer: 'politely; saw ' + seen.join(','), usage: [{ model: 'm', inputTokens: 10, outputTokens: 5 }], llmCalls: 1 }));
`;

/** A memory.merge command: upper-cases every added file, ignores the base; fails on --fail. */
const MERGE = `import fs from 'node:fs';
import path from 'node:path';
if (process.argv.includes('--fail')) { console.error('merge: cannot read the writes (boom)'); process.exit(1); }
if (!fs.existsSync(path.join(process.cwd(), '.git'))) process.exit(9);
const writes = JSON.parse(fs.readFileSync(process.env.TUNE_MEMORY_WRITES, 'utf8'));
const out = process.env.TUNE_OUTPUT;
for (const [caseId, list] of Object.entries(writes)) {
  for (const w of list) {
    if (w.op === 'deleted') continue;
    fs.mkdirSync(path.dirname(path.join(out, w.path)), { recursive: true });
    fs.writeFileSync(path.join(out, w.path), w.content.toUpperCase());
  }
}
const base = fs.readdirSync(process.env.TUNE_MEMORY_BASE, { recursive: true }).filter((f) => f.endsWith('.md')).sort();
fs.writeFileSync(path.join(out, 'merged-by.txt'), 'run ' + process.env.TUNE_RUN + ', base ' + base.join(',') + '\\n');
`;

interface Spec {
  id: string;
  write?: Record<string, string>;
  quiet?: boolean;
}

function setup(runner: 'fixture' | 'agent', cases: Spec[], config: Array<[string, string]> = []): TempRepo {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'tools/agent.mjs': AGENT, 'tools/merge.mjs': MERGE });
  repos.push(repo);
  const lines = cases.map((c) => ({ id: c.id, class: 'c', input: runner === 'agent' ? { write: c.write ?? {}, quiet: c.quiet ?? false } : c.id, checks: [{ type: 'contains', value: 'politely' }] }));
  repo.write({ 'cases.yaml': lines.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
  const command = runner === 'agent' ? 'node tools/agent.mjs' : `node ${FIXTURE_RUNNER}`;
  ok(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', command, '--dataset', 'cases.yaml']);
  for (const [k, v] of [['minBatch', String(cases.length)], ['maxBatch', String(Math.max(10, cases.length))], ['concurrency', '1'], ...config] as Array<[string, string]>) {
    ok(repo, ['config', 'set', k, v]);
  }
  ok(repo, ['select']);
  ok(repo, ['batch']);
  return repo;
}

function ok(repo: TempRepo, args: string[]) {
  const r = repo.tune(args);
  expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
}

/** Files of a memory tree at the branch tip, relative to it, with their content. */
function treeAt(repo: TempRepo, which: 'candidate' | 'last-good'): Record<string, string> {
  const dir = `.tune/desk/memory/${which}`;
  const names = repo.git('ls-tree', '-r', '--name-only', 'tune/desk', '--', `${dir}/`).split('\n').filter(Boolean);
  return Object.fromEntries(names.map((n) => [n.slice(dir.length + 1), repo.git('show', `tune/desk:${n}`)]));
}

/** The step trailers of the tip, without its seal (a checksum the seal tests cover). */
const trailers = (repo: TempRepo) => repo.git('log', '-1', '--format=%(trailers:only)', 'tune/desk').replace(/^Tune-Seal: .*\n/m, '');
const tip = (repo: TempRepo) => repo.git('rev-parse', 'tune/desk').trim();
const clean = (repo: TempRepo) => repo.git('status', '--porcelain').replace(/^\?\? cases.yaml\n/m, '');
const results = (repo: TempRepo, run: string) => JSON.parse(readFileSync(repo.path(`.tune/desk/runs/${run}/results.json`), 'utf8')) as Array<Record<string, any>>;
const runOrder = (repo: TempRepo): string[] => {
  const plan = JSON.parse(readFileSync(repo.path('.tune/desk/batches/batch01.json'), 'utf8'));
  return [...plan.new, ...plan.recheck];
};

describe('git tune memory', () => {
  it('builds the candidate from exactly what the passing run wrote, only when next says so, and with-memory runs start from it', () => {
    const repo = setup('fixture', [{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    const early = repo.tune(['memory', 'candidate']);
    expect(early.code).toBe(3);
    expect(early.stderr).toContain('no candidate memory is due: run batch 1 without memory');
    expect(early.stderr).toContain('fix: git tune run');
    ok(repo, ['run']);
    const ungraded = repo.tune(['memory', 'candidate', '--json']);
    expect(ungraded.code).toBe(3);
    expect(JSON.parse(ungraded.stdout).error).toMatchObject({ code: 'candidate-not-due', hint: 'git tune grade' });
    passGrade(repo, 'batch01-nomem-run1');
    expect(repo.tuneJson(['next'])).toMatchObject({ kind: 'candidate', command: 'git tune memory candidate' });
    const notCheckpoint = repo.tune(['memory', 'checkpoint']);
    expect(notCheckpoint.code).toBe(3);
    expect(notCheckpoint.stderr).toContain('no checkpoint is due: build the candidate memory');

    const before = tip(repo);
    const r = ok(repo, ['memory', 'candidate']);
    expect(r.stdout).toContain('candidate memory from batch01-nomem-run1: .tune/desk/memory/candidate/ holds 3 files, 39 bytes (3 added, 0 changed, 0 deleted, 0 unchanged)');
    expect(r.stdout).toContain('  + facts/a.md (13 bytes)');
    expect(r.stderr).toContain('next: run batch 1 with the candidate memory');
    expect(repo.git('rev-parse', 'tune/desk~1').trim()).toBe(before); // one commit
    expect(trailers(repo)).toBe('Tune-Tuning: desk\nTune-Step: candidate\nTune-Run: batch01-nomem-run1\n\n');
    expect(treeAt(repo, 'candidate')).toEqual({ 'facts/a.md': 'fact about a\n', 'facts/b.md': 'fact about b\n', 'facts/c.md': 'fact about c\n' });
    expect(treeAt(repo, 'last-good')).toEqual({});
    expect(repo.git('log', '-1', '--format=%B', 'tune/desk')).toContain(`in run order: ${runOrder(repo).join(', ')}.`);
    expect(repo.tuneJson(['next'])).toMatchObject({ kind: 'mem-run', run: 'batch01-mem-run1' });
    expect(repo.tune(['memory', 'candidate']).code).toBe(3); // once per passing run
    expect(clean(repo)).toBe('');
    repo.fsck();

    // Each case gets its own copy: rewriting the fact it already holds is "saved twice".
    ok(repo, ['run']);
    for (const res of results(repo, 'batch01-mem-run1')) {
      expect(res.memoryWrites).toEqual({ added: 0, changed: 1, deleted: 0, savedTwice: 1, refused: [] });
    }
    const writes = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-mem-run1/memory-writes.json'), 'utf8'));
    expect(Object.fromEntries(Object.entries(writes).map(([id, w]) => [id, (w as Array<{ path: string }>).map((x) => x.path)])))
      .toEqual({ a: ['facts/a.md'], b: ['facts/b.md'], c: ['facts/c.md'] });
    repo.fsck();
  }, 120_000);

  it('still makes a candidate commit when no case wrote anything: the candidate is the last good memory', () => {
    const repo = setup('agent', [{ id: 'q1', quiet: true }, { id: 'q2', quiet: true }]);
    ok(repo, ['run']);
    expect(repo.git('ls-tree', '-r', '--name-only', 'tune/desk')).not.toContain('memory-writes.json');
    passGrade(repo, 'batch01-nomem-run1');
    const r = ok(repo, ['memory', 'candidate']);
    expect(r.stdout).toContain('holds 0 files, 0 bytes (0 added, 0 changed, 0 deleted, 0 unchanged)');
    expect(trailers(repo)).toContain('Tune-Step: candidate\nTune-Run: batch01-nomem-run1');
    expect(treeAt(repo, 'candidate')).toEqual(treeAt(repo, 'last-good'));
    expect(repo.git('log', '-1', '--format=%b', 'tune/desk')).toContain('in run order: none wrote anything.');
    expect(repo.tuneJson(['next']).kind).toBe('mem-run');
    repo.fsck();
  }, 120_000);

  it('keeps and reports a conflict, gives each with-memory case a private copy, and checkpoints the candidate whole', () => {
    const repo = setup('agent', [
      { id: 'a', write: { 'shared.md': 'from a\n', 'facts/a.md': 'a\n' } },
      { id: 'b', write: { 'shared.md': 'from b\n' } },
      { id: 'c', write: { 'facts/a.md': 'a\n' } }, // agrees with a: no conflict
    ]);
    ok(repo, ['run']);
    passGrade(repo, 'batch01-nomem-run1');
    const order = runOrder(repo);
    const [first, second] = order.filter((id) => id !== 'c') as [string, string];
    const out = repo.tuneJson(['memory', 'candidate']);
    expect(out.conflicts).toEqual([{
      kind: 'different-content', path: 'shared.md', kept: first, other: second, movedTo: `shared.md.conflict-${second}`,
      message: `shared.md: ${first} and ${second} wrote different content; ${first}'s is kept, ${second}'s is at shared.md.conflict-${second}`,
    }]);
    expect(out).toMatchObject({ step: 'candidate', run: 'batch01-nomem-run1', batch: 1, merge: 'files', files: 6, deleted: [] });
    expect(out.next.kind).toBe('mem-run');
    const candidate = {
      'facts/a.md': 'a\n',
      'shared.md': `from ${first}\n`,
      [`shared.md.conflict-${second}`]: `from ${second}\n`,
      'visits/batch01-nomem-run1-a.md': 'visited\n',
      'visits/batch01-nomem-run1-b.md': 'visited\n',
      'visits/batch01-nomem-run1-c.md': 'visited\n',
    };
    expect(treeAt(repo, 'candidate')).toEqual(candidate);
    const body = repo.git('log', '-1', '--format=%b', 'tune/desk');
    expect(body).toContain(`Conflicts (1), each kept:\n- shared.md: ${first} and ${second} wrote different content`);

    // A stray file put in the last good memory by hand: the checkpoint must remove it.
    repo.write({ '.tune/desk/memory/last-good/stray.md': 'not from any candidate\n' });
    repo.git('add', '.tune/desk/memory/last-good/stray.md');
    repo.git('commit', '-q', '-m', 'a stray memory file');

    ok(repo, ['run']);
    const seen = Object.keys(candidate).sort().join(',');
    for (const res of results(repo, 'batch01-mem-run1')) {
      // Every case saw the candidate and nothing another with-memory case wrote.
      expect(res.answer).toBe(`politely; saw ${seen}`);
    }
    passGrade(repo, 'batch01-mem-run1');
    expect(repo.tuneJson(['next']).kind).toBe('checkpoint');
    const cp = ok(repo, ['memory', 'checkpoint']);
    expect(cp.stdout).toContain("checkpoint: batch 1's candidate is the last good memory: .tune/desk/memory/last-good/ holds 6 files");
    expect(cp.stdout).toContain('(6 added, 0 changed, 1 deleted, 0 unchanged)');
    expect(cp.stdout).toContain('  - stray.md (23 bytes)');
    expect(trailers(repo)).toBe('Tune-Tuning: desk\nTune-Step: checkpoint\nTune-Batch: 1\n\n');
    expect(treeAt(repo, 'last-good')).toEqual(candidate);
    expect(repo.git('rev-parse', 'tune/desk:.tune/desk/memory/last-good').trim()).toBe(repo.git('rev-parse', 'tune/desk:.tune/desk/memory/candidate').trim());
    expect(repo.tune(['memory', 'checkpoint']).code).toBe(3);
    expect(repo.tuneJson(['next']).kind).toBe('final');
    expect(clean(repo)).toBe('');
    repo.fsck();
  }, 120_000);

  it('runs memory.merge instead of the file merge; a failing merge writes nothing; the candidate is replaced whole', () => {
    const repo = setup('agent', [{ id: 'a', write: { 'facts/a.md': 'about a\n' } }, { id: 'b' }, { id: 'c' }, { id: 'd' }], [['minBatch', '2'], ['maxBatch', '2'], ['recheck', '0']]);
    // Batch 1 with the file merge, to have a last good memory.
    ok(repo, ['run']);
    passGrade(repo, 'batch01-nomem-run1');
    ok(repo, ['memory', 'candidate']);
    ok(repo, ['run']);
    passGrade(repo, 'batch01-mem-run1');
    ok(repo, ['memory', 'checkpoint']);
    const lastGood = treeAt(repo, 'last-good');
    expect(Object.keys(lastGood).length).toBeGreaterThan(0);
    ok(repo, ['batch']);
    ok(repo, ['run']);
    passGrade(repo, 'batch02-nomem-run1');

    ok(repo, ['config', 'set', 'memory.merge', 'node tools/merge.mjs --fail']);
    const before = tip(repo);
    const failed = repo.tune(['memory', 'candidate']);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('error: the memory.merge command (node tools/merge.mjs --fail) exited 1: nothing was written');
    expect(failed.stderr).toContain('stderr: merge: cannot read the writes (boom)');
    expect(failed.stderr).toContain('fix: fix the command, or: git tune config set memory.merge null');
    expect(tip(repo)).toBe(before);
    expect(clean(repo)).toBe('');

    ok(repo, ['config', 'set', 'memory.merge', 'node tools/merge.mjs']);
    const out = repo.tuneJson(['memory', 'candidate']);
    expect(out.merge).toBe('command');
    const batch2 = JSON.parse(readFileSync(repo.path('.tune/desk/batches/batch02.json'), 'utf8')).new as string[];
    const expected: Record<string, string> = {
      'merged-by.txt': `run batch02-nomem-run1, base ${Object.keys(lastGood).sort().join(',')}\n`,
    };
    for (const id of batch2) expected[`visits/batch02-nomem-run1-${id}.md`] = 'VISITED\n';
    expect(treeAt(repo, 'candidate')).toEqual(expected);
    // The old candidate (batch 1's) is gone whole: the merge left out the base.
    expect(out.deleted.map((d: { path: string }) => d.path)).toEqual(Object.keys(lastGood).sort());
    expect(repo.git('log', '-1', '--format=%b', 'tune/desk')).toContain('Merged by the memory.merge command (node tools/merge.mjs)');
    expect(clean(repo)).toBe('');
    repo.fsck();
  }, 180_000);
});
