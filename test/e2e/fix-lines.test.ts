import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { plainCase, RUNNER, yamlCases } from '../helpers/tuning.js';

/**
 * Every `fix:` line works when followed (issue 29, item 4). Each scenario
 * drives one error code in a copy of a small repository, takes the `fix:`
 * line from stderr and runs it exactly as printed, in a shell, as a user
 * copies it (`git tune` finds `git-tune` on PATH). It must succeed, or lead
 * to the step that does (`then`: the command the fix says comes next).
 *
 * A fix that is a template names what only the user knows in angle brackets
 * (`<name>`, `<file>`): those are filled from PLACEHOLDERS, the only change
 * made to a printed line.
 *
 * Codes with a fix not driven here, and why:
 * - driver-running, ref-locked, ref-moved: another process must hold the tuning at that moment
 *   (test/e2e/one-driver.test.ts and test/reliability/races.test.ts reach them; the signals work owns them);
 * - disk-full: a full file system (test/reliability/disk-full*.test.ts);
 * - bad-minutes, bad-ceiling, no-match: their fix is a whole `git tune auto` (test/e2e/auto.test.ts runs it);
 * - sandbox-down, budget-spent, cases-missing, passed-refused, revert-conflict, unconfirmed-edits,
 *   batch-closed, memory-half, editor-failed: need runs, grades and edits (their own e2e tests:
 *   run, grade, edit-revert, edit-memory-half, auto);
 * - shallow-clone, history-incomplete, shards-*, github-*, pr-push-failed, not-github, no-remote: need a remote
 *   or CI (final-ci, sync, pr tests);
 * - rewritten-step, undo-pushed, tag-exists, ref-conflict, index-unsupported, linked-worktree, git-busy,
 *   no-git, no-identity: a git state made by hand (rewritten, undo, repo-states, identity tests).
 */
const PLACEHOLDERS: Record<string, string> = {
  '<name>': 'desk2', "'<glob>'": "'agents/*.md'", "'<command>'": `'node ${RUNNER}'`, '<file|dir>': 'cases.yaml', '<file>': 'cases.yaml', '<n>': '1',
};

const filled = (line: string) => Object.entries(PLACEHOLDERS).reduce((l, [k, v]) => l.split(k).join(v), line);

function shell(repo: TempRepo, line: string) {
  const bin = repo.path('.git', 'test-bin');
  mkdirSync(bin, { recursive: true });
  try {
    symlinkSync(CLI, path.join(bin, 'git-tune'));
  } catch {
    // already there
  }
  const PATH = [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);
  const r = spawnSync('sh', ['-c', line], { cwd: repo.dir, env: { ...process.env, ...repo.env, PATH }, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const CASES = yamlCases([plainCase('a'), plainCase('b'), plainCase('c')]);

interface Scenario {
  name: string;
  /** The repository it starts from: `bare` (a project, no tuning) or `planned` (tuning desk, batch 1 planned, on tune/desk). */
  from: 'bare' | 'planned';
  setup?: (repo: TempRepo) => void;
  command: string;
  /** The error code `--json` names (when the command takes `--json`). */
  code: string;
  exit: number;
  /** What comes after the fix, when the fix leads to the step instead of doing it. */
  then?: string;
}

const SCENARIOS: Scenario[] = [
  { name: 'a command outside a tuning branch, no tuning yet', from: 'bare', command: 'git tune next --json', code: 'not-on-tuning-branch', exit: 2 },
  { name: 'init with a name that cannot be one', from: 'bare', command: 'git tune init bad/name', code: 'bad-tuning-name', exit: 2 },
  { name: 'init with a dataset that does not exist (init writes nothing)', from: 'bare', command: `git tune init desk --prose 'agents/*.md' --runner 'node ${RUNNER}' --dataset nosuch.yaml`, code: 'no-such-file', exit: 2, then: 'git tune dataset import cases.yaml' },
  { name: 'init with a dataset that is refused', from: 'bare', setup: (r) => r.write({ 'bad.yaml': yamlCases([{ id: 'x', input: 'no class' }]) }), command: `git tune init desk --prose 'agents/*.md' --runner 'node ${RUNNER}' --dataset bad.yaml`, code: 'bad-dataset', exit: 2, then: 'git tune dataset import cases.yaml' },
  { name: 'a tuning that exists', from: 'planned', setup: (r) => r.git('switch', '-q', 'main'), command: `git tune init desk --prose 'agents/*.md'`, code: 'tuning-exists', exit: 2 },
  { name: 'a command on main while a tuning exists', from: 'planned', setup: (r) => r.git('switch', '-q', 'main'), command: 'git tune next --json', code: 'not-on-tuning-branch', exit: 2 },
  { name: 'prose changed before any graded run', from: 'planned', setup: (r) => r.write({ 'agents/prompt.md': 'Answer politely, briefly.\n' }), command: 'git tune run --json', code: 'prose-not-committed', exit: 2, then: 'git tune run' },
  { name: 'a batch when a run is due', from: 'planned', command: 'git tune batch --json', code: 'batch-not-due', exit: 3 },
  { name: 'a setting that is not one', from: 'planned', command: 'git tune config set maxBatc 4 --json', code: 'unknown-config-key', exit: 2 },
  { name: 'a preset that is not one', from: 'planned', command: 'git tune config set runner.preset nosuch --json', code: 'bad-config', exit: 2 },
  { name: 'review without its batch', from: 'planned', command: 'git tune review --json', code: 'no-batch', exit: 2 },
  { name: 'a dataset file that does not exist', from: 'planned', command: 'git tune dataset import nosuch.yaml --json', code: 'no-such-file', exit: 2 },
  { name: 'a dataset that is refused', from: 'planned', setup: (r) => r.write({ 'bad.yaml': yamlCases([{ id: 'x', input: 'no class' }]) }), command: 'git tune dataset import bad.yaml --json', code: 'bad-dataset', exit: 2 },
  { name: 'a step over uncommitted changes to a file it writes', from: 'planned', setup: (r) => r.write({ '.tune/desk/config.yaml': `${'# mine\n'}${r.git('show', 'HEAD:.tune/desk/config.yaml')}` }), command: 'git tune config set maxBatch 4 --json', code: 'dirty-file', exit: 2, then: 'git tune config set maxBatch 4' },
  { name: 'a run that does not exist', from: 'planned', command: 'git tune show nosuch-run --json', code: 'no-such-run', exit: 2 },
  { name: 'undo past the init step', from: 'planned', command: 'git tune undo 99 --json', code: 'undo-past-init', exit: 3 },
  { name: 'a bad concurrency', from: 'planned', command: 'git tune run --concurrency 0 --json', code: 'bad-concurrency', exit: 2 },
  { name: 'a config.yaml edited by hand into a bad one', from: 'planned', setup: (r) => { r.write({ '.tune/desk/config.yaml': 'maxBatch: many\n' }); r.git('commit', '-qam', 'settings by hand'); }, command: 'git tune next --json', code: 'bad-config', exit: 2 },
  { name: 'a grade before any run', from: 'planned', command: 'git tune grade --json', code: 'no-run', exit: 3 },
  { name: 'an edit before any graded run', from: 'planned', command: 'git tune edit --json', code: 'nothing-graded', exit: 3 },
  { name: 'fixing a case that is not on the difficult list', from: 'planned', command: 'git tune difficult fix a --json', code: 'not-on-list', exit: 2 },
  { name: 'a final check before it is due', from: 'planned', command: 'git tune final --json', code: 'final-not-due', exit: 3 },
];

const templates: Partial<Record<Scenario['from'], TempRepo>> = {};
const copies: TempRepo[] = [];

describe('every fix: line works when followed, run exactly as printed', () => {
  beforeAll(() => {
    const bare = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': CASES });
    templates.bare = bare;
    const planned = TempRepo.copyOf(bare);
    for (const line of [`git tune init desk --prose 'agents/*.md' --runner 'node ${RUNNER}' --dataset cases.yaml`, 'git tune select', 'git tune batch']) {
      const r = shell(planned, line);
      if (r.code !== 0) throw new Error(`${line}: ${r.stderr}`);
    }
    templates.planned = planned;
  }, 120_000);
  afterAll(() => [...Object.values(templates), ...copies].forEach((r) => r?.cleanup()));

  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const repo = TempRepo.copyOf(templates[s.from]!);
    copies.push(repo);
    s.setup?.(repo);
    const r = shell(repo, s.command);
    expect(r.code, r.stderr).toBe(s.exit);
    if (s.command.includes('--json')) expect(JSON.parse(r.stdout).error.code).toBe(s.code);
    const fix = /^fix: (.+)$/m.exec(r.stderr)?.[1];
    expect(fix, `no fix: line\n${r.stderr}`).toBeTruthy();
    const line = filled(fix!);
    const followed = shell(repo, line);
    expect(followed.code, `fix: ${line}\n${followed.stderr}`).toBe(0);
    if (s.then) {
      const after = shell(repo, s.then);
      expect(after.code, `${s.then}\n${after.stderr}`).toBe(0);
    }
  }, 60_000);
});
