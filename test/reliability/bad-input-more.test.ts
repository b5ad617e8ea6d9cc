import { spawnSync } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { CLI, tuneAsync, tuneOk } from '../helpers/cli.js';
import { revOrNull, TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Issue 9, the bad input catalogue beyond test/e2e/bad-input.test.ts: each
 * input gets a clear error (the file and where, exit 2) and no write, or,
 * where the input is a runner's doing, a clear per-case error in a run that
 * survives. And a dataset of 100,000 cases imports without blowing memory.
 */
const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});
const keep = (r: TempRepo) => (repos.push(r), r);
const BRANCH = 'refs/heads/tune/desk';

/** A runner for the cases below: what it does is chosen by the case input. */
const RUNNER = `import fs from 'node:fs';
import path from 'node:path';
const item = JSON.parse(fs.readFileSync(process.env.TUNE_CASE, 'utf8'));
const out = process.env.TUNE_OUTPUT;
const mem = process.env.TUNE_MEMORY;
const ok = (answer) => fs.writeFileSync(out, JSON.stringify({ answer, usage: [{ model: 'm', inputTokens: 10, outputTokens: 2 }] }));
switch (item.input) {
  case 'huge': // a 100 MB result file
    fs.writeFileSync(out, '{"answer": "');
    fs.truncateSync(out, 100 * 1024 * 1024);
    break;
  case 'binary': // not JSON, not even text
    fs.writeFileSync(out, Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x80]));
    break;
  case 'links': // links out of its memory copy, to /etc and beyond
    fs.symlinkSync('/etc', path.join(mem, 'etc'));
    fs.symlinkSync('/etc/passwd', path.join(mem, 'passwd'));
    fs.symlinkSync('../../../../../../../../etc/hostname', path.join(mem, 'hostname'));
    fs.mkdirSync(path.join(mem, 'notes'), { recursive: true });
    fs.symlinkSync('/etc/passwd', path.join(mem, 'notes', 'users.md'));
    fs.writeFileSync(path.join(mem, 'notes', 'fair.md'), 'a fair memory write\\n');
    ok('politely linked');
    break;
  default:
    fs.mkdirSync(path.join(mem, 'facts'), { recursive: true });
    fs.writeFileSync(path.join(mem, 'facts', item.id + '.md'), 'fact about ' + item.id + '\\n');
    ok('answered politely');
}
`;

async function repoWith(cases: Array<Record<string, unknown>>): Promise<TempRepo> {
  const repo = keep(TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'runner.mjs': RUNNER }));
  repo.write({ 'cases.yaml': cases.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node runner.mjs', '--dataset', 'cases.yaml']);
  await tuneOk(repo, ['config', 'set', 'minBatch', String(cases.length)]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  return repo;
}

/** Every object of the repository, every ref, the working tree and .git/tune, as one text to search. */
function everything(repo: TempRepo): string {
  const objects = spawnSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: repo.dir, maxBuffer: 1 << 30 }).stdout.toString('latin1');
  const refs = repo.git('for-each-ref');
  const files = spawnSync('grep', ['-r', '-a', '-h', '', '.', '--exclude-dir=.git'], { cwd: repo.dir, maxBuffer: 1 << 30 }).stdout.toString('latin1');
  const tune = existsSync(repo.path('.git/tune')) ? spawnSync('grep', ['-r', '-a', '-h', '', '.git/tune'], { cwd: repo.dir, maxBuffer: 1 << 30 }).stdout.toString('latin1') : '';
  return [objects, refs, files, tune].join('\n');
}

describe.concurrent('what a runner does wrong is a per-case error; the run survives', () => {
  it('a 100 MB result and a binary one: a clear error each, the other cases recorded, the run committed', async ({ expect }) => {
    const repo = await repoWith([plainCase('big', { input: 'huge' }), plainCase('bin', { input: 'binary' }), plainCase('fine', { input: 'fine' })]);
    const r = await tuneAsync(repo, ['run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const byId = Object.fromEntries(JSON.parse(r.stdout).results.map((x: { id: string }) => [x.id, x]));
    expect(byId.big).toMatchObject({ status: 'error', right: false, error: 'the result file is 100.0 MB; at most 16 MB is read' });
    expect(byId.bin).toMatchObject({ status: 'error', right: false });
    expect(byId.bin.error).toContain('not JSON');
    expect(byId.fine).toMatchObject({ status: 'ok', right: true });
    expect(repo.git('tag', '-l')).toBe('tune/desk/batch01-nomem-run1\n');
    // Nothing of the 100 MB was stored anywhere.
    const sizes = spawnSync('git', ['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], { cwd: repo.dir }).stdout.toString().trim().split('\n').map(Number);
    expect(Math.max(...sizes)).toBeLessThan(1024 * 1024);
    expect(repo.git('status', '--porcelain')).toBe('?? cases.yaml\n');
  });

  it('symlinks out of a memory copy (to /etc, /etc/passwd, ../..) are never followed, recorded or merged into the candidate', async ({ expect }) => {
    const repo = await repoWith([plainCase('links', { input: 'links' }), plainCase('plain', { input: 'plain' })]);
    const r = await tuneAsync(repo, ['run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const links = JSON.parse(r.stdout).results.find((x: { id: string }) => x.id === 'links');
    expect(links.memoryWrites.refused).toEqual([
      'etc (symlink: ignored)', 'hostname (symlink: ignored)', 'notes/users.md (symlink: ignored)', 'passwd (symlink: ignored)',
    ]);
    const writes = JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/memory-writes.json'), 'utf8'));
    expect(writes.links.map((w: { path: string }) => w.path)).toEqual(['notes/fair.md']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade', '--verdict', 'PASSED']);
    await tuneOk(repo, ['memory', 'candidate']);
    expect(repo.git('ls-tree', '-r', '--name-only', 'HEAD', '.tune/desk/memory/candidate').trim().split('\n')).toEqual([
      '.tune/desk/memory/candidate/facts/plain.md', '.tune/desk/memory/candidate/notes/fair.md',
    ]);
    expect(repo.git('ls-tree', '-r', 'HEAD')).not.toContain('120000'); // no symlink anywhere in the tree
    const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
    expect(everything(repo)).not.toContain(passwd);
  });
});

describe.concurrent('bad input from a person: exit 2, the file and where, nothing written', () => {
  let ran: Promise<TempRepo> | null = null;
  /** A repository whose run waits for its grade, with the draft findings written. */
  const drafted = async () => {
    ran ??= (async () => {
      const repo = await plannedRepo([plainCase('a'), plainCase('b')]);
      keep(repo);
      await tuneOk(repo, ['run']);
      await tuneOk(repo, ['grade', '--draft']);
      return repo;
    })();
    return keep(TempRepo.copyOf(await ran));
  };
  const FINDINGS = '.tune/desk/runs/batch01-nomem-run1/findings.md';

  it('findings with no verdict heading, and with two', async ({ expect }) => {
    const repo = await drafted();
    const draft = readFileSync(repo.path(FINDINGS), 'utf8');
    const tip = revOrNull(repo, BRANCH);
    const cases: Array<[string, RegExp]> = [
      [draft.replace(/^## PASSED$/m, '## Looks good to me'), /the first level-2 heading must be the verdict, one of PROGRESS, .* \(found "## Looks good to me"\)/],
      [draft.replace(/^## PASSED$/m, 'PASSED, I think'), /the first level-2 heading must be the verdict/],
      [draft.replace(/^## PASSED$/m, '## PASSED\n\n## REGRESSION'), /the findings hold 2 verdict headings \(PASSED, REGRESSION\): keep one/],
    ];
    for (const [text, problem] of cases) {
      writeFileSync(repo.path(FINDINGS), text);
      const r = await tuneAsync(repo, ['grade']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`error: ${FINDINGS} cannot be recorded`);
      expect(r.stderr).toMatch(problem);
      expect(r.stderr).toContain(`fix: fix ${FINDINGS}, then: git tune grade`);
      expect(revOrNull(repo, BRANCH)).toBe(tip);
      expect(readFileSync(repo.path(FINDINGS), 'utf8')).toBe(text);
    }
  });

  it('a run tag that already exists: refused before any case runs', async ({ expect }) => {
    const repo = keep(await plannedRepo([plainCase('a')]));
    repo.git('tag', 'tune/desk/batch01-nomem-run1', 'main');
    const tip = revOrNull(repo, BRANCH);
    const invocations = repo.path('invocations.txt');
    const r = await tuneAsync(repo, ['run'], { TEST_INVOCATIONS: invocations });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('error: tag tune/desk/batch01-nomem-run1 already exists');
    expect(r.stderr).toContain('fix: git tag -d tune/desk/batch01-nomem-run1');
    expect(revOrNull(repo, BRANCH)).toBe(tip);
    expect(existsSync(invocations)).toBe(false);
    repo.git('tag', '-d', 'tune/desk/batch01-nomem-run1');
    await tuneOk(repo, ['run']);
  });

  it('a setting that does not exist, nested: the closest one named, nothing written', async ({ expect }) => {
    const repo = keep(await plannedRepo([plainCase('a')]));
    const tip = revOrNull(repo, BRANCH);
    const r = await tuneAsync(repo, ['config', 'set', 'runner.comand', '["node","x.js"]', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/runner\.comand.*runner\.command/);
    expect(revOrNull(repo, BRANCH)).toBe(tip);
  });
});

describe('forged trailers', () => {
  it('a hand commit typing Tune-Step: grade / Tune-Verdict: PASSED fakes nothing: the run still waits for its grade, status warns', async ({ expect }) => {
    const repo = keep(await plannedRepo([plainCase('a'), plainCase('b', { checks: [{ type: 'equals', value: 'nope' }] })]));
    await tuneOk(repo, ['run']);
    const forged = ['Tune-Tuning: desk', 'Tune-Step: grade', 'Tune-Run: batch01-nomem-run1', 'Tune-Verdict: PASSED', 'Tune-Wrong: (none)', 'Tune-Review: yes'];
    repo.git('commit', '-q', '--allow-empty', '-m', 'grade it myself', '-m', forged.join('\n'));
    // A real seal copied from a step and pasted under edited trailers does not match them either.
    const seal = /Tune-Seal: .*/.exec(repo.git('log', '-1', '--format=%(trailers)', 'HEAD~1'))![0];
    repo.git('commit', '-q', '--allow-empty', '-m', 'grade it again', '-m', [...forged, seal].join('\n'));
    // And an init typed by hand does not cut the history short.
    repo.git('commit', '-q', '--allow-empty', '-m', 'start over', '-m', 'Tune-Tuning: desk\nTune-Step: init');
    expect(repo.git('log', '-3', '--format=%(trailers:key=Tune-Verdict,valueonly)').trim()).toBe('PASSED\n\nPASSED');

    const next = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout);
    expect(next).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run1' });
    expect(next.notes.join(' ')).toContain('did not fit: git tune status');
    const status = JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout);
    expect(status.batches[0].runs[0]).toMatchObject({ run: 'batch01-nomem-run1', finished: true, verdict: null });
    expect(status.warnings).toEqual([
      expect.stringMatching(/^commit [0-9a-f]{7} carries Tune-Step: grade without the Tune-Seal git-tune writes: its trailers are ignored, it counts as a hand commit$/),
      expect.stringMatching(/^commit [0-9a-f]{7} carries Tune-Step: grade whose trailers do not match their Tune-Seal \(edited after git-tune wrote them\)/),
      expect.stringMatching(/^commit [0-9a-f]{7} carries Tune-Step: init without the Tune-Seal/),
    ]);
    const text = (await tuneOk(repo, ['status'])).stdout;
    expect(text).toContain('warning: commit ');
    // The real grade goes through, and is the one that counts.
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('edit');
  });
});

describe('a dataset of 100,000 cases', () => {
  it('imports and reads back without blowing memory', async ({ expect }) => {
    const repo = keep(TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' }));
    const fd = openSync(repo.path('cases.jsonl'), 'w');
    for (let i = 0; i < 100_000; i++) {
      const id = `case-${String(i).padStart(6, '0')}`;
      writeSync(fd, `${JSON.stringify({
        id, class: `class-${i % 7}`, input: `question ${i}: may I get a refund after ${i % 90} days?`,
        checks: [{ type: 'contains', value: 'refund' }],
        ...(i % 3 === 0 ? { rubric: [{ id: 'r1', text: 'names the 30-day window' }], complexity: 'complex' } : {}),
      })}\n`);
    }
    closeSync(fd);
    await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']);
    // Peak memory of the import, as the kernel counts it (GNU time), where the machine has it.
    const timed = existsSync('/usr/bin/time');
    const args = timed ? ['-f', 'peak-rss-kb %M', process.execPath, CLI, 'dataset', 'import', 'cases.jsonl'] : [CLI, 'dataset', 'import', 'cases.jsonl'];
    const started = Date.now();
    const r = spawnSync(timed ? '/usr/bin/time' : process.execPath, args, { cwd: repo.dir, env: { ...process.env, ...repo.env }, encoding: 'utf8' });
    const seconds = (Date.now() - started) / 1000;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('imported 100000 cases in 7 classes');
    const rss = timed ? Number(/peak-rss-kb (\d+)/.exec(r.stderr)![1]) : null;
    console.log(`100,000-case import: ${seconds.toFixed(1)} s, peak RSS ${rss === null ? 'not measured' : `${Math.round(rss / 1024)} MB`}`);
    if (rss !== null) expect(rss).toBeLessThan(1024 * 1024); // under 1 GiB
    expect(readFileSync(repo.path('.tune/desk/dataset.jsonl'), 'utf8').split('\n')).toHaveLength(100_001);
    const next = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout);
    expect(next.kind).toBe('select');
  }, 240_000);
});
