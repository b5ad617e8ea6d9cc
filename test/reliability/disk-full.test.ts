import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { ENOSPC_POINTS } from '../../src/faults/enospc.js';
import { tuneAsync, tuneOk, type CliResult } from '../helpers/cli.js';
import { fsckProblems, revOrNull, TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Issue 22, item 1: a full disk (GIT_TUNE_ENOSPC_AT, src/faults/enospc.ts)
 * at every write point of the committing commands, with both git backends
 * where the write is the backend's. After each: exit 7 with `disk-full`,
 * naming the file system (as `df` names it) and `git tune next`; `git fsck`
 * clean; no `*.tmp-*` file anywhere; `git status` as before the command; and
 * the next command completes the step (the very commit an undisturbed
 * command writes, where the step is deterministic).
 */
type Stage = 'planned' | 'drafted' | 'passed';

interface Scenario {
  name: string;
  stage: Stage;
  command: string[];
  points: string[];
  /** Same inputs, same commit ids (false for runs: run.json holds times). */
  deterministic: boolean;
  /** Points whose write is the git backend's: tried on isomorphic-git too. */
  iso?: string[];
}

const SCENARIOS: Scenario[] = [
  {
    name: 'run', stage: 'planned', command: ['run'], deterministic: false,
    points: ['scratch', 'case#2', 'EDQUOT:case', 'logs', 'journal', 'tags', 'checkout'],
    iso: ['objects', 'index'],
  },
  { name: 'grade', stage: 'drafted', command: ['grade'], deterministic: true, points: ['objects', 'ref', 'index'], iso: ['checkout'] },
  // The case: the candidate's new files could not be written, and `git status` showed them as staged deletions.
  { name: 'memory candidate', stage: 'passed', command: ['memory', 'candidate'], deterministic: true, points: ['checkout#3'], iso: ['index'] },
];

const BRANCH = 'refs/heads/tune/desk';
const templates = {} as Record<Stage, TempRepo>;
const scratchTmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-df-tmp-'));

beforeAll(async () => {
  const planned = (templates.planned = await plannedRepo([plainCase('a'), plainCase('b')]));
  const drafted = (templates.drafted = TempRepo.copyOf(planned));
  await tuneOk(drafted, ['run']);
  await tuneOk(drafted, ['grade', '--draft']);
  const passed = (templates.passed = TempRepo.copyOf(drafted));
  await tuneOk(passed, ['grade']);
}, 120_000);

afterAll(() => {
  for (const t of Object.values(templates)) t.cleanup();
  rmSync(scratchTmp, { recursive: true, force: true });
});

/** Every `*.tmp-*` file under `dir` (the working tree and .git alike). */
function tempFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (/\.tmp-|^tune-index-/.test(e.name)) out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out;
}

/** The mount point `df` gives for `dir`. */
const mountOf = (dir: string) => execFileSync('df', ['--output=target', dir], { encoding: 'utf8' }).trim().split('\n').pop()!.trim();

const status = (repo: TempRepo) => repo.git('status', '--porcelain', '--untracked-files=all');

const references = new Map<Scenario, Promise<{ tip: string | null; status: string }>>();

/** What the command leaves when the disk has room. */
function referenceOf(s: Scenario): Promise<{ tip: string | null; status: string }> {
  let ref = references.get(s);
  if (!ref) {
    ref = (async () => {
      const repo = TempRepo.copyOf(templates[s.stage]);
      try {
        await tuneOk(repo, s.command, { TMPDIR: scratchTmp });
        return { tip: revOrNull(repo, BRANCH), status: status(repo) };
      } finally {
        repo.cleanup();
      }
    })();
    references.set(s, ref);
  }
  return ref;
}

export function expectDiskFull(expect: ExpectStatic, r: CliResult, at: string, quota = false): void {
  const mount = mountOf(at);
  expect(r.code, r.stderr).toBe(7);
  expect(r.stderr).toContain(quota ? `error: the disk quota on ${mount} is exceeded` : `error: no space left on ${mount} (`);
  expect(r.stderr).toContain(`fix: free space on ${mount}, then: git tune next`);
  expect(r.stderr).not.toContain('--debug');
}

async function fillAndRecover(expect: ExpectStatic, s: Scenario, point: string, backend: 'native' | 'iso'): Promise<void> {
  const ref = await referenceOf(s);
  const repo = TempRepo.copyOf(templates[s.stage]);
  const env = { TMPDIR: scratchTmp, GIT_TUNE_BACKEND: backend };
  try {
    const before = { tip: revOrNull(repo, BRANCH), status: status(repo) };
    const full = await tuneAsync(repo, [...s.command, '--json'].filter((a) => a !== '--json' || s.command[0] === 'grade'), { ...env, GIT_TUNE_ENOSPC_AT: point });
    expectDiskFull(expect, full, repo.dir, point.startsWith('EDQUOT:'));
    if (s.command[0] === 'grade') expect(JSON.parse(full.stdout).error.code).toBe('disk-full');

    // Nothing half-written: git is consistent, no temporary file, the step is not there and the tree is as it was.
    expect(fsckProblems(repo)).toBe('');
    expect(tempFiles(repo.dir)).toEqual([]);
    expect(status(repo)).toBe(before.status);
    if (s.deterministic) expect(revOrNull(repo, BRANCH)).toBe(before.tip);

    // Space is back: `next` names the step again and the command completes it.
    const next = JSON.parse((await tuneOk(repo, ['next', '--json'], env)).stdout) as { command: string | null };
    expect(next.command ?? '').toContain(s.command.join(' '));
    await tuneOk(repo, s.command, env);
    expect(status(repo)).toBe(ref.status);
    if (s.deterministic) expect(revOrNull(repo, BRANCH)).toBe(ref.tip);
    else expect(repo.git('tag', '-l', 'tune/desk/*').trim()).toBe('tune/desk/batch01-nomem-run1');
    expect(tempFiles(repo.dir)).toEqual([]);
    expect(fsckProblems(repo)).toBe('');
  } finally {
    repo.cleanup();
  }
}

describe.concurrent('a full disk at each write point: exit 7, nothing half-written, the next command completes the step', () => {
  for (const s of SCENARIOS) {
    for (const point of s.points) {
      it(`${s.name}, disk full at ${point}`, ({ expect }) => fillAndRecover(expect, s, point, 'native'));
    }
    for (const point of s.iso ?? []) {
      it(`${s.name}, disk full at ${point}, isomorphic-git backend`, ({ expect }) => fillAndRecover(expect, s, point, 'iso'));
    }
  }

  it('covers every step write point', () => {
    const covered = new Set(SCENARIOS.flatMap((s) => [...s.points, ...(s.iso ?? [])]).map((p) => p.replace(/^EDQUOT:/, '').replace(/#\d+$/, '')));
    // The caches (state, code) only cost speed when they cannot be written: tested below. Not tested: result-set (final --shard).
    expect(ENOSPC_POINTS.filter((p) => !covered.has(p))).toEqual(['result-set', 'cache', 'code-cache']);
  });

  it('the caches only cost speed: the command succeeds and leaves no temporary file', async ({ expect }) => {
    const repo = TempRepo.copyOf(templates.drafted);
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-df-cc-'));
    try {
      // A fresh TMPDIR: the code cache is written by this run (and fails).
      const r = await tuneAsync(repo, ['status'], { TMPDIR: tmp, GIT_TUNE_ENOSPC_AT: 'cache,code-cache' });
      expect(r.code, r.stderr).toBe(0);
      expect(tempFiles(repo.dir)).toEqual([]);
      expect(tempFiles(tmp)).toEqual([]);
      expect(readdirSync(tmp).filter((n) => n.startsWith('git-tune-code-cache-'))).toHaveLength(1);
    } finally {
      repo.cleanup();
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a runner that fails with ENOSPC stops the run with exit 7, its case not kept; the next run runs it', async ({ expect }) => {
    const repo = TempRepo.copyOf(templates.planned);
    try {
      const full = await tuneAsync(repo, ['run'], { TMPDIR: scratchTmp, TEST_DISK_FULL: 'b' });
      expectDiskFull(expect, full, scratchTmp);
      expect(full.stderr).toContain('  - b: the runner ran out of disk space: Error: ENOSPC: no space left on device');
      // Case a may or may not have finished before the run stopped; b is never kept.
      const cases = repo.path('.git/tune/desk/runs/batch01-nomem-run1/cases');
      expect(existsSync(cases) ? readdirSync(cases).filter((f) => f.startsWith('b.')) : []).toEqual([]);
      expect(tempFiles(repo.dir)).toEqual([]);
      expect(fsckProblems(repo)).toBe('');
      const again = await tuneOk(repo, ['run'], { TMPDIR: scratchTmp });
      expect(again.stderr).toMatch(/b: right/);
      expect(JSON.parse(repo.git('show', 'tune/desk:.tune/desk/runs/batch01-nomem-run1/results.json')).map((r: { id: string; right: boolean }) => [r.id, r.right]).sort())
        .toEqual([['a', true], ['b', true]]);
      expect(status(repo)).toBe((await referenceOf(SCENARIOS[0]!)).status);
    } finally {
      repo.cleanup();
    }
  });
});
