import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { statusWithRepair, type StatusReport } from '../../src/app/status.js';
import { loadTuning } from '../../src/app/tuning.js';
import { openRepo } from '../../src/git/open.js';
import { CLI, ROOT, startProcess, tuneAsync, tuneOk, type CliResult } from '../helpers/cli.js';
import { fsckProblems, TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits, templateAsync } from '../helpers/tuning.js';

/**
 * Rewritten steps (docs/git-model.md#rewritten-steps) with native git, on
 * the example agent and on the desk agent (test/fixtures/desk-agent.mjs: no
 * judge, no editor, graded by checks alone, its empty memory makes
 * candidate and checkpoint commits that change README.md only): an amend
 * of the last step, a `git rebase -i` that rewords a step in the middle,
 * one that squashes two steps. `status` and `next` report it with the
 * command that repairs it, step-writing commands refuse, the printed
 * command puts the original steps back, and `auto` then reaches done;
 * `git fsck` is clean after each. A hand commit of prose is still a hand edit.
 * What status and next say is read in-process (the functions the commands
 * print); the CLI's text, --json and a refusal are checked on two of them.
 */
const AGENT = path.join(ROOT, 'test/fixtures/desk-agent.mjs');
const DESK_PROSE = 'desk/prompts/main.md';
const DESK_RULES = '# Desk rules\n\n- hello: greet the customer politely\n- reset: send a reset link by mail\n- refund: refunds within 30 days\n- warranty: two years of warranty\n';
const DESK_CASES = [
  { id: 'hello', class: 'greeting', input: { topic: 'hello' }, checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'reset', class: 'account', input: { topic: 'reset' }, checks: [{ type: 'contains', value: 'reset link' }] },
  { id: 'refund', class: 'billing', input: { topic: 'refund' }, checks: [{ type: 'contains', value: '30 days' }] },
  { id: 'warranty', class: 'billing', input: { topic: 'warranty' }, checks: [{ type: 'contains', value: 'two years' }] },
];

interface Agent {
  label: string;
  tuning: string;
  prose: string;
  /** A tuning stopped before its final check (built once, a copy per test). */
  template: () => Promise<TempRepo>;
}

const AGENTS: Agent[] = [
  {
    label: 'the example agent',
    tuning: 'demo',
    prose: 'agents/prompts/house.md',
    template: () => templateAsync('example until final', async () => {
      const repo = exampleRepo({ demo: { limit: '3' } }, 'git-tune-rewritten-');
      await tuneOk(repo, ['auto', '--until', 'final']);
      return repo;
    }),
  },
  {
    label: 'the desk agent',
    tuning: 'desk',
    prose: DESK_PROSE,
    template: () => templateAsync('desk until final', async () => {
      const repo = TempRepo.create({ [DESK_PROSE]: DESK_RULES, 'cases.json': JSON.stringify(DESK_CASES) });
      await tuneOk(repo, ['init', 'desk', '--prose', 'desk/**/*.md', '--runner', `node ${AGENT}`, '--dataset', 'cases.json']);
      for (const [k, v] of [['minBatch', '4'], ['maxBatch', '4']]) await tuneOk(repo, ['config', 'set', k!, v!]);
      await tuneOk(repo, ['auto', '--until', 'final']);
      return repo;
    }),
  },
];

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

async function copyOf(agent: Agent): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await agent.template(), 'git-tune-rewritten-');
  repos.push(repo);
  return repo;
}

const run = (repo: TempRepo, cmd: string, args: string[], env: Record<string, string> = {}) =>
  startProcess(cmd, args, repo.dir, { ...process.env, ...repo.env, ...env }).done;
const sh = (repo: TempRepo, line: string, env: Record<string, string> = {}) => run(repo, 'sh', ['-c', line], env);
const json = async <T = any>(repo: TempRepo, args: string[]): Promise<T> => JSON.parse((await tuneOk(repo, [...args, '--json'])).stdout) as T;
const head = (repo: TempRepo) => repo.git('rev-parse', 'HEAD').trim();

/** `git tune status --json` as the command computes it, in-process (its `next` is `git tune next --json`). */
async function status(repo: TempRepo): Promise<StatusReport> {
  return statusWithRepair(await loadTuning(await openRepo(repo.dir, { ...process.env, ...repo.env })));
}

const nextOf = async (repo: TempRepo) => (await status(repo)).next;

/** What a user sees while a step stands rewritten: status and next name the repair (with `cli`: text, --json, and a step refusing with it). */
async function expectReported(repo: TempRepo, commit: string, kind: string, repair: string, cli = false): Promise<StatusReport> {
  const report = await status(repo);
  expect(report.rewritten.map((r) => [r.commit, r.kind])).toEqual([[commit, kind]]);
  expect(report.repair?.command).toBe(repair);
  expect(report.next).toMatchObject({ kind: 'repair', command: repair });
  if (!cli) return report;
  // --json adds each case's noise from the history (docs/method.md#noise), which the in-process report leaves out.
  const { noise, ...printed } = await json(repo, ['status']);
  expect(printed).toEqual(JSON.parse(JSON.stringify(report)));
  expect(noise).toBeTypeOf('object');
  expect(await json(repo, ['next'])).toEqual(report.next);
  const text = await tuneOk(repo, ['status']);
  expect(text.stdout).toContain(`rewritten: ${report.rewritten[0]!.says}`);
  expect(text.stdout).toContain(`repair: ${repair}`);
  expect(text.stdout).toContain(`\n  ${repair}\n`);
  // A step-writing command refuses (exit 3) with the repair as its fix, and writes nothing.
  const tip = head(repo);
  const refused = await tuneAsync(repo, ['final']);
  expect(refused.code, refused.stderr).toBe(3);
  expect(refused.stderr).toMatch(/has a rewritten step \(an amend, a reword or a squash\)/);
  expect(refused.stderr).toContain(`fix: ${repair}`);
  expect(head(repo)).toBe(tip);
  return report;
}

/** Runs the repair as printed (a shell line), then checks the history is the one before the rewrite. */
async function repairAndCheck(repo: TempRepo, command: string, before: { tip: string; next: unknown }): Promise<void> {
  const fixed = await sh(repo, command);
  expect(fixed.code, fixed.stderr).toBe(0);
  expect(head(repo)).toBe(before.tip);
  expect(repo.git('status', '--porcelain')).toBe('');
  const after = await status(repo);
  expect(after.rewritten).toEqual([]);
  expect(after.next).toEqual(before.next);
  expect(fsckProblems(repo)).toBe('');
}

/** `git rebase -i <base>` with a todo edited by `sed` and an editor script for messages. */
async function rebase(repo: TempRepo, base: string, sedScript: string, message: string | null): Promise<CliResult> {
  const editor = repo.path('.git', 'test-editor.sh');
  writeFileSync(editor, message === null ? '#!/bin/sh\nexit 0\n' : `#!/bin/sh\nprintf '%s\\n' '${message}' > "$1"\n`, { mode: 0o755 });
  return run(repo, 'git', ['rebase', '-i', base], { GIT_SEQUENCE_EDITOR: `sed -i -e '${sedScript}'`, GIT_EDITOR: editor });
}

const short = (oid: string) => oid.slice(0, 7);

describe.concurrent.each(AGENTS)('rewritten steps on $label', { timeout: 180_000 }, (agent) => {
  it('an amend of the last step (message only): reported, refused, the printed reset puts it back, auto reaches done', async () => {
    const repo = await copyOf(agent);
    const before = { tip: head(repo), next: await nextOf(repo) };
    const amended = await run(repo, 'git', ['commit', '-q', '--amend', '-m', 'checkpoint, in my own words']);
    expect(amended.code, amended.stderr).toBe(0);
    const report = await expectReported(repo, head(repo), 'unsealed', `git reset --soft ${before.tip}`, true);
    expect(report.repair?.undo).toBe('git tune undo 1');
    expect(report.rewritten[0]!.files.length).toBeGreaterThan(0);
    expect(report.next.message).toContain('git tune undo 1');
    expect(fsckProblems(repo)).toBe('');
    await repairAndCheck(repo, report.repair!.command, before);

    const auto = await tuneAsync(repo, ['auto']);
    expect(auto.code, auto.stderr.slice(-2000)).toBe(0);
    expect(auto.stdout).toMatch(new RegExp(`^${agent.tuning}: done: the final check is VERIFIED`));
    expect(fsckProblems(repo)).toBe('');
  });

  it('git rebase -i rewording a run step in the middle: reported from that step on; the pre-rebase tip comes back from the reflog', async () => {
    const repo = await copyOf(agent);
    const before = { tip: head(repo), next: await nextOf(repo) };
    const steps = stepCommits(repo, `tune/${agent.tuning}`);
    const runStep = steps.findIndex((s) => s.step === 'run');
    const oid = steps[runStep]!.oid;
    const rebased = await rebase(repo, `${oid}^`, `s/^pick ${short(oid)}/reword ${short(oid)}/`, 'batch 1 ran, all fine');
    expect(rebased.code, rebased.stderr).toBe(0);
    const reworded = repo.git('rev-list', '--first-parent', '--reverse', `${oid}^..HEAD`).trim().split('\n')[0]!;
    expect(repo.git('log', '-1', '--format=%B', reworded).trim()).toBe('batch 1 ran, all fine');

    const report = await expectReported(repo, reworded, 'unsealed', `git reset --soft ${before.tip}`);
    expect(report.rewritten[0]!.files).toContain(`.tune/${agent.tuning}/runs/batch01-nomem-run1/results.json`);
    // the undo goes back to the step before the reworded one
    expect(report.repair?.undo).toBe(`git tune undo ${steps.length - runStep}`);
    expect(fsckProblems(repo)).toBe('');
    await repairAndCheck(repo, report.repair!.command, before);
  });

  it('git rebase -i squashing a run into its start: one commit with two trailer blocks, reported; the reflog puts both back', async () => {
    const repo = await copyOf(agent);
    const before = { tip: head(repo), next: await nextOf(repo) };
    const steps = stepCommits(repo, `tune/${agent.tuning}`);
    const start = steps.findIndex((s) => s.step === 'run-start');
    const runOid = steps[start + 1]!.oid;
    expect(steps[start + 1]!.step).toBe('run');
    const rebased = await rebase(repo, `${steps[start]!.oid}^`, `s/^pick ${short(runOid)}/squash ${short(runOid)}/`, null);
    expect(rebased.code, rebased.stderr).toBe(0);
    const squashed = repo.git('rev-list', '--first-parent', '--reverse', `${steps[start]!.oid}^..HEAD`).trim().split('\n')[0]!;
    expect(repo.git('log', '-1', '--format=%B', squashed).match(/^Tune-Seal:/gm)).toHaveLength(2);

    const report = await expectReported(repo, squashed, 'squashed', `git reset --soft ${before.tip}`);
    expect(report.repair?.undo).toBe(`git tune undo ${steps.length - start - 1}`);
    expect(fsckProblems(repo)).toBe('');
    await repairAndCheck(repo, report.repair!.command, before);
  });

  it('when the reflog no longer holds the original (or more was committed on top), the repair is git tune undo to the last good step', async () => {
    const repo = await copyOf(agent);
    const steps = stepCommits(repo, `tune/${agent.tuning}`);
    const last = steps[steps.length - 1]!;
    expect((await run(repo, 'git', ['commit', '-q', '--amend', '-m', 'my words'])).code).toBe(0);
    // a hand commit on top: the tree differs from every original
    repo.write({ [agent.prose]: `${repo.git('show', `HEAD:${agent.prose}`)}\nOne more line.\n` });
    expect((await run(repo, 'git', ['commit', '-q', '-am', 'one more line'])).code).toBe(0);
    let report = await expectReported(repo, repo.git('rev-parse', 'HEAD^').trim(), 'unsealed', 'git tune undo 2');
    expect(report.repair?.restore).toBeNull();

    // the reflog expired: only the undo is left, for an amend alone too
    repo.git('reset', '-q', '--hard', 'HEAD^');
    repo.git('reflog', 'expire', '--expire=now', '--all');
    report = await expectReported(repo, head(repo), 'unsealed', 'git tune undo 1', true);
    expect((await tuneOk(repo, ['status'])).stdout).toContain('the reflog no longer holds the original steps');
    expect(fsckProblems(repo)).toBe('');
    // undo 1 (git tune undo moves back first-parent commits): the last good step is the tip again, the lost step is due again
    repo.git('reset', '-q', '--keep', 'HEAD~1');
    const after = await status(repo);
    expect(after.next.kind).toBe(last.step);
    expect(after.rewritten).toEqual([]);
  });

  it('a hand commit of prose (and of the README\'s hand-written part) is still a hand edit, not a rewritten step', async () => {
    const repo = await copyOf(agent);
    repo.write({ [agent.prose]: `${repo.git('show', `HEAD:${agent.prose}`)}\nKeep answers short.\n` });
    expect((await run(repo, 'git', ['commit', '-q', '-am', 'keep answers short'])).code).toBe(0);
    const edit = head(repo);
    const readme = `.tune/${agent.tuning}/README.md`;
    repo.write({ [readme]: repo.git('show', `HEAD:${readme}`).replace(/^_Write here which agent.*$/m, 'This agent answers a help desk.') });
    expect((await run(repo, 'git', ['commit', '-q', '-am', 'say what is tuned'])).code).toBe(0);
    expect(repo.git('diff', '--stat', 'HEAD^', 'HEAD')).toContain(readme);
    const report = await status(repo);
    expect(report.rewritten).toEqual([]);
    expect(report.repair).toBeNull();
    expect(report.edits.filter((e) => e.hand).map((e) => e.commit)).toEqual([edit]);
    expect(report.next.kind).not.toBe('repair');
  });
});

describe('rewritten steps with the commit hooks on', () => {
  it('an amend gets the hooks\' note trailers and is still a rewritten step; the hook prints the repair after the commit', { timeout: 120_000 }, async () => {
    const repo = await copyOf(AGENTS[1]!);
    const bin = repo.path('.git', 'test-bin');
    mkdirSync(bin, { recursive: true });
    if (!existsSync(path.join(bin, 'git-tune'))) symlinkSync(CLI, path.join(bin, 'git-tune'));
    const env = { PATH: [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter) };
    const before = { tip: head(repo), next: await nextOf(repo) };
    const amended = await run(repo, 'git', ['commit', '--amend', '-m', 'checkpoint, in my own words'], env);
    expect(amended.code, amended.stderr).toBe(0);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)').trim()).toBe('note');
    expect(amended.stderr).toContain(`git-tune next: `);
    expect(amended.stderr).toContain(`git reset --soft ${before.tip}`);
    const report = await expectReported(repo, head(repo), 'note', `git reset --soft ${before.tip}`);
    expect(report.rewritten[0]!.files).toEqual(['.tune/desk/README.md (generated part)']);
    await repairAndCheck(repo, report.repair!.command, before);
  });
});
