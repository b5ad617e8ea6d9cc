import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { templateAsync } from '../helpers/tuning.js';

/**
 * `git tune grade` (docs/method.md#grading) through the real CLI: the draft, the findings a
 * person finishes, and every rule that refuses a PASSED, each naming itself
 * and the command that fixes it, and writing nothing.
 *
 * The fixture runner answers `<input> <prose>`, so a case checked for
 * "politely" is right with the shipped prose and one checked for "30 days"
 * is wrong until an edit adds it.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const RUN1 = 'batch01-nomem-run1';
const FINDINGS = (run: string) => `.tune/desk/runs/${run}/findings.md`;

type Check = { type: string; value: string };
const politely: Check[] = [{ type: 'contains', value: 'politely' }];
const days: Check[] = [{ type: 'contains', value: '30 days' }];

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});


/** A tuning of `cases` (one batch holds them all) whose first run has finished (built once per cases and config, a copy per test). */
async function ranOnce(cases: Record<string, Check[]>, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await templateAsync(`ran once ${JSON.stringify([cases, config])}`, () => buildRanOnce(cases, config)));
  repos.push(repo);
  return repo;
}

async function buildRanOnce(cases: Record<string, Check[]>, config: Array<[string, string]>): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
  const ids = Object.keys(cases);
  repo.write({ 'cases.yaml': ids.map((id) => `- ${JSON.stringify({ id, class: 'desk', input: id, checks: cases[id] })}`).join('\n') + '\n' });
  repo.git('add', 'cases.yaml');
  repo.git('commit', '-q', '-m', 'the cases');
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
  for (const [key, value] of [['minBatch', String(ids.length)], ...config]) await tuneOk(repo, ['config', 'set', key!, value!]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run']);
  return repo;
}

const read = (repo: TempRepo, file: string) => readFileSync(repo.path(file), 'utf8');
const write = (repo: TempRepo, file: string, text: string) => writeFileSync(repo.path(file), text);
const tip = (repo: TempRepo) => repo.git('rev-parse', 'HEAD').trim();
const trailer = (repo: TempRepo, key: string, rev = 'HEAD') => repo.git('log', '-1', `--format=%(trailers:key=${key},valueonly)`, rev).trim();
const verdictOf = (repo: TempRepo, run: string) =>
  repo.git('show', `HEAD:${FINDINGS(run)}`).split('\n').find((l) => /^## /.test(l));
async function runVerdict(repo: TempRepo, run: string): Promise<string | undefined> {
  const status = JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as { batches: Array<{ runs: Array<{ run: string; verdict: string | null }> }> };
  return status.batches.flatMap((b) => b.runs).find((r) => r.run === run)?.verdict ?? undefined;
}

/** Draft, let `finish` change the text, and leave it in the working tree. */
async function draft(repo: TempRepo, run: string, finish: (text: string) => string = (t) => t): Promise<string> {
  await tuneOk(repo, ['grade', '--draft']);
  const text = finish(read(repo, FINDINGS(run)));
  write(repo, FINDINGS(run), text);
  return text;
}

/** An edit of the prose with its changes.md, recorded by `git tune edit`; returns the edit commit. */
async function edit(repo: TempRepo, run: string, line: string, aims?: string): Promise<string> {
  write(repo, 'agents/prompt.md', `${read(repo, 'agents/prompt.md')}${line}\n`);
  const file = `.tune/desk/runs/${run}/changes.md`;
  let before = '';
  try {
    before = read(repo, file);
  } catch {
    // the first edit after this run
  }
  write(repo, file, `${before}- prompt.md: ${line}\n${aims ? `\nAims: ${aims}\n` : ''}`);
  await tuneOk(repo, ['edit']);
  return tip(repo);
}

/** A refused command: its exit code, nothing written (branch tip as before). */
async function refused(repo: TempRepo, args: string[], code: number): Promise<string> {
  const before = tip(repo);
  const r = await tuneAsync(repo, args);
  expect(r.code, r.stderr).toBe(code);
  expect(tip(repo)).toBe(before);
  return r.stderr;
}

// Each test runs ten to twenty CLI commands; side by side on two busy cores that can take a while.
describe.concurrent('git tune grade: the rules a PASSED must meet', { timeout: 180_000 }, () => {
  it('(a) refuses a PASSED without `## Cost review` (no memory) or `## Memory review` (with memory), naming the rule and the fix', async () => {
    const repo = await ranOnce({ a: politely, b: politely });
    await draft(repo, RUN1, (t) => {
      expect(t.startsWith('## PASSED\n')).toBe(true);
      return t.replace('## Cost review', '### Notes on cost');
    });
    const err = await refused(repo, ['grade'], 3);
    expect(err).toContain(`error: PASSED is refused for ${RUN1}`);
    expect(err).toContain('- rule review: PASSED needs a `## Cost review` section in the findings');
    expect(err).toContain(`fix: git tune grade --draft --run ${RUN1}`);

    write(repo, FINDINGS(RUN1), read(repo, FINDINGS(RUN1)).replace('### Notes on cost', '## Cost review'));
    await tuneOk(repo, ['grade']);
    expect(trailer(repo, 'Tune-Verdict')).toBe('PASSED');
    expect(trailer(repo, 'Tune-Review')).toBe('yes');

    await tuneOk(repo, ['memory', 'candidate']);
    await tuneOk(repo, ['run']);
    await draft(repo, 'batch01-mem-run1', (t) => {
      expect(t).toContain('## Memory review');
      return t.replace('## Memory review', '### Memory');
    });
    const mem = await refused(repo, ['grade', '--verdict', 'PASSED'], 3);
    expect(mem).toContain('- rule review: PASSED needs a `## Memory review` section in the findings');
    expect(mem).toContain('fix: git tune grade --draft --run batch01-mem-run1');
  });

  it('(b) refuses a PASSED when an edit made after the run is pending: no run has tried it', async () => {
    const repo = await ranOnce({ a: politely, b: politely });
    await draft(repo, RUN1, (t) => t.replace('## PASSED', '## CORRECT'));
    await tuneOk(repo, ['grade']);
    const oid = await edit(repo, RUN1, 'Keep it to one sentence.');
    const err = await refused(repo, ['grade', '--verdict', 'PASSED', '--run', RUN1], 3);
    expect(err).toContain(`- rule pending: an edit made after this run is pending (${oid.slice(0, 7)}): no run has tried it`);
    expect(err).toContain('fix: git tune run');
    expect(await runVerdict(repo, RUN1)).toBe('CORRECT');
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout)).toMatchObject({ kind: 'confirm', run: 'batch01-nomem-run2' });
  });

  it('(b) at maxRuns refuses a PASSED while a pending edit stands, and accepts it after git tune revert (the grade reverted the unconfirmed one)', async () => {
    const repo = await ranOnce({ a: politely, c: days }, [['maxRuns', '2']]);
    await draft(repo, RUN1);
    await tuneOk(repo, ['grade']);
    const fixesNothing = await edit(repo, RUN1, 'Refunds take a while.', 'c');
    await tuneOk(repo, ['run']);

    // Run 2 of 2 tried the edit and c is still wrong: recording its grade reverts the edit first, with a commit of its own.
    await draft(repo, 'batch01-nomem-run2', (t) => t.replace('## Difficult\n', '## Difficult\n\nadd c wrong\n'));
    const graded2 = await tuneOk(repo, ['grade']);
    expect(graded2.stdout).toContain(`reverted ${fixesNothing.slice(0, 7)} with `);
    expect(read(repo, 'agents/prompt.md')).toBe('Answer politely.\n');
    expect(repo.git('log', '-2', '--format=%(trailers:key=Tune-Step,valueonly)').split('\n').filter(Boolean)).toEqual(['grade', 'revert']);

    // One more edit, pending at the limit.
    const pending = await edit(repo, 'batch01-nomem-run2', 'Refunds: in good time.');
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('stop-batch');
    const both = await refused(repo, ['grade', '--verdict', 'PASSED', '--run', 'batch01-nomem-run2'], 3);
    expect(both).toContain(`- rule unreverted: the half used all 2 runs: PASSED needs every unconfirmed and pending edit reverted first (${pending.slice(0, 7)})`);
    expect(both).toContain('fix: git tune revert');

    const reverted = (await tuneOk(repo, ['revert'])).stdout;
    expect(reverted).toContain(`reverted ${pending.slice(0, 7)} (pending)`);
    await tuneOk(repo, ['grade', '--verdict', 'PASSED', '--run', 'batch01-nomem-run2']);
    expect(trailer(repo, 'Tune-Verdict')).toBe('PASSED');
    expect(read(repo, 'agents/prompt.md')).toBe('Answer politely.\n');
  });

  it('(c) refuses a PASSED with a wrong case that is not on the difficult list; the same grade goes through once `## Difficult` adds it', async () => {
    const repo = await ranOnce({ a: politely, c: days });
    const text = await draft(repo, RUN1, (t) => t.replace('## NO CHANGE', '## PASSED'));
    const err = await refused(repo, ['grade'], 3);
    expect(err).toContain('- rule wrong-not-difficult: PASSED with wrong cases needs each on the difficult list: c');
    expect(err).toContain('fix: git tune difficult add c --why wrong');

    write(repo, FINDINGS(RUN1), text.replace('## Difficult\n', '## Difficult\n\nadd c wrong — its rule is not in the prose\n'));
    const graded = await tuneOk(repo, ['grade']);
    expect(graded.stdout).toContain(`${RUN1}: PASSED (wrong: c)`);
    expect(graded.stdout).toContain('difficult add c (wrong)');
    expect(trailer(repo, 'Tune-Difficult')).toBe('add c wrong');
    expect(trailer(repo, 'Tune-Wrong')).toBe('c');
    const list = JSON.parse((await tuneOk(repo, ['difficult', '--json'])).stdout) as { entries: Array<{ id: string; status: string; reason: string }> };
    expect(list.entries).toMatchObject([{ id: 'c', status: 'open', reason: 'wrong' }]);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});

describe.concurrent('git tune grade: findings a person finishes', { timeout: 180_000 }, () => {
  it('refuses findings with no verdict heading or two verdict headings (exit 2), and a result that is not right or wrong', async () => {
    const repo = await ranOnce({ a: politely, c: days });
    const text = await draft(repo, RUN1);
    write(repo, FINDINGS(RUN1), text.replace('## NO CHANGE\n', 'No change, I think.\n'));
    expect(await refused(repo, ['grade'], 2)).toContain(
      '- the first level-2 heading must be the verdict, one of PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT, PASSED, VOID, VERIFIED, FAILED (found "## Cost review")',
    );
    write(repo, FINDINGS(RUN1), text.replace('## Cost review', '## MIXED\n\n## Cost review'));
    const two = await refused(repo, ['grade'], 2);
    expect(two).toContain(`error: ${FINDINGS(RUN1)} cannot be recorded (1 problem)`);
    expect(two).toContain('- the findings hold 2 verdict headings (NO CHANGE, MIXED): keep one');
    expect(two).toContain(`fix: fix ${FINDINGS(RUN1)}, then: git tune grade`);
    write(repo, FINDINGS(RUN1), text.replace('| c | wrong |', '| c | maybe |'));
    expect(await refused(repo, ['grade'], 2)).toContain('- case c: result must be right or wrong (found "maybe")');
    const json = JSON.parse((await tuneAsync(repo, ['grade', '--json'])).stdout) as { error: { code: string; details: string[] } };
    expect(json.error.code).toBe('bad-findings');

    write(repo, FINDINGS(RUN1), text);
    await tuneOk(repo, ['grade']);
    expect(trailer(repo, 'Tune-Verdict')).toBe('NO CHANGE');
  });

  it('a `?` result (no check, no judge) must be decided before the grade is recorded', async () => {
    const repo = await ranOnce({ a: politely, q: [] });
    const text = await draft(repo, RUN1);
    expect(text).toMatch(/^\| q \| \? \|/m);
    expect(text).toContain('- q: no check and no judge: decide right or wrong');
    const err = await refused(repo, ['grade'], 2);
    expect(err).toContain('- no result for q: write right or wrong in its result column');
    write(repo, FINDINGS(RUN1), text.replace('| q | ? |', '| q | right |').replace(/^## .+$/m, '## PASSED'));
    await tuneOk(repo, ['grade']);
    expect(trailer(repo, 'Tune-Verdict')).toBe('PASSED');
    expect(trailer(repo, 'Tune-Wrong')).toBe('(none)');
  });

  it('--verdict sets the verdict heading, with findings on disk or from the draft; an unknown verdict is refused', async () => {
    const repo = await ranOnce({ a: politely, c: days });
    expect(await refused(repo, ['grade', '--verdict', 'GREAT'], 2)).toContain('"GREAT" is not a verdict; use one of PROGRESS, NO CHANGE');
    expect(await refused(repo, ['grade'], 2)).toContain(`${FINDINGS(RUN1)} does not exist yet`);

    // No findings on disk: --verdict starts from the draft.
    await tuneOk(repo, ['grade', '--verdict', 'mixed']);
    expect(trailer(repo, 'Tune-Verdict')).toBe('MIXED');
    expect(verdictOf(repo, RUN1)).toBe('## MIXED');
    expect(repo.git('show', `HEAD:${FINDINGS(RUN1)}`)).toContain('| c | wrong |');

    // Findings on disk, finished by hand: --verdict replaces their heading and keeps the rest.
    write(repo, FINDINGS(RUN1), read(repo, FINDINGS(RUN1)).replace('### Cases', 'The grader was here.\n\n### Cases'));
    await tuneOk(repo, ['grade', '--verdict', 'REGRESSION']);
    const committed = repo.git('show', `HEAD:${FINDINGS(RUN1)}`);
    expect(committed.startsWith('## REGRESSION\n')).toBe(true);
    expect(committed).toContain('The grader was here.');
    expect(committed.match(/^## (MIXED|REGRESSION)$/gm)).toEqual(['## REGRESSION']);
  });

  it('a regrade is a new commit that supersedes the earlier grade; history keeps both', async () => {
    const repo = await ranOnce({ a: politely, c: days });
    await draft(repo, RUN1);
    await tuneOk(repo, ['grade']);
    const first = tip(repo);
    expect(await runVerdict(repo, RUN1)).toBe('NO CHANGE');
    const r = await tuneOk(repo, ['grade', '--verdict', 'MIXED', '--run', RUN1]);
    expect(r.stdout).toContain(`${RUN1}: MIXED (wrong: c)`);
    expect(repo.git('log', '-1', '--format=%s').trim()).toBe(`tune(desk): grade ${RUN1} MIXED (was NO CHANGE): 1/2 right`);
    expect(repo.git('rev-parse', 'HEAD^').trim()).toBe(first);
    expect(await runVerdict(repo, RUN1)).toBe('MIXED');
    const grades = repo.git('log', '--format=%(trailers:key=Tune-Verdict,valueonly,separator=)', '--grep=^Tune-Step: grade$').trim().split('\n');
    expect(grades).toEqual(['MIXED', 'NO CHANGE']);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout)).toMatchObject({ kind: 'edit', run: RUN1 });
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('grade --draft refuses to overwrite findings edited by hand, unless --force', async () => {
    const repo = await ranOnce({ a: politely, c: days });
    const text = await draft(repo, RUN1, (t) => t.replace('### Cases', 'My notes: c needs the refund rule.\n\n### Cases'));
    const err = await refused(repo, ['grade', '--draft'], 2);
    expect(err).toContain(`error: ${FINDINGS(RUN1)} has uncommitted edits; a new draft would overwrite them`);
    expect(err).toContain('fix: git tune grade --draft --force   # or record them: git tune grade');
    expect(read(repo, FINDINGS(RUN1))).toBe(text);

    const forced = await tuneOk(repo, ['grade', '--draft', '--force']);
    expect(forced.stdout).toBe(`wrote ${FINDINGS(RUN1)}: proposed verdict NO CHANGE\n`);
    expect(read(repo, FINDINGS(RUN1))).not.toContain('My notes');

    // Recorded findings are no longer "edited": a new draft may replace them.
    await tuneOk(repo, ['grade']);
    await tuneOk(repo, ['grade', '--draft']);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});
