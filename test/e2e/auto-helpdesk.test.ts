import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, startTune, tuneOkSync, type CliResult } from '../helpers/cli.js';
import { readRef, TempRepo } from '../helpers/repo.js';
import { stepCommits, story, template, type StepCommit } from '../helpers/tuning.js';

/**
 * `git tune auto` to `done` on a second agent, a help desk written for the
 * tests (test/fixtures/helpdesk), so the method is held on an agent that is
 * not the bundled example: a case no edit can fix (its edits are reverted,
 * it ends on the difficult list), a memory shortfall its editor fixes from
 * the findings alone (no proposal asks for it), one its editor cannot (the
 * half ends as at maxRuns), a judge that fails (bad JSON once, a 429 and a
 * 503 page, four crashes in a row, a write into the prose), and an editor
 * that changes files it may not. What it wrote is read with native git.
 */
const HELPDESK = path.join(ROOT, 'test/fixtures/helpdesk');
const SETTINGS: Array<[string, string]> = [['minBatch', '4'], ['maxBatch', '8'], ['recheck', '2'], ['concurrency', '2'], ['maxRetries', '1'], ['maxRuns', '3']];

const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

interface Desk {
  repo: TempRepo;
  /** Where the judge counts its calls per case (it misbehaves on its first ones). */
  env: Record<string, string>;
}

/** The help desk with its tuning made by `git tune init` and `config set` (made once, copied per test), and a judge state of its own. */
function deskRepo(): Desk {
  const repo = TempRepo.copyOf(template('desk', () => {
    const made = new TempRepo('git-tune-desk-');
    made.git('init', '-q', '-b', 'main');
    cpSync(HELPDESK, made.dir, { recursive: true });
    made.git('add', '-A');
    made.git('commit', '-q', '-m', 'the help desk');
    tuneOkSync(made, ['init', 'desk', '--prose', 'desk/**/*.md', '--memory-policy', 'desk/memory-policy.md',
      '--runner', 'node runner.mjs', '--judge', 'node judge.mjs', '--editor', 'node editor.mjs', '--dataset', 'cases.json']);
    for (const [key, value] of SETTINGS) tuneOkSync(made, ['config', 'set', key, value]);
    return made;
  }), 'git-tune-desk-');
  const state = mkdtempSync(path.join(os.tmpdir(), 'git-tune-desk-judge-'));
  cleanup.push(() => repo.cleanup(), () => rmSync(state, { recursive: true, force: true }));
  return { repo, env: { HELPDESK_STATE: state } };
}

const start = (desk: Desk, args: string[]) => startTune(desk.repo, args, desk.env);
const history = (repo: TempRepo) => stepCommits(repo, 'tune/desk');
const at = (repo: TempRepo, file: string) => repo.git('show', `tune/desk:${file}`);

describe.concurrent('git tune auto on a help desk that is not the example', () => {
  let reference: Promise<{ desk: Desk; result: CliResult }> | null = null;
  const uninterrupted = () => {
    reference ??= (async () => {
      const desk = deskRepo();
      return { desk, result: await start(desk, ['auto']).done };
    })();
    return reference;
  };

  it('reaches done: unfixable edits reverted, every shortfall edited or listed, failing graders survived', async () => {
    const { desk, result } = await uninterrupted();
    const { repo } = desk;
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    expect(result.stdout).toMatch(/^desk: done: the final check is VERIFIED: the tuning is done \(\d+ steps/);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.stderr).not.toContain('it tunes to the test'); // rule lines name topics, never case ids
    const steps = history(repo);

    // legal-advice escalates whatever the prose says: the edit aimed at it alone is reverted by a commit of its own,
    // after the run that did not confirm it, before that run's grade; native git shows the revert taking its line out.
    const edit = steps.find((s) => s.step === 'edit' && s.aims === 'acct-legal-advice')!;
    expect(edit, steps.map((s) => `${s.step} ${s.run} ${s.aims}`).join('\n')).toBeDefined();
    const revert = steps.find((s) => s.step === 'revert')!;
    expect(revert.subject).toBe(`Revert "${repo.git('show', '-s', '--format=%s', edit.oid).trim()}"`);
    const patch = repo.git('log', '-p', '-1', '--format=%B', revert.oid);
    expect(patch).toContain(`This reverts commit ${edit.oid}`);
    expect(patch).toMatch(/^Tune-Step: revert$/m);
    expect(patch).toMatch(/^-- legal-advice note batch\d\d-nomem-run\d: say see the legal page$/m);
    const i = steps.indexOf(revert);
    const confirming = steps.slice(steps.indexOf(edit) + 1).find((s) => s.step === 'run')!;
    expect(steps.indexOf(confirming)).toBeLessThan(i);
    expect(steps[i + 1]).toMatchObject({ step: 'grade', run: confirming.run });
    expect(at(repo, 'desk/prompt.md')).not.toMatch(new RegExp(`legal-advice note ${edit.run}`));
    expect(result.stderr).toContain(`reverted ${edit.oid.slice(0, 7)} with ${revert.oid.slice(0, 7)} (`);

    // The memory shortfall the editor can fix: saved twice, no proposal for it, the editor reads the findings.
    const memEdit = steps.find((s) => s.step === 'edit' && s.run.includes('-mem-'))!;
    expect(repo.git('show', '--format=', memEdit.oid, '--', 'desk/memory-policy.md')).toMatch(/^\+- skip facts already saved$/m);
    expect(steps.find((s) => s.step === 'grade' && s.run === memEdit.run)!.verdict).toBe('CORRECT');
    const [batch] = /^batch\d\d/.exec(memEdit.run)!;
    expect(steps.filter((s) => s.step === 'grade' && s.run.startsWith(`${batch}-mem-`)).map((s) => s.verdict)).toEqual(['CORRECT', 'PASSED']);
    // The editor also wrote outside its half's prose: put back, said in changes.md, never committed.
    const changes = at(repo, `.tune/desk/runs/${memEdit.run}/changes.md`);
    expect(changes).toContain('Put back by git-tune: the editor also changed desk/prompt.md, notes/editor.log');
    expect(repo.git('log', '-p', 'tune/desk', '--', 'desk')).not.toContain(': not allowed');
    expect(repo.git('log', '--format=%H', 'tune/desk', '--', 'notes')).toBe('');
    expect(existsSync(repo.path('notes/editor.log'))).toBe(false);

    // The shortfall it cannot fix (session-log saves its fact every time): the editor changes nothing, the half
    // ends as at maxRuns: the case listed for memory, then PASSED over the CORRECT grade.
    const add = steps.find((s) => s.step === 'difficult' && s.subject.includes('bill-session-log'))!;
    expect(add.subject).toBe('tune(desk): difficult add bill-session-log (memory)');
    expect(steps[steps.indexOf(add) - 1]).toMatchObject({ step: 'grade', verdict: 'CORRECT' });
    expect(steps[steps.indexOf(add) + 1]).toMatchObject({ step: 'grade', run: steps[steps.indexOf(add) - 1]!.run, verdict: 'PASSED' });
    expect(at(repo, `.tune/desk/runs/${steps[steps.indexOf(add) + 1]!.run}/findings.md`))
      .toMatch(/^The half ends here, as at maxRuns: the editor changed nothing after batch\d\d-mem-run\d \(CORRECT\)/m);
    const difficult = JSON.parse(repo.tune(['difficult', '--json'], desk.env).stdout) as { entries: Array<{ id: string; reason: string; status: string }> };
    expect(difficult.entries.map((e) => [e.id, e.reason, e.status]).sort()).toEqual([['acct-legal-advice', 'wrong', 'stuck'], ['bill-session-log', 'memory', 'stuck']]);

    // The judge: asked again after bad JSON, retried after a 429 and a 503 page (graded, never an error),
    // VOID for the judge after four crashes (the run graded on the rest), its write into the prose put back.
    const calls = (id: string) => Number(readFileSync(path.join(desk.env.HELPDESK_STATE!, `${id}.judged`), 'utf8'));
    expect(calls('invoice-copy')).toBeGreaterThanOrEqual(3);
    expect(calls('reset-password')).toBeGreaterThanOrEqual(2);
    const findings = repo.git('grep', '-h', '-e', 'VOID for the judge', '-e', 'a judge changed', 'tune/desk', '--', '.tune/desk/runs').trim().split('\n');
    expect(findings).toEqual(expect.arrayContaining([
      expect.stringMatching(/^- ship-shipping-time: judge: the judge failed \(exit 2\): judge: the grading model crashed \(4 tries\); VOID for the judge: the run is graded on the rest$/),
      // Judged two at a time: the write is named on the case whose judge was running then (card-declined's or one beside it).
      expect.stringMatching(/^- [a-z-]+: while its judge ran, a judge changed desk\/prompt\.md in the repository; put back/),
    ]));
    expect(repo.git('log', '-p', 'tune/desk', '--', 'desk/prompt.md')).not.toContain('written by the judge');

    // At done: no edit unconfirmed, nothing pending; git is clean.
    const status = JSON.parse(repo.tune(['status', '--json'], desk.env).stdout) as { edits: Array<{ commit: string; status: string }>; next: { kind: string } };
    expect(status.next.kind).toBe('done');
    // `next` answered from what the tuning keeps for its tip (before the program loads) says what the program says.
    expect(JSON.parse(repo.tune(['next', '--json'], desk.env).stdout)).toEqual(status.next);
    expect(status.edits.filter((e) => e.status === 'unconfirmed' || e.status === 'pending')).toEqual([]);
    expect(status.edits.find((e) => e.commit === edit.oid)!.status).toBe('reverted');
    expect(status.edits.find((e) => e.commit === memEdit.oid)!.status).toBe('confirmed');
    repo.fsck();
    expect(repo.git('status', '--porcelain').trim()).toBe('');
  }, 180_000);

  it('killed at three points and resumed (the last time with --until final first): the same history', async () => {
    const desk = deskRepo();
    const points: Array<{ name: string; ready: (steps: StepCommit[]) => boolean }> = [
      { name: 'between the revert and the grade', ready: (s) => s.some((x) => x.step === 'revert') },
      { name: 'mid-run of batch 2', ready: (s) => s.some((x) => x.step === 'run-start' && x.run === 'batch02-nomem-run1') },
      { name: 'between the memory entry and PASSED', ready: (s) => s.some((x) => x.step === 'difficult' && x.subject.includes('bill-session-log')) },
    ];
    for (const point of points) {
      const auto = start(desk, ['auto']);
      let ended = false;
      void auto.done.then(() => (ended = true));
      let tip: string | null = '';
      for (;;) {
        if (ended) throw new Error(`auto ended before ${point.name}: ${(await auto.done).stderr.slice(-1500)}`);
        const now = readRef(desk.repo, 'refs/heads/tune/desk');
        if (now !== tip && point.ready(history(desk.repo))) break;
        tip = now;
        await new Promise((r) => setTimeout(r, 10));
      }
      auto.child.kill('SIGKILL');
      expect((await auto.done).signal).toBe('SIGKILL');
    }
    const until = await start(desk, ['auto', '--until', 'final']).done;
    expect(until.code, `${until.stdout}\n${until.stderr.slice(-2000)}`).toBe(0);
    expect(until.stdout).toMatch(/^desk: until: stopped before the final check/);
    const last = await start(desk, ['auto']).done;
    expect(last.code, `${last.stdout}\n${last.stderr.slice(-2000)}`).toBe(0);
    expect(last.stdout).toMatch(/^desk: done: the final check is VERIFIED/);
    const { desk: ref } = await uninterrupted();
    expect(story(history(desk.repo))).toEqual(story(history(ref.repo)));
    expect(desk.repo.git('ls-tree', '-r', 'tune/desk', 'desk')).toBe(ref.repo.git('ls-tree', '-r', 'tune/desk', 'desk'));
    desk.repo.fsck();
  }, 180_000);
});
