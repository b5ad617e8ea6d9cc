import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo, RUNNER } from '../helpers/tuning.js';

/**
 * Issue 29, items 3 and 5, through the real CLI on one tuning: what a run
 * tells the person at the terminal is true and complete.
 */

/** Runs a shell line as a user types it: `git tune …` finds `git-tune` on PATH. */
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

// A runner of the user's, not committed, that says what a preset says on stderr (git-tune: …) in every case.
const AGENT = `process.stderr.write('git-tune: no price known for model my-model: its cost counts as 0 (set options.pricing, or options.prices for it)\\n');
process.stderr.write('git-tune: HTTP 429 Too Many Requests; trying again in ' + (Math.random() * 2).toFixed(1) + 's (retry 1 of 4)\\n');
await import(${JSON.stringify(RUNNER)});
`;

describe('a run says what is true, once', () => {
  let repo: TempRepo;
  let run: ReturnType<typeof shell>;

  beforeAll(async () => {
    // Three cases decided by checks, one for the judge (no checks).
    repo = await plannedRepo([plainCase('a'), plainCase('b'), plainCase('c'), plainCase('j', { checks: [] })]);
    repo.write({ 'tools/agent.mjs': AGENT });
    shell(repo, "git tune config set runner.command 'node tools/agent.mjs'");
    run = shell(repo, 'git tune run');
  }, 120_000);
  afterAll(() => repo.cleanup());

  it('runs', () => {
    expect(run.code, run.stderr).toBe(0);
  });

  it("a preset's notices reach the terminal once per run, with how often they came", () => {
    const lines = run.stderr.split('\n');
    expect(lines.filter((l) => l.includes('no price known for model my-model'))).toEqual([
      expect.stringMatching(/^git-tune: the runner says \(case [abcj], once per run\): no price known for model my-model: its cost counts as 0/),
      'git-tune: the runner said it 4 times in this run: no price known for model my-model: its cost counts as 0 (set options.pricing, or options.prices for it)',
    ]);
    expect(lines.filter((l) => l.includes('HTTP 429'))).toHaveLength(2);
  });

  it("a runner whose own files are not committed: said, and recorded in the run commit", () => {
    expect(run.stderr).toContain("warning: the runner's own files are not committed (tools/agent.mjs): this run cannot be reproduced from its commit");
    expect(repo.git('log', '-1', '--format=%b', 'tune/desk^{/batch01-nomem-run1: }')).toContain('Runner files not committed when this run ran (it cannot be reproduced from this commit): tools/agent.mjs');
  });

  it('the run commit says what is still for the judge', () => {
    expect(repo.git('log', '--format=%s', 'tune/desk').split('\n')).toContainEqual(expect.stringMatching(/^tune\(desk\): batch01-nomem-run1: 3\/3 right by checks, 1 for the judge, \d+ tokens$/));
  });

  it('the run tag is printed whole, to be copied', () => {
    expect(run.stdout).toMatch(/commit [0-9a-f]{7}, tag tune\/desk\/batch01-nomem-run1\n/);
    expect(shell(repo, `git rev-parse --verify -q ${/tag (\S+)\n/.exec(run.stdout)![1]}`).code).toBe(0);
  });

  it('review without its batch: a usage error whose fix works', () => {
    const r = shell(repo, 'git tune review');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: review needs the batch it reviews \(batches: 1 to 1\)\nfix: git tune review 1\n$/);
    const fix = shell(repo, /fix: (.+)\n/.exec(r.stderr)![1]!);
    expect(fix.code, fix.stderr).toBe(0);
    expect(fix.stdout).toMatch(/batch 1/i);
  });
});
