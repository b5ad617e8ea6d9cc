import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { processesFor, recordedGroups, sameGroupAlive, signalGroup, sleep, startGroup, type Group } from '../helpers/group.js';
import { fsckProblems, TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits, templateAsync, yamlCases } from '../helpers/tuning.js';
import { seededRandom } from '../helpers/random.js';

/**
 * A kill at any instant is resumed by the next command alone. `git tune
 * auto` is killed with SIGKILL of its whole process group (as the OOM killer
 * or a closed terminal does) at seeded random instants, early (cases
 * running, judge running, editor running, inside a commit, inside a memory
 * checkpoint), and started again at once, again and again; then one last
 * auto runs to the end. Every trajectory reaches done with no manual step,
 * no run recorded twice, no VOID, `git fsck` clean, and no process of a
 * killed auto left (its runners run in groups of their own: the next auto
 * ends them). On two agents: the bundled example and the quiz fixture.
 * An instant is a random number of the points auto passes (GIT_TUNE_MARKS:
 * its progress, whatever the machine's load) plus a random delay; some are
 * exact: the auto pauses at a commit point (GIT_TUNE_PAUSE_AT) and is killed
 * there. Trajectories run side by side.
 */
const KILLS = Number(process.env.KILL_TEST_KILLS ?? 100);
const TRAJECTORIES = 10; // at least; alternating agents
const PARALLEL = 4;
const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

const rng = seededRandom;

const eq = (value: string) => [{ type: 'equals', value }];
const QUIZ_CASES = [
  { id: 'q-01', class: 'capitals', input: 'capital of france', checks: eq('Paris') },
  { id: 'q-02', class: 'shouting', input: 'shout yes', checks: eq('SHOUT YES') },
  { id: 'q-03', class: 'capitals', input: 'capital of spain', checks: eq('Madrid') },
];

async function buildQuiz(): Promise<TempRepo> {
  const repo = new TempRepo('git-tune-kill-quiz-');
  repo.git('init', '-q', '-b', 'main');
  for (const f of ['agent.mjs', 'overfit-editor.mjs', 'agents']) cpSync(path.join(ROOT, 'test/fixtures/quiz', f), repo.path(f), { recursive: true });
  repo.write({ 'cases.yaml': yamlCases(QUIZ_CASES) });
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'the quiz agent');
  await tuneOk(repo, ['init', 'quiz', '--prose', 'agents/**/*.md', '--runner', 'node agent.mjs', '--editor', 'node overfit-editor.mjs', '--dataset', 'cases.yaml']);
  for (const [k, v] of [['limit', '2'], ['minBatch', '2'], ['maxBatch', '2'], ['concurrency', '2'], ['maxRetries', '1']] as const) await tuneOk(repo, ['config', 'set', k, v]);
  return repo;
}

const AGENTS = {
  example: { tuning: 'demo', make: async () => exampleRepo({ demo: { limit: '2', minBatch: '2', concurrency: '2', maxRetries: '1' } }, 'git-tune-kill-') },
  quiz: { tuning: 'quiz', make: async () => TempRepo.copyOf(await templateAsync('kill-quiz', buildQuiz), 'git-tune-kill-quiz-') },
} as const;

/** Commit points an instant may be pinned to (the auto pauses there and is killed). */
const PINNED = ['checkpoint:after-objects', 'candidate:after-ref', 'grade:after-ref', 'run:after-objects', 'run-start:after-ref', 'edit:after-objects', 'case:saved'];

/** Where the killed auto was: a process it ran, else the last point it passed (inside a commit: between its begin and its end). */
function phaseOf(groups: Array<{ command: string }>, marks: string[]): string {
  const running = groups.map((g) => (/agent\.mjs/.test(g.command) ? 'cases running' : /judge/.test(g.command) ? 'judge running' : /editor/.test(g.command) ? 'editor running' : 'other process'));
  if (running.length > 0) return [...new Set(running)].sort().join('+');
  const last = marks.at(-1);
  if (!last) return 'starting';
  const [step, at] = last.split(':');
  if (at === 'after-checkout' || step === 'case' || step === 'logs') return `after ${last}`;
  return step === 'checkpoint' ? 'inside a memory checkpoint' : `inside a commit (${step})`;
}

interface Trajectory {
  kills: number;
  phases: string[];
  orphans: Group[];
}

/** Thrown by a trajectory that stopped because another one failed (that failure is the one reported). */
class Abandoned extends Error {}

async function trajectory(agent: keyof typeof AGENTS, seed: number, kills: number, abandoned: () => boolean): Promise<Trajectory> {
  const { tuning, make } = AGENTS[agent];
  const repo = await make();
  cleanup.push(() => repo.cleanup());
  const random = rng(seed);
  const out: Trajectory = { kills: 0, phases: [], orphans: [] };
  const marks = path.join(repo.dir, '..', `${path.basename(repo.dir)}.marks`);
  const pause = path.join(repo.dir, '..', `${path.basename(repo.dir)}.pause`);
  cleanup.push(() => rmSync(marks, { force: true }), () => rmSync(pause, { force: true }));
  // Stopped early, no next auto ends the killed one's runners (own groups): they are ended here, before their folder goes.
  const abandon = () => {
    for (const g of out.orphans) if (sameGroupAlive(g)) signalGroup(g.pgid, 'SIGKILL');
    return new Abandoned();
  };
  for (let k = 0; k < kills; k++) {
    if (abandoned()) throw abandon();
    rmSync(marks, { force: true });
    rmSync(pause, { force: true });
    // Each trajectory's first kill is pinned to one commit point in turn, so every point (a memory checkpoint among them) is hit on every run of the test; the rest are drawn.
    const drawn = random() < 0.3 ? PINNED[Math.floor(random() * PINNED.length)]! : null;
    const pinned = k === 0 ? PINNED[(seed - 1000) % PINNED.length]! : drawn;
    const env: Record<string, string> = { GIT_TUNE_MARKS: marks, ...(pinned ? { GIT_TUNE_PAUSE_AT: pinned, GIT_TUNE_PAUSE_FILE: pause } : {}) };
    const auto = startGroup(repo, ['auto', '--plain'], env);
    let ended = false;
    // A spawn that fails (its folder gone) rejects: it ends the wait too, and is reported where done is awaited.
    auto.done.then(() => (ended = true), () => (ended = true));
    // The instant: after a random number of the points auto passes (its progress, whatever the machine's load), plus a random delay.
    const passed = k === 0 ? Number.MAX_SAFE_INTEGER : Math.floor(random() * 24);
    const extra = Math.floor(random() * 400);
    const count = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').length - 1 : 0);
    const giveUp = Date.now() + (k === 0 ? 240_000 : 60_000);
    while (!ended && count() < passed && Date.now() < giveUp && !(pinned && existsSync(pause))) await sleep(10);
    const at = Date.now() + extra;
    while (!ended && Date.now() < at && !(pinned && existsSync(pause))) await sleep(10);
    if (ended) {
      const r = await auto.done;
      if (r.code === 0 && /: done: /.test(r.stdout)) break; // reached done before this kill
      throw new Error(`auto ended on its own (exit ${r.code}) before kill ${k}: ${r.stderr.slice(-2000)}\n${r.stdout.slice(-2000)}`);
    }
    const groups = recordedGroups(repo, tuning);
    signalGroup(auto.pgid, 'SIGKILL');
    await auto.done;
    out.kills++;
    out.phases.push(phaseOf(groups, existsSync(marks) ? readFileSync(marks, 'utf8').trim().split('\n').filter(Boolean) : []));
    out.orphans.push(...groups.map(({ pgid, start }) => ({ pgid, start })));
  }
  // The last auto, never killed: it carries on from whatever the kills left, to done.
  if (abandoned()) throw abandon();
  const r = await tuneAsync(repo, ['auto', '--plain']);
  expect(r.code, `${agent} #${seed}: ${r.stderr.slice(-3000)}`).toBe(0);
  expect(r.stdout).toMatch(/: done: /);
  for (const g of out.orphans) expect(sameGroupAlive(g), `orphan group ${g.pgid}`).toBe(false);
  expect(processesFor(repo.dir)).toEqual([]);
  const steps = stepCommits(repo, `tune/${tuning}`);
  const runs = steps.filter((s) => s.step === 'run').map((s) => s.run);
  expect(runs.length, runs.join(' ')).toBe(new Set(runs).size);
  expect(steps.map((s) => s.subject).join('\n')).not.toMatch(/VOID|out of memory/);
  expect(fsckProblems(repo)).toBe('');
  return out;
}

describe('SIGKILL of the whole group at any instant of auto', () => {
  it(`${KILLS} kills on two agents: every trajectory reaches done, nothing twice, no orphan, fsck clean`, async () => {
    // Trajectories start, alternating agents, until the kills add up (one that reaches done early stops there).
    const per = Math.ceil(KILLS / TRAJECTORIES);
    const results: Trajectory[] = [];
    let started = 0;
    let planned = 0;
    // The first failure stops the other trajectories at their next kill, and is thrown once all have ended:
    // none may still spawn an auto in a folder afterAll removes (spawn ENOENT, an unhandled rejection).
    const failures: unknown[] = [];
    await Promise.all(Array.from({ length: PARALLEL }, async () => {
      while (planned < KILLS && failures.length === 0) {
        const i = started++;
        planned += per;
        try {
          const t = await trajectory(i % 2 === 0 ? 'example' : 'quiz', 1000 + i, per, () => failures.length > 0);
          planned -= per - t.kills;
          results.push(t);
        } catch (error) {
          if (!(error instanceof Abandoned)) failures.push(error);
          return;
        }
      }
    }));
    if (failures.length > 0) throw failures[0];
    const kills = results.reduce((n, t) => n + t.kills, 0);
    const phases = new Map<string, number>();
    for (const p of results.flatMap((t) => t.phases)) phases.set(p, (phases.get(p) ?? 0) + 1);
    process.stderr.write(`kill-anywhere: ${kills} SIGKILLs tried, ${phases.size} distinct phases: ${[...phases].map(([p, n]) => `${p} ×${n}`).join(', ')}\n`);
    expect(kills).toBeGreaterThanOrEqual(Math.min(KILLS, 100));
    for (const phase of ['cases running', 'inside a commit', 'inside a memory checkpoint']) {
      expect([...phases.keys()].some((p) => p.includes(phase)), `${phase} in ${[...phases.keys()].join(', ')}`).toBe(true);
    }
  }, 900_000);
});
