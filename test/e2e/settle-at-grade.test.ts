import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatStep } from '../../src/core/steps.js';
import { ROOT, tuneAsync, tuneOk, withCliOnPath, type CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { templateAsync } from '../helpers/tuning.js';

/**
 * Edits settle at grading, and a VOID final check runs again, through the
 * real CLI on a help-desk agent written for these tests
 * (test/fixtures/desk-agent.mjs: it answers a topic from the `- topic:
 * answer` rules of desk/prompts/*.md; desk/prompts/tone.md changes no
 * answer). What native git sees is checked with `git log -p` and `git fsck`.
 */
const AGENT = path.join(ROOT, 'test/fixtures/desk-agent.mjs');
const TUNE = '.tune/desk';
const RUN1 = 'batch01-nomem-run1';
const RUN2 = 'batch01-nomem-run2';
const RUN3 = 'batch01-nomem-run3';
const MAIN = 'desk/prompts/main.md';
const TONE = 'desk/prompts/tone.md';
const MAIN_TEXT = '# Desk rules\n\n- hello: greet the customer politely\n- reset: send a reset link by mail\n';
const TONE_TEXT = Array.from({ length: 8 }, (_, i) => `Tone ${i + 1}: keep it short and kind.`).join('\n') + '\n';
const CASES = [
  { id: 'hello', class: 'greeting', input: { topic: 'hello' }, checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'reset', class: 'account', input: { topic: 'reset' }, checks: [{ type: 'contains', value: 'reset link' }] },
  { id: 'refund', class: 'billing', input: { topic: 'refund' }, checks: [{ type: 'contains', value: '30 days' }] },
  { id: 'warranty', class: 'billing', input: { topic: 'warranty' }, checks: [{ type: 'contains', value: 'two years' }] },
];

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});


/** A native git command that may fail (a conflict): its exit code. */
function spawnGit(repo: TempRepo, args: string[]): { code: number; stderr: string } {
  const r = spawnSync('git', args, { cwd: repo.dir, env: { ...process.env, ...repo.env }, encoding: 'utf8' });
  return { code: r.status ?? -1, stderr: r.stderr };
}

const read = (repo: TempRepo, file: string) => readFileSync(repo.path(file), 'utf8');
const tip = (repo: TempRepo) => repo.git('rev-parse', 'HEAD').trim();
const short = (oid: string) => oid.slice(0, 7);
const changesOf = (run: string) => `${TUNE}/runs/${run}/changes.md`;
const findingsOf = (run: string) => `${TUNE}/runs/${run}/findings.md`;
const line = (text: string, n: number, to: string) => text.split('\n').map((l, i) => (i === n - 1 ? to : l)).join('\n');
const trailers = (repo: TempRepo, key: string, rev = 'HEAD') =>
  repo.git('log', '-1', `--format=%(trailers:key=${key},valueonly)`, rev).split('\n').filter(Boolean);

interface Edit { commit: string; status: string; triedBy: string | null; revertedBy: string | null; kept: { by: string; why: string; commit: string } | null; fate: string }
async function edits(repo: TempRepo): Promise<Edit[]> {
  return (JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as { edits: Edit[] }).edits;
}

/** A tuning of the desk agent with its cases, planned and run once, graded as drafted (built once per cases and config, a copy per test). */
async function desk(cases = CASES, config: Array<[string, string]> = []): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await templateAsync(`desk ${JSON.stringify([cases, config])}`, () => buildDesk(cases, config)));
  repos.push(repo);
  return repo;
}

async function buildDesk(cases: typeof CASES, config: Array<[string, string]>): Promise<TempRepo> {
  const repo = TempRepo.create({ [MAIN]: MAIN_TEXT, [TONE]: TONE_TEXT, 'cases.json': JSON.stringify(cases) });
  await tuneOk(repo, ['init', 'desk', '--prose', 'desk/**/*.md', '--runner', `node ${AGENT}`, '--dataset', 'cases.json', '--no-hooks']);
  for (const [key, value] of [['minBatch', String(cases.length)], ['maxBatch', String(cases.length)], ...config]) await tuneOk(repo, ['config', 'set', key!, value!]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run']);
  await tuneOk(repo, ['grade', '--draft']);
  await tuneOk(repo, ['grade']);
  return repo;
}

/** Writes `files`, adds `changes` to the run's changes.md, records the edit; its commit. */
async function edit(repo: TempRepo, run: string, files: Record<string, string>, changes: string): Promise<string> {
  repo.write(files);
  const before = existsSync(repo.path(changesOf(run))) ? read(repo, changesOf(run)) : '';
  repo.write({ [changesOf(run)]: `${before}${changes}\n` });
  await tuneOk(repo, ['edit']);
  return tip(repo);
}

describe.concurrent('edits settle at grading (the desk agent)', { timeout: 240_000 }, () => {
  it("a revert that would conflict: the fix's other way, followed as printed (git revert, resolve the file, commit, then git tune grade), records the grade", async () => {
    const repo = await desk(CASES, [['maxRuns', '3']]);
    // The hooks and the merge driver, as init installs them (the template is made without), git-tune on PATH for them.
    await tuneOk(repo, ['hooks', 'install']);
    withCliOnPath(repo);
    await edit(repo, RUN1, { [MAIN]: `${MAIN_TEXT}- refund: refunds within 30 days\n` }, '## Refunds\n\nAims: refund');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    const signOff = await edit(repo, RUN2, { [TONE]: line(TONE_TEXT, 5, 'Tone 5: sign off with the desk name.') }, '## Sign-off\n\nAims: reset');
    await edit(repo, RUN2, {
      [TONE]: line(TONE_TEXT, 5, 'Tone 5: sign off with the desk name and hours.'),
      [MAIN]: `${read(repo, MAIN)}- warranty: two years of cover\n`,
    }, '\n## Warranty\n\nAims: warranty');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const conflict = await tuneAsync(repo, ['grade']);
    expect(conflict.code, conflict.stderr).toBe(4);
    const fix = /^fix: .*# keep it on purpose; or: (git revert (\w+)), resolve the files it stops on \((\S+), and the run's changes\.md when a later edit added to it\), commit, then (git tune grade)$/m.exec(conflict.stderr);
    expect(fix, conflict.stderr).not.toBeNull();
    const [, revertLine, edit7, file, gradeLine] = fix!;
    expect(edit7).toBe(short(signOff));
    expect(file).toBe(TONE);
    // As printed: git revert stops on the file named, and on the run's changes.md, which the edit began and the later one added to.
    const reverting = spawnGit(repo, revertLine!.split(' ').slice(1));
    expect(reverting.code).not.toBe(0);
    expect(repo.git('diff', '--name-only', '--diff-filter=U').trim().split('\n')).toEqual([changesOf(RUN2), TONE]);
    // Resolved: the sign-off undone (its line back as it was) and its note taken out of changes.md; committed as git
    // proposes it (--no-edit keeps git's `# Conflicts:` lines at the end of the message, under the hook's trailers).
    writeFileSync(repo.path(TONE), TONE_TEXT);
    writeFileSync(repo.path(changesOf(RUN2)), '\n## Warranty\n\nAims: warranty\n');
    repo.git('add', TONE, changesOf(RUN2));
    const committed = spawnGit(repo, ['commit', '-q', '--no-edit']);
    expect(committed.code, committed.stderr).toBe(0);
    expect(repo.git('log', '-1', '--format=%B')).toMatch(/Tune-Step: revert\n[\s\S]*# Conflicts:/);
    const graded = await tuneAsync(repo, gradeLine!.split(' ').slice(2));
    expect(graded.code, graded.stderr).toBe(0);
    expect(graded.stdout).toContain(`${RUN3}: PASSED`);
    expect(trailers(repo, 'Tune-Step')).toEqual(['grade']);
    expect((await edits(repo)).find((e) => e.commit === signOff)?.status).toBe('reverted');
    expect(() => repo.fsck()).not.toThrow();
  });

  it('the grade reverts the edit that fixed nothing with a revert commit of its own, keeps the confirmed one; --keep --why keeps one on purpose, also when its revert would conflict', async () => {
    const repo = await desk(CASES, [['maxRuns', '3']]);
    const fixesRefund = await edit(repo, RUN1, { [MAIN]: `${MAIN_TEXT}- refund: refunds within 30 days\n` }, '## Refunds\n\nAims: refund');
    const fixesNothing = await edit(repo, RUN1, { [TONE]: line(TONE_TEXT, 2, 'Tone 2: mention the warranty warmly.') }, '\n## Warmer tone\n\nAims: warranty');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const graded = JSON.parse((await tuneOk(repo, ['grade', '--json'])).stdout) as {
      verdict: string; wrong: string[]; commit: string; reverted: Array<{ edit: string; commit: string; files: string[]; why: string }>; kept: unknown[];
    };
    expect(graded.wrong).toEqual(['warranty']);
    expect(graded.reverted).toHaveLength(1);
    const revert = graded.reverted[0]!;
    expect(revert).toMatchObject({ edit: fixesNothing, files: [TONE], why: `not confirmed by ${RUN2}` });
    expect(graded.kept).toEqual([]);

    // Native git: the revert commit comes right before the grade, undoes the prose change, and says what it reverts.
    expect(repo.git('rev-parse', 'HEAD~1').trim()).toBe(revert.commit);
    expect(graded.commit).toBe(tip(repo));
    expect(trailers(repo, 'Tune-Step')).toEqual(['grade']);
    const patch = repo.git('log', '-p', '-1', revert.commit);
    expect(patch).toContain('Tune-Step: revert');
    expect(patch).toContain(`Tune-Reverts: ${fixesNothing}`);
    expect(patch).toContain(`This reverts commit ${fixesNothing}: not confirmed by ${RUN2}.`);
    expect(patch).toContain(`--- a/${TONE}`);
    expect(patch).toMatch(/^-Tone 2: mention the warranty warmly\.$/m);
    expect(patch).toMatch(/^\+Tone 2: keep it short and kind\.$/m);
    expect(read(repo, TONE)).toBe(TONE_TEXT);
    expect(read(repo, MAIN)).toContain('- refund: refunds within 30 days');
    expect((await edits(repo)).map((e) => [e.commit, e.status, e.triedBy, e.revertedBy])).toEqual([
      [fixesRefund, 'confirmed', RUN2, null],
      [fixesNothing, 'reverted', RUN2, revert.commit],
    ]);

    // Run 3 (the last): one edit that cannot be confirmed (it aims at a case that was right), then one that fixes warranty and rewrites the same tone line.
    const signOff = await edit(repo, RUN2, { [TONE]: line(TONE_TEXT, 5, 'Tone 5: sign off with the desk name.') }, '## Sign-off\n\nAims: reset');
    const fixesWarranty = await edit(repo, RUN2, {
      [TONE]: line(TONE_TEXT, 5, 'Tone 5: sign off with the desk name and hours.'),
      [MAIN]: `${read(repo, MAIN)}- warranty: two years of cover\n`,
    }, '\n## Warranty\n\nAims: warranty');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);

    // Its revert conflicts with the later edit of the same line: exit 4, the file and hunk named, nothing written.
    const before = { tip: tip(repo), status: repo.git('status', '--porcelain') };
    const conflict = await tuneAsync(repo, ['grade', '--verdict', 'PASSED']);
    expect(conflict.code, conflict.stderr).toBe(4);
    expect(conflict.stderr).toContain(`cannot revert ${short(signOff)}: ${TONE} changed since, and its hunk @@ -`);
    expect(conflict.stderr).toContain(`the grade of ${RUN3} is not recorded: it reverts the edits its run left unconfirmed, and cannot revert`);
    expect(conflict.stderr).toContain('nothing was written');
    expect(conflict.stderr).toContain(`git tune grade --run ${RUN3} --keep ${short(signOff)} --why`);
    expect({ tip: tip(repo), status: repo.git('status', '--porcelain') }).toEqual(before);

    const noWhy = await tuneAsync(repo, ['grade', '--verdict', 'PASSED', '--keep', short(signOff)]);
    expect(noWhy.code).toBe(2);
    expect(noWhy.stderr).toContain('needs a reason');
    expect(tip(repo)).toBe(before.tip);

    const kept = await tuneOk(repo, ['grade', '--verdict', 'PASSED', '--keep', short(signOff), '--why', 'the sign-off is house style']);
    expect(kept.stdout).toContain(`kept ${short(signOff)} (unconfirmed) on purpose: the sign-off is house style (Tune Tester <tester@example.com>)`);
    expect(kept.stdout).toContain(`${RUN3}: PASSED`);
    expect(kept.stdout).not.toContain('reverted');
    // No revert: the grade sits on the run commit, and records who kept what and why.
    expect(trailers(repo, 'Tune-Step', 'HEAD~1')).toEqual(['run']);
    expect(trailers(repo, 'Tune-Keep')).toEqual([signOff]);
    expect(trailers(repo, 'Tune-Keep-Why')).toEqual(['the sign-off is house style']);
    expect(trailers(repo, 'Tune-Kept-By')).toEqual(['Tune Tester <tester@example.com>']);
    expect(repo.git('log', '-1', '--format=%an <%ae>').trim()).toBe('Tune Tester <tester@example.com>');
    expect(read(repo, TONE)).toContain('sign off with the desk name and hours');

    const all = await edits(repo);
    expect(all.map((e) => [e.commit, e.status])).toEqual([
      [fixesRefund, 'confirmed'], [fixesNothing, 'reverted'], [signOff, 'kept'], [fixesWarranty, 'confirmed'],
    ]);
    expect(all[2]!.kept).toEqual({ by: 'Tune Tester <tester@example.com>', why: 'the sign-off is house style', commit: tip(repo) });

    // Where each edit stands, in status, log, the README and the review.
    const status = (await tuneOk(repo, ['status'])).stdout;
    expect(status).toContain(`confirmed by ${RUN2}`);
    expect(status).toContain(`reverted by ${short(revert.commit)} (${RUN2} did not confirm it)`);
    expect(status).toContain(`kept by Tune Tester <tester@example.com>: the sign-off is house style (unconfirmed by ${RUN3})`);
    const log = (await tuneOk(repo, ['log'])).stdout;
    expect(log).toContain(`kept by Tune Tester <tester@example.com>: the sign-off is house style`);
    expect(log).toMatch(new RegExp(`${short(revert.commit)} +revert +reverted ${short(fixesNothing)}`));
    const readme = read(repo, `${TUNE}/README.md`);
    expect(readme).toContain('kept by Tune Tester');
    expect(readme).toContain(`reverted by ${short(revert.commit)} (${RUN2} did not confirm it)`);
    expect(readme).toContain('1 reverted, 1 kept');
    const review = JSON.parse((await tuneOk(repo, ['review', '1', '--json'])).stdout) as { edits: Array<{ status: string; kept: unknown }>; markdown: string };
    expect(review.edits.map((e) => e.status)).toEqual(['confirmed', 'reverted', 'kept', 'confirmed']);
    expect(review.markdown).toContain(`**kept** by Tune Tester <tester@example.com> (the sign-off is house style) though ${RUN3} did not confirm it`);
    // `git tune revert` leaves a kept edit alone and says why.
    expect((await tuneOk(repo, ['revert'])).stdout).toContain(`kept ${short(signOff)}: kept by Tune Tester <tester@example.com>: the sign-off is house style`);
    expect(tip(repo)).toBe(all[2]!.kept!.commit);

    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('candidate');
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(repo.fsck()).toBe('');
  });

  it("PASSED is refused while an unconfirmed edit stands (rule b'), and accepted once it is reverted", async () => {
    const repo = await desk(CASES, [['maxRuns', '4']]);
    const fixesNothing = await edit(repo, RUN1, { [TONE]: line(TONE_TEXT, 3, 'Tone 3: be brief about refunds.') }, '## Brief\n\nAims: refund');
    await tuneOk(repo, ['run']);
    // Run 2's grade as a git-tune that did not revert at grading wrote it: the edit stays in, unconfirmed.
    const msg = repo.path('.git', 'legacy-grade.txt');
    writeFileSync(msg, formatStep(
      { tuning: 'desk', step: 'grade', run: RUN2, verdict: 'NO CHANGE', wrong: ['refund', 'warranty'], review: false, difficult: [] },
      `tune(desk): grade ${RUN2} NO CHANGE: 2/4 right`,
    ));
    repo.git('commit', '-q', '--allow-empty', '-F', msg);
    expect((await edits(repo)).map((e) => e.status)).toEqual(['unconfirmed']);

    const fixesRefund = await edit(repo, RUN2, { [MAIN]: `${MAIN_TEXT}- refund: refunds within 30 days\n` }, '## Refunds\n\nAims: refund');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const findings = read(repo, findingsOf(RUN3));
    repo.write({ [findingsOf(RUN3)]: findings.replace(/^## .+$/m, '## PASSED').replace('## Difficult\n', '## Difficult\n\nadd warranty wrong\n') });
    const before = tip(repo);
    const refused = await tuneAsync(repo, ['grade']);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(`PASSED is refused for ${RUN3}`);
    expect(refused.stderr).toContain(`rule unsettled: edit ${short(fixesNothing)} of this half is unconfirmed and neither reverted nor kept`);
    expect(refused.stderr).toContain(`fix: git tune revert ${short(fixesNothing)}`);
    expect(tip(repo)).toBe(before);

    await tuneOk(repo, ['revert', short(fixesNothing)]);
    expect(read(repo, TONE)).toBe(TONE_TEXT);
    await tuneOk(repo, ['grade']);
    expect(trailers(repo, 'Tune-Verdict')).toEqual(['PASSED']);
    expect((await edits(repo)).map((e) => [e.commit, e.status])).toEqual([[fixesNothing, 'reverted'], [fixesRefund, 'confirmed']]);
    expect(repo.fsck()).toBe('');
  });

  it('a crash while the grade writes its revert and grade commits: they land together or not at all, and the next grade never reverts twice', async () => {
    const repo = await desk(CASES);
    const fixesNothing = await edit(repo, RUN1, { [TONE]: line(TONE_TEXT, 4, 'Tone 4: talk about the weather.') }, '## Weather\n\nAims: refund');
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    const ran = tip(repo);
    const revertSteps = () => repo.git('log', '--format=%H', '--grep=^Tune-Step: revert$', 'HEAD').split('\n').filter(Boolean);

    // Killed after writing both commits' objects, before the branch moved: nothing happened.
    const early = await tuneAsync(repo, ['grade'], { GIT_TUNE_CRASH_AT: 'grade:after-objects' });
    expect(early.code).not.toBe(0);
    expect(tip(repo)).toBe(ran);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout)).toMatchObject({ kind: 'grade', run: RUN2 });
    expect(read(repo, TONE)).toBe(line(TONE_TEXT, 4, 'Tone 4: talk about the weather.'));

    // Killed after the branch moved, before the working tree followed: the next command finishes it; both commits are there.
    const late = await tuneAsync(repo, ['grade'], { GIT_TUNE_CRASH_AT: 'grade:after-ref' });
    expect(late.code).not.toBe(0);
    expect(trailers(repo, 'Tune-Step', 'tune/desk')).toEqual(['grade']);
    expect(trailers(repo, 'Tune-Step', 'tune/desk~1')).toEqual(['revert']);
    expect(repo.git('rev-parse', 'tune/desk~2').trim()).toBe(ran);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('edit');
    expect(read(repo, TONE)).toBe(TONE_TEXT);
    expect(revertSteps()).toHaveLength(1);

    // A regrade settles nothing again: one grade commit, no second revert.
    const before = tip(repo);
    const regrade = await tuneOk(repo, ['grade', '--run', RUN2]);
    expect(regrade.stdout).not.toContain('reverted');
    expect(repo.git('rev-parse', 'HEAD~1').trim()).toBe(before);
    expect(revertSteps()).toHaveLength(1);
    expect((await edits(repo)).map((e) => [e.commit, e.status])).toEqual([[fixesNothing, 'reverted']]);
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(repo.fsck()).toBe('');
  });

  it('to done by next: an edit after the last batch is reverted before the final check; a VOID final check runs again at half the concurrency (final-check-run2)', async () => {
    const repo = await desk(CASES.slice(0, 2), [['concurrency', '8']]);
    const env = { DESK_VOID_ONCE: repo.path('.git', 'void-once') };
    const next = async () => JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout) as { kind: string; command: string | null; run: string | null; message: string };
    const run = async (command: string) => {
      const outs: CliResult[] = [];
      for (const part of command.split(' && ')) {
        const argv = part.split(' ');
        expect(argv.slice(0, 2), part).toEqual(['git', 'tune']);
        outs.push(await tuneOk(repo, argv.slice(2), env));
      }
      return outs;
    };
    const kinds: string[] = [];
    let late = '';
    for (let i = 0; i < 20; i++) {
      const step = await next();
      kinds.push(step.kind);
      if (step.kind === 'done') break;
      if (step.kind === 'final' && !late) {
        // A prose commit by hand after the last batch: no run will ever confirm it.
        repo.write({ [TONE]: line(TONE_TEXT, 1, 'Tone 1: be cheerful.') });
        repo.git('commit', '-q', '-am', 'cheerful tone');
        late = tip(repo);
        const gated = await next();
        expect(gated.kind).toBe('final');
        expect(gated.command).toBe(`git tune revert ${short(late)} && git tune final`);
        const refused = await tuneAsync(repo, ['final'], env);
        expect(refused.code).toBe(3);
        expect(refused.stderr).toContain(`the final check does not start while edits stand unconfirmed: ${short(late)}`);
        expect(tip(repo)).toBe(late);
        continue;
      }
      if (step.kind === 'grade' && step.run !== null && !step.run.startsWith('final-check')) await tuneOk(repo, ['grade', '--draft']);
      expect(step.command, step.message).not.toBeNull();
      await run(step.command!);
    }
    expect(kinds).toEqual(['candidate', 'mem-run', 'grade', 'checkpoint', 'final', 'final', 'void-rerun', 'grade', 'done']);
    expect(readFileSync(env.DESK_VOID_ONCE, 'utf8')).toMatch(/^(hello|reset)\n$/);
    expect(read(repo, TONE)).toBe(TONE_TEXT);

    const status = JSON.parse((await tuneOk(repo, ['status', '--json'])).stdout) as { final: Array<{ run: string; verdict: string | null }>; edits: Edit[] };
    expect(status.final).toEqual([
      { run: 'final-check', finished: true, verdict: null },
      { run: 'final-check-run2', finished: true, verdict: 'VERIFIED' },
    ]);
    // At done, no edit is unconfirmed.
    expect(status.edits.map((e) => [e.commit, e.status])).toEqual([[late, 'reverted']]);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Concurrency,valueonly)', '--grep=^Tune-Step: run$', 'HEAD').trim()).toBe('4');
    expect(repo.git('tag', '-l', 'tune/desk/final-check*').trim().split('\n')).toEqual(['tune/desk/final-check', 'tune/desk/final-check-run2']);
    expect(repo.fsck()).toBe('');
  });

  it('in CI: an edit after the last batch holds the final check back until kept; final --ci --commit records a VOID final check, and run again records and grades its re-run', async () => {
    const repo = await desk(CASES.slice(0, 2), [['concurrency', '8']]);
    const env = { DESK_VOID_ONCE: repo.path('.git', 'void-once') };
    await tuneOk(repo, ['memory', 'candidate']);
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    await tuneOk(repo, ['memory', 'checkpoint']);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('final');

    // A prose commit by hand after the last batch holds the final check back, until it is reverted or kept on purpose.
    repo.write({ [TONE]: line(TONE_TEXT, 8, 'Tone 8: close with the opening hours.') });
    repo.git('commit', '-q', '-am', 'opening hours');
    const late = tip(repo);
    const held = await tuneAsync(repo, ['final', '--ci', '--commit'], env);
    expect(held.code).toBe(3);
    expect(held.stderr).toContain(`the final check does not start while edits stand unconfirmed: ${short(late)}`);
    expect(tip(repo)).toBe(late);
    const kept = await tuneOk(repo, ['grade', '--keep', short(late), '--why', 'hours are policy']);
    expect(kept.stdout).toContain(`kept ${short(late)} (unconfirmed) on purpose: hours are policy`);
    expect(trailers(repo, 'Tune-Run')).toEqual(['batch01-mem-run1']);
    expect((await edits(repo)).map((e) => [e.commit, e.status])).toEqual([[late, 'kept']]);

    const first = await tuneAsync(repo, ['final', '--ci', '--commit'], env);
    expect(first.code, first.stderr).toBe(6);
    expect(first.stderr).toContain('the final check is VOID, not VERIFIED');
    expect(trailers(repo, 'Tune-Verdict')).toEqual(['VOID']);
    const step = JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout) as { kind: string; command: string };
    expect(step).toMatchObject({ kind: 'void-rerun', command: 'git tune config set concurrency 4 && git tune final' });
    await tuneOk(repo, ['config', 'set', 'concurrency', '4']);
    const again = await tuneAsync(repo, ['final', '--ci', '--commit', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).verdict).toBe('VERIFIED');
    expect(trailers(repo, 'Tune-Run')).toEqual(['final-check-run2']);
    expect(trailers(repo, 'Tune-Verdict')).toEqual(['VERIFIED']);
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('done');
    // Recorded once: a second --commit is refused.
    const third = await tuneAsync(repo, ['final', '--ci', '--commit'], env);
    expect(third.code).toBe(3);
    expect(third.stderr).toContain('already recorded (VERIFIED)');
    expect(repo.fsck()).toBe('');
  });
});
