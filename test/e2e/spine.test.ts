import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The user story of the spine, through the real CLI in a real repository:
 * a tuning is started, its cases imported and selected, batch 1 planned, and
 * `git tune next` says, at every point, the step and the exact command.
 */
const CASES = `# the support desk's real cases
- id: billing-01
  class: billing
  complexity: complex
  input: Can I get a refund after 40 days?
  rubric:
    - { id: r1, text: names the 30-day window }
  checks:
    - { type: contains, value: "30 days" }
- id: billing-02
  class: billing
  input: Where is my invoice?
- id: billing-03
  class: billing
  input: Why was I charged twice?
  owner: payments-team
- id: tech-01
  class: tech
  input: How do I reset my password?
- id: tech-02
  class: tech
  complexity: simple
  input: The app will not log me in.
- id: account-01
  class: account
  input: Close my account.
`;

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const CONFIG = '.tune/support-desk/config.yaml';

/** Runs a shell line the way a user would type it: `git tune …` finds `git-tune` on PATH. */
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

describe('the spine, as a user drives it', () => {
  let repo: TempRepo;
  const tip = () => repo.git('rev-parse', 'HEAD').trim();

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agents/rules/refunds.md': 'Refunds: 30 days.\n', 'cases.yaml': CASES });
  });
  afterAll(() => repo.cleanup());

  it('git tune init support-desk: creates the branch, switches to it, says what is next', () => {
    const r = repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('created tune/support-desk and switched to it; settings in .tune/support-desk/config.yaml\n' +
      'note: no --memory-policy: no file says what the agent keeps in memory, so a with-memory half has nothing to edit (git tune auto ends it at its first run that does not pass); to name one: git tune config set memoryPolicy agents/memory-policy.md\n' +
      'installed git hooks in .git/hooks, and the merge driver of the generated README.md and USAGE.md (so native git revert and cherry-pick do not conflict in them); `git tune hooks uninstall` removes them\n');
    expect(r.stdout).toBe(
      // The step once, then its command.
      'import the cases (JSON, JSONL or YAML)\n  git tune dataset import <file>\n',
    );
    expect(repo.git('branch', '--show-current').trim()).toBe('tune/support-desk');
    const config = readFileSync(repo.path(CONFIG), 'utf8');
    expect(config).toContain('# the largest a batch grows to (at least minBatch)\nmaxBatch: 10\n');
    expect(config).toContain('prose:\n  - agents/**/*.md\n');
    expect(config).toContain('runner:\n  command:\n    - node\n    - agent.js\n');
  });

  it('git tune dataset import cases.yaml: one commit, unknown keys kept', () => {
    const r = repo.tune(['dataset', 'import', 'cases.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^imported 6 cases in 3 classes \(billing, tech, account\), rev [0-9a-f]{12}\n$/);
    const lines = readFileSync(repo.path('.tune/support-desk/dataset.jsonl'), 'utf8').trim().split('\n');
    const owned = JSON.parse(lines[2]!);
    expect(owned).toMatchObject({ id: 'billing-03', class: 'billing', owner: 'payments-team', complexity: 'medium' });
    expect(owned.rev).toMatch(/^[0-9a-f]{12}$/);
    // Importing the same file again changes nothing.
    const again = repo.tune(['dataset', 'import', 'cases.yaml']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^the dataset is unchanged \(rev [0-9a-f]{12}\): nothing to commit\n$/);
    expect(repo.git('log', '--format=%s', '-1').trim()).toBe('tune(support-desk): dataset of 6 cases in 3 classes');
  });

  it('git tune select: classes take turns, largest first, rubric and complex first', () => {
    const r = repo.tune(['select']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      'selection: 6 of 6 cases\n' +
        '   1  billing-01\n   2  tech-01\n   3  account-01\n   4  billing-03\n   5  tech-02\n   6  billing-02\n',
    );
    expect(r.stderr).toBe('\nnext: plan batch 1\n  git tune batch\n');
  });

  it('git tune next: plan batch 1, with the command; the command runs as printed', () => {
    const r = repo.tune(['next']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('plan batch 1\n  git tune batch\n');
    const command = repo.tuneJson(['next']).command;
    expect(command).toBe('git tune batch');
    const b = shell(repo, command);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe(
      'batch 1: 3 new + 0 recheck\n  why: batch 1 takes minBatch: 3\n  new: billing-01, tech-01, account-01\n  recheck: (none)\n',
    );
    expect(b.stderr).toBe('\nnext: run batch 1 without memory (3 new + 0 recheck cases)\n  git tune run\n');
  });

  it('git tune next --json: run batch01-nomem-run1', () => {
    expect(repo.tuneJson(['next'])).toEqual({
      kind: 'run',
      message: 'run batch 1 without memory (3 new + 0 recheck cases)',
      command: 'git tune run',
      batch: 1,
      half: 'nomem',
      run: 'batch01-nomem-run1',
      notes: [],
    });
  });

  it('git tune status, and status --json', () => {
    const r = repo.tune(['status']);
    expect(r.code).toBe(0);
    const scrubbed = r.stdout.replace(tip().slice(0, 7), '<tip>').replace(/rev [0-9a-f]{12}/, 'rev <rev>');
    expect(scrubbed).toBe(
      [
        'tuning support-desk on tune/support-desk (4 steps, tip <tip>)',
        'dataset: 6 cases (rev <rev>); selection: 6 of 6',
        'difficult: 0 open, 0 fixed, 0 stuck; usage: 0 tokens, $0.0000',
        '',
        'batch    cases              run        verdict  checkpoint',
        'batch 1  3 new + 0 recheck  (not run)',
        '',
        'next: run batch 1 without memory (3 new + 0 recheck cases)',
        '  git tune run',
        '',
      ].join('\n'),
    );

    const s = repo.tuneJson(['status']);
    expect(s).toMatchObject({
      tuning: 'support-desk',
      branch: 'tune/support-desk',
      tip: tip(),
      commits: 4,
      dataset: { cases: 6, rev: expect.stringMatching(/^[0-9a-f]{12}$/) },
      selection: { selected: 6, total: 6 },
      batches: [{ batch: 1, size: 3, kind: 'new', new: 3, recheck: 0, runs: [], checkpoint: false }],
      final: [],
      edits: [],
      difficult: { open: 0, fixed: 0, stuck: 0 },
      usage: { tokens: 0, costUsd: 0 },
      warnings: [],
      next: { kind: 'run', run: 'batch01-nomem-run1', command: 'git tune run' },
    });
  });

  it('git tune batch --dry-run --json: the next plan, written nowhere', () => {
    const before = tip();
    const plan = repo.tuneJson(['batch', '--dry-run']);
    expect(Object.keys(plan)).toEqual(['batch', 'size', 'why', 'kind', 'new', 'recheck']);
    expect(plan).toEqual({
      batch: 2,
      size: 6,
      why: 'batch 1 went smoothly (0 no-memory + 0 with-memory runs, no new difficult case): 3 → 6',
      kind: 'new',
      new: ['billing-03', 'tech-02', 'billing-02'],
      recheck: ['billing-01', 'tech-01', 'account-01'],
    });
    expect(tip()).toBe(before);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('git tune batch when no batch is due: exit 3, says why and what to do', () => {
    const before = tip();
    const r = repo.tune(['batch']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: no batch is due: run batch 1 without memory (3 new + 0 recheck cases)\nfix: git tune run\n');
    const j = repo.tune(['batch', '--json']);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stdout)).toEqual({
      error: {
        code: 'batch-not-due',
        message: 'no batch is due: run batch 1 without memory (3 new + 0 recheck cases)',
        hint: 'git tune run',
        details: [],
      },
    });
    expect(tip()).toBe(before);
  });

  it('git tune config: every default filled in, concurrency = min(maxBatch + recheck, 16)', () => {
    const r = repo.tune(['config']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        'limit: null', 'minBatch: 3', 'maxBatch: 10', 'recheck: 3', 'seed: 1', 'maxRetries: 3', 'maxRuns: 4',
        'maxStuckShare: 0.2', 'maxEditorIdle: 2', 'noise:', '  repeats: 3',
        'prose:', '  - agents/**/*.md', 'memoryPolicy: []',
        'runner:', '  command:', '    - node', '    - agent.js', '  shell: false', '  timeoutSec: 600', '  env: {}',
        'judge: null', 'editor: null', 'memory:', '  merge: null', 'budget:', '  maxCostUsd: null', '  maxTokens: null',
        'heldOut:', '  maxDrop: 0', 'targets: []', 'concurrency: 13', '',
      ].join('\n'),
    );
    expect(repo.tuneJson(['config']).concurrency).toBe(13);
  });

  it('git tune config set: one commit, comments kept (its own and the user\'s)', () => {
    // A user's own comment, committed by hand on the tuning branch.
    const file = repo.path(CONFIG);
    const text = readFileSync(file, 'utf8').replace('maxBatch: 10\n', '# the runner is slow: keep batches small\nmaxBatch: 10\n');
    repo.write({ [CONFIG]: text });
    repo.git('commit', '-q', '-am', 'note why batches stay small');

    const r = repo.tune(['config', 'set', 'maxBatch', '20']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('maxBatch = 20\n');
    const after = readFileSync(file, 'utf8');
    expect(after).toBe(text.replace('maxBatch: 10\n', 'maxBatch: 20\n'));
    expect(after).toContain('# git-tune settings for this tuning');
    expect(repo.git('log', '--format=%s%n%(trailers)', '-1').trim().replace(/\nTune-Seal: v1 [0-9a-f]{16}$/, '')).toBe(
      'tune(support-desk): config maxBatch = 20\nTune-Tuning: support-desk\nTune-Step: config\nTune-Keys: maxBatch',
    );
    expect(repo.tuneJson(['config']).concurrency).toBe(16); // min(20 + 3, 16)
    // The same value again: nothing to commit.
    const before = tip();
    const same = repo.tune(['config', 'set', 'maxBatch', '20']);
    expect(same.code).toBe(0);
    expect(same.stderr).toBe('maxBatch is already 20: nothing to commit\n');
    expect(tip()).toBe(before);
  });

  it('leaves a clean working tree and a clean fsck', () => {
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.fsck()).toBe('');
    expect(repo.git('log', '--format=%(trailers:key=Tune-Step,valueonly)', 'main..HEAD').trim().split('\n').filter(Boolean)).toEqual([
      'config', 'plan', 'select', 'dataset', 'init',
    ]);
  });
});

describe('starting without a runner', () => {
  it('next asks for the runner, and its command sets it; a cut selection is noted', () => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': CASES });
    try {
      expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--dataset', 'cases.yaml']).code).toBe(0);
      const step = repo.tuneJson(['next']);
      expect(step).toMatchObject({ kind: 'config', command: `git tune config set runner.command '["node", "agent.js"]'` });
      const r = shell(repo, step.command);
      expect(r.code, r.stderr).toBe(0);
      expect(repo.tuneJson(['config']).runner.command).toEqual(['node', 'agent.js']);
      expect(repo.tuneJson(['next']).kind).toBe('select');
      // A cut selection is noted by next, every time (docs/method.md#next).
      expect(repo.tune(['config', 'set', 'limit', '4']).code).toBe(0);
      const select = repo.tune(['select']);
      expect(select.stdout.split('\n')[0]).toBe('selection: 4 of 6 cases (limit: 2 cases are never tuned against)');
      expect(repo.tuneJson(['next'])).toMatchObject({ kind: 'batch', notes: ['limit 4 of 6 cases: 2 are never tuned against'] });
    } finally {
      repo.cleanup();
    }
  });
});

describe('help and version', () => {
  const repo = new TempRepo();
  afterAll(() => repo.cleanup());

  it('--version prints the package version', () => {
    const r = repo.tune(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('--help lists the commands and where to start', () => {
    const r = repo.tune(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: git-tune [options] [command]');
    expect(r.stdout).toContain('Start with `git tune init`, then follow `git tune next`.');
    for (const command of ['init [options] <name>', 'next [options]', 'status [options]', 'config [options]', 'dataset', 'select [options]', 'batch [options]']) {
      expect(r.stdout).toContain(`  ${command}`);
    }
  });

  it('a subcommand\'s --help shows examples', () => {
    const init = repo.tune(['init', '--help']);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("Examples:\n  git tune init support-desk --prose 'agents/**/*.md' --runner 'node agent.js' --dataset cases.yaml\n");
    const set = repo.tune(['config', 'set', '--help']);
    expect(set.stdout).toContain('Examples:\n  git tune config set maxBatch 8\n');
    // The settings, from the JSON Schema the zod schema generates (schema/config.schema.json).
    expect(set.stdout).toMatch(/\nSettings:\n  limit +how many cases this tuning uses; null = the whole dataset\n/);
    expect(set.stdout).toMatch(/\n  runner\.timeoutSec +seconds the program may run/);
    expect(repo.tune(['config', '--help']).stdout).toContain('\nSettings:\n');
    const batch = repo.tune(['batch', '--help']);
    expect(batch.stdout).toContain('--dry-run --json prints {batch, size, why, kind, new, recheck}.');
  });

  it('a reader that stops early (`| head`) ends the output quietly, not with a stack trace', () => {
    // `true` exits before the CLI has started: every write meets a closed pipe.
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" --help | true; echo "exit \${PIPESTATUS[0]}"`], {
      cwd: repo.dir, env: { ...process.env, ...repo.env }, encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('exit 0\n');
  });

  it('an unknown command is a usage error (exit 2)', () => {
    const r = repo.tune(['bacth']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: unknown command 'bacth'");
    expect(r.stderr).toContain('(Did you mean batch?)');
  });

  it('a usage error inside a subcommand exits 2, like one at the top level', () => {
    const unknown = repo.tune(['batch', '--bogus']);
    expect(unknown.stderr).toContain("error: unknown option '--bogus'");
    expect(unknown.code).toBe(2);
    const missing = repo.tune(['config', 'set']);
    expect(missing.stderr).toContain("error: missing required argument 'key'");
    expect(missing.code).toBe(2);
  });

  it('outside a repository: exit 2 with the fix, and the --json error shape', () => {
    const r = repo.tune(['next', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'not-a-repo', message: `${repo.dir} is not inside a git repository`, hint: 'git init', details: [] },
    });
    expect(r.stderr).toBe(`error: ${repo.dir} is not inside a git repository\nfix: git init\n`);
  });
});
