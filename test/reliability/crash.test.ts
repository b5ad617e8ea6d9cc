import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { fsckProblems, leftovers, revOrNull, TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo, stepsBetween, writeFinetuneFolder } from '../helpers/tuning.js';

/**
 * Issue 9, crash points: `git tune` is killed with SIGKILL (GIT_TUNE_CRASH_AT,
 * src/faults/crash.ts) at every write point of every committing command. After
 * each crash: `git fsck --strict` is clean, the branch holds the old step or
 * the new one (never part of it), and after the next command the working
 * tree, index, tags and .git/tune are exactly what an uninterrupted command
 * leaves; the step is then finished, with the very commits (ids and all) an
 * uninterrupted command writes wherever its output is deterministic.
 */
type Stage = 'selected' | 'planned' | 'drafted' | 'graded' | 'edited' | 'passed' | 'memPassed' | 'bare';

interface Scenario {
  name: string;
  stage: Stage;
  command: string[];
  points: string[];
  /** Work the user did before the command (not part of the template). */
  prepare?: (repo: TempRepo) => void;
  /** Same inputs, same commit ids (false for runs: run.json holds times). */
  deterministic: boolean;
  /** Whether `git tune next` names this command when the step is due (difficult and revert are the user's call). */
  fromNext?: boolean;
  branch?: string;
}

const BRANCH = 'refs/heads/tune/desk';
const commit = (step: string) => [`${step}:after-objects`, `${step}:after-ref`];

const writeEdit = (repo: TempRepo) => repo.write({
  'agents/prompt.md': 'Answer politely and precisely.\n',
  '.tune/desk/runs/batch01-nomem-run1/changes.md': '# Changes\n\nAims: c\n\n- say exactly what was asked\n',
});

const SCENARIOS: Scenario[] = [
  { name: 'batch (plan)', stage: 'selected', command: ['batch'], points: commit('plan'), deterministic: true },
  {
    name: 'run', stage: 'planned', command: ['run'], deterministic: false,
    points: [
      ...commit('run-start'), 'case:saved', 'case:saved#2', 'logs:after-objects', 'logs:after-ref',
      'run:after-objects', 'run:after-ref', 'run:after-tags', 'run:after-checkout',
    ],
  },
  { name: 'grade', stage: 'drafted', command: ['grade'], points: commit('grade'), deterministic: true },
  { name: 'difficult add', stage: 'graded', command: ['difficult', 'add', 'c', '--why', 'wrong', '--note', 'asks for an exact answer'], points: commit('difficult'), deterministic: true, fromNext: false },
  { name: 'edit', stage: 'graded', command: ['edit'], prepare: writeEdit, points: commit('edit'), deterministic: true },
  { name: 'revert', stage: 'edited', command: ['revert'], points: commit('revert'), deterministic: true, fromNext: false },
  { name: 'memory candidate', stage: 'passed', command: ['memory', 'candidate'], points: commit('candidate'), deterministic: true },
  { name: 'memory checkpoint', stage: 'memPassed', command: ['memory', 'checkpoint'], points: commit('checkpoint'), deterministic: true },
  {
    name: 'import', stage: 'bare', command: ['import', 'finetune'], deterministic: true, fromNext: false, branch: 'refs/heads/tune/finetune',
    points: ['import:after-objects', 'import:after-ref', 'import:after-tags', 'import:after-head'],
  },
];

export const CRASH_POINTS_COVERED = SCENARIOS.reduce((n, s) => n + s.points.length, 0);

const templates = {} as Record<Stage, TempRepo>;
const made: TempRepo[] = [];

async function chainA(): Promise<void> {
  const selected = await plannedRepo([plainCase('a'), plainCase('b'), plainCase('c', { checks: [{ type: 'equals', value: 'nope' }] })], { plan: false });
  templates.selected = selected;
  const planned = (templates.planned = TempRepo.copyOf(selected));
  await tuneOk(planned, ['batch']);
  const drafted = (templates.drafted = TempRepo.copyOf(planned));
  await tuneOk(drafted, ['run']);
  await tuneOk(drafted, ['grade', '--draft']);
  const graded = (templates.graded = TempRepo.copyOf(drafted));
  await tuneOk(graded, ['grade']);
  const edited = (templates.edited = TempRepo.copyOf(graded));
  writeEdit(edited);
  await tuneOk(edited, ['edit']);
}

async function chainB(): Promise<void> {
  const passed = (templates.passed = await plannedRepo([plainCase('a'), plainCase('b')]));
  await tuneOk(passed, ['run']);
  await tuneOk(passed, ['grade', '--draft']);
  await tuneOk(passed, ['grade']);
  const memPassed = (templates.memPassed = TempRepo.copyOf(passed));
  await tuneOk(memPassed, ['memory', 'candidate']);
  await tuneOk(memPassed, ['run']);
  await tuneOk(memPassed, ['grade', '--draft']);
  await tuneOk(memPassed, ['grade', '--verdict', 'PASSED']);
}

beforeAll(async () => {
  const bare = (templates.bare = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agent.js': 'console.log("{}")\n' }));
  writeFinetuneFolder(bare);
  await Promise.all([chainA(), chainB()]);
  for (const t of Object.values(templates)) made.push(t);
}, 180_000);

afterAll(() => {
  for (const r of made.splice(0)) r.cleanup();
});

interface Outcome {
  tip: string | null;
  steps: string[];
  status: string;
  tags: string;
  next: { kind: string; run: string | null; command: string | null };
  results?: string;
}

function outcomeOf(repo: TempRepo, s: Scenario, before: string | null, nextJson: string): Outcome {
  const tip = revOrNull(repo, s.branch ?? BRANCH);
  const next = JSON.parse(nextJson) as Outcome['next'];
  return {
    tip,
    steps: stepsBetween(repo, before, tip),
    status: repo.git('status', '--porcelain', '--untracked-files=all'),
    tags: repo.git('tag', '-l'),
    next: { kind: next.kind, run: next.run, command: next.command },
    ...(s.deterministic ? {} : {
      results: JSON.stringify(JSON.parse(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/results.json'), 'utf8'))
        .map((r: { id: string; right: boolean; tokens: number }) => [r.id, r.right, r.tokens])),
    }),
  };
}

const references = new Map<Scenario, Promise<Outcome>>();

/** What the command leaves when nothing interrupts it. */
function referenceOf(s: Scenario): Promise<Outcome> {
  let ref = references.get(s);
  if (!ref) {
    ref = (async () => {
      const repo = TempRepo.copyOf(templates[s.stage]);
      try {
        s.prepare?.(repo);
        const before = revOrNull(repo, s.branch ?? BRANCH);
        await tuneOk(repo, s.command);
        return outcomeOf(repo, s, before, (await tuneOk(repo, ['next', '--json'])).stdout);
      } finally {
        repo.cleanup();
      }
    })();
    references.set(s, ref);
  }
  return ref;
}

const withoutResume = (steps: string[]) => steps.filter((s) => !/^tune\(desk\): resume /.test(s));

/** Kills the command at `point`, then checks what it left and what the next command makes of it. */
async function crashAndRecover(expect: ExpectStatic, s: Scenario, point: string, env: Record<string, string> = {}): Promise<void> {
  const ref = await referenceOf(s);
  const repo = TempRepo.copyOf(templates[s.stage]);
  try {
    s.prepare?.(repo);
    const before = revOrNull(repo, s.branch ?? BRANCH);
    const crashed = await tuneAsync(repo, s.command, { ...env, GIT_TUNE_CRASH_AT: point });
    expect(crashed.signal, `the command never reached ${point}: exit ${crashed.code}\n${crashed.stderr}`).toBe('SIGKILL');

    // Right after the crash: git is consistent, and the branch holds whole steps only.
    expect(fsckProblems(repo)).toBe('');
    const landed = stepsBetween(repo, before, revOrNull(repo, s.branch ?? BRANCH));
    expect(ref.steps.slice(0, landed.length)).toEqual(landed);
    const complete = landed.length === ref.steps.length;
    if (/after-objects$|^case:|^logs:/.test(point)) expect(complete).toBe(false);
    else if (!point.startsWith('run-start')) expect(complete).toBe(true);

    // The next command finds its place (and finishes what lags behind); the step is then completed.
    const next = await tuneAsync(repo, ['next', '--json'], env);
    // Before an import lands there is no tuning yet for `next` to read.
    if (s.stage !== 'bare' || complete) expect(next.code, next.stderr).toBe(0);
    let nextJson = next.stdout;
    if (!complete) {
      if (s.fromNext !== false) expect(JSON.parse(next.stdout).command ?? '').toContain(s.command[0]!);
      await tuneOk(repo, s.command, env);
      // The very commits of an uninterrupted command (below) imply its `next`: only a run's are read again.
      nextJson = s.deterministic ? JSON.stringify(ref.next) : (await tuneOk(repo, ['next', '--json'], env)).stdout;
    }
    const after = outcomeOf(repo, s, before, nextJson);
    expect(after.status).toBe(ref.status);
    expect(after.tags).toBe(ref.tags);
    expect(after.next).toEqual(ref.next);
    if (s.deterministic) {
      expect(after.tip).toBe(ref.tip);
    } else {
      expect(withoutResume(after.steps)).toEqual(withoutResume(ref.steps));
      expect(after.results).toBe(ref.results);
    }
    expect(leftovers(repo)).toEqual([]);
    expect(fsckProblems(repo)).toBe('');
  } finally {
    repo.cleanup();
  }
}

describe.concurrent('a command killed at each write point leaves nothing lost and nothing half-made', () => {
  for (const s of SCENARIOS) {
    for (const point of s.points) {
      it(`${s.name} killed at ${point}`, ({ expect }) => crashAndRecover(expect, s, point));
    }
  }

  // The same with the isomorphic-git backend (the default is native git when it is on PATH).
  const ISO = new Set(['run-start:after-ref', 'run:after-tags', 'grade:after-ref', 'edit:after-objects', 'import:after-ref']);
  for (const s of SCENARIOS) {
    for (const point of s.points.filter((p) => ISO.has(p))) {
      it(`${s.name} killed at ${point}, isomorphic-git backend`, ({ expect }) => crashAndRecover(expect, s, point, { GIT_TUNE_BACKEND: 'iso' }));
    }
  }

  it('covers every committing command of issue 9', () => {
    expect(CRASH_POINTS_COVERED).toBeGreaterThanOrEqual(28);
  });
});
