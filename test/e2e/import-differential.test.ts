import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planNextBatch } from '../../src/app/batch.js';
import { nextFor, nextInputOf } from '../../src/app/decide.js';
import { renderConfig } from '../../src/app/config-file.js';
import { planImport } from '../../src/core/import/replay.js';
import { decideNext } from '../../src/core/next.js';
import { planBatch } from '../../src/core/plan.js';
import { parseConfig } from '../../src/app/config-file.js';
import type { Selection } from '../../src/contracts/files.js';
import { applyImport, planFolderImport, readFolder } from '../../src/app/import.js';
import { loadTuning } from '../../src/app/tuning.js';
import { openRepo } from '../../src/git/open.js';
import { generateFolderStates, type FolderState } from '../helpers/folder-method.js';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The proof of `git tune import` (docs/design.md, "Import"): on folder states
 * the folder method can reach, `git tune import` then `next` gives the kind
 * the folder method's `next.mjs` gives, and `batch --dry-run` plans the batch
 * its `batch.mjs next` plans (size, new and recheck ids in order).
 *
 * The states come from a seeded simulation of the method (test/helpers/
 * folder-method.ts). The seed's scripts are run from ../shared/seeds when it
 * is there; their answers are also checked in (test/fixtures/
 * folder-method-answers.json), so a clone without them still compares
 * against the same answers. `UPDATE_SEED_ANSWERS=1` rewrites the fixture.
 */
const run = promisify(execFile);
const SEEDS = path.resolve(ROOT, '../shared/seeds');
const FIXTURE = path.join(ROOT, 'test/fixtures/folder-method-answers.json');
const STATES = generateFolderStates(14, 14, 25);
/** With ../shared/seeds at hand, every LIVE_EVERY-th state is also asked of the scripts themselves, to keep the fixture honest. */
const LIVE_EVERY = 24;
/**
 * How each state is compared: every SAMPLE-th through the real CLI (import,
 * next --json, batch --dry-run --json), the ones halfway between with the
 * app's import and next functions on a repository, the rest with the pure
 * import plan and the pure decisions on the state it folds to: the same
 * functions without the writes, which would cost the suite minutes (every
 * second state on a repository took 6 minutes on the 2-core machine).
 */
const SAMPLE = 12;
const FLAGS = ['--prose', 'agents/**/*.md', '--runner', 'node agent.js'];

/** next.mjs's line → git-tune's kind. */
const KIND_OF_LINE: Array<[RegExp, string]> = [
  [/^build finetune\/dataset\.json/, 'dataset'],
  [/^write finetune\/config\.json/, 'config'],
  [/^choose the cases/, 'select'],
  [/: not run yet - /, 'run'],
  [/: the run never finished - /, 'resume'],
  [/: not graded yet - /, 'grade'],
  [/: void - .* the floor/, 'void-floor'],
  [/: void - .*run the same cases again/, 'void-rerun'],
  // "applied edits, which nothing has confirmed - run it again": git-tune's confirm (a re-run).
  [/: says PASSED but applied edits/, 'confirm'],
  [/: says PASSED but /, 'refused'],
  [/^edits applied - confirm them/, 'confirm'],
  [/: graded, nothing applied/, 'edit'],
  [/ has had 4 .* runs - stop tuning it/, 'stop-batch'],
  [/build the candidate memory/, 'candidate'],
  [/run it with memory/, 'mem-run'],
  [/keep its memory first/, 'checkpoint'],
  [/ - build batch \d+/, 'batch'],
  [/^build batch 1:/, 'batch'],
  [/run the final check/, 'final'],
  [/^done - /, 'done'],
  [/: not VERIFIED - /, 'final-failed'],
];

function kindOfLine(line: string): string {
  return KIND_OF_LINE.find(([re]) => re.test(line))?.[1] ?? `unknown: ${line}`;
}

interface SeedPlan {
  size: number;
  kind: string;
  new: string[];
  recheck: string[];
}

interface SeedAnswer {
  /** next.mjs's last line: the step. */
  next: string;
  /** batch.mjs next's plan.json, or null where it cannot plan (no selection, nothing left). */
  batch: SeedPlan | null;
}

interface Fixture {
  /** A hash of the generated states: the fixture answers exactly these. */
  states: string;
  answers: Record<string, SeedAnswer>;
}

const statesHash = createHash('sha256').update(JSON.stringify(STATES)).digest('hex').slice(0, 16);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-differential-'));

function writeState(state: FolderState): string {
  const root = path.join(tmp, state.id);
  const folder = path.join(root, 'finetune');
  for (const dir of state.dirs) mkdirSync(path.join(folder, dir), { recursive: true });
  mkdirSync(folder, { recursive: true });
  for (const [rel, content] of Object.entries(state.files)) {
    mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
    writeFileSync(path.join(folder, rel), content);
  }
  return root;
}

/** Runs the seed's scripts on a state: they chdir four levels up from their own folder, so they sit where the method installs them. */
async function seedAnswer(root: string, state: FolderState): Promise<SeedAnswer> {
  const scripts = path.join(root, '.github/skills/zen-finetune/scripts');
  mkdirSync(scripts, { recursive: true });
  for (const f of ['next.mjs', 'batch.mjs']) copyFileSync(path.join(SEEDS, f), path.join(scripts, f));
  const next = await run(process.execPath, [path.join(scripts, 'next.mjs')], { cwd: root });
  const lines = next.stdout.trim().split('\n');
  let batch: SeedPlan | null = null;
  if (state.files['selection.json'] !== undefined) {
    const out = path.join(root, 'seed-plan', 'cases.json');
    try {
      await run(process.execPath, [path.join(scripts, 'batch.mjs'), 'next', '-o', out], { cwd: root });
      const plan = JSON.parse(readFileSync(path.join(root, 'seed-plan', 'plan.json'), 'utf8')) as SeedPlan;
      batch = { size: plan.size, kind: plan.kind, new: plan.new, recheck: plan.recheck };
    } catch {
      batch = null; // nothing left to plan: batch.mjs says so and exits 1
    }
  }
  return { next: lines[lines.length - 1]!, batch };
}

async function inPool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let at = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (at < items.length) await work(items[at++]!);
  }));
}

interface Ours {
  kind: string;
  batch: SeedPlan | null;
}

const answers = new Map<string, SeedAnswer>();
const roots = new Map<string, string>();
const repos: TempRepo[] = [];

beforeAll(async () => {
  for (const state of STATES) roots.set(state.id, writeState(state));
  const live = existsSync(path.join(SEEDS, 'next.mjs')) && existsSync(path.join(SEEDS, 'batch.mjs'));
  const fixture = existsSync(FIXTURE) ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture) : null;
  const update = process.env.UPDATE_SEED_ANSWERS === '1' || fixture === null;
  if (update) {
    expect(live, 'writing the seed answers needs ../shared/seeds').toBe(true);
    await inPool(STATES, 3, async (state) => {
      answers.set(state.id, await seedAnswer(roots.get(state.id)!, state));
    });
    const fresh: Fixture = { states: statesHash, answers: Object.fromEntries(STATES.map((s) => [s.id, answers.get(s.id)!])) };
    writeFileSync(FIXTURE, `${JSON.stringify(fresh, null, 1)}\n`);
    return;
  }
  const stale = 'the checked-in seed answers are stale: UPDATE_SEED_ANSWERS=1 npx vitest run test/e2e/import-differential.test.ts';
  expect(fixture.states, stale).toBe(statesHash);
  for (const [id, answer] of Object.entries(fixture.answers)) answers.set(id, answer);
  if (live) {
    // The scripts themselves, on a sample: each state costs two Node starts.
    const sample = STATES.filter((_, i) => i % LIVE_EVERY === 0);
    await inPool(sample, 3, async (state) => {
      expect(await seedAnswer(roots.get(state.id)!, state), `${stale} (${state.id})`).toEqual(answers.get(state.id));
    });
  }
}, 300_000);

afterAll(() => {
  for (const r of repos) r.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

const withConfig = (state: FolderState) => state.files['config.json'] !== undefined;

let shared: TempRepo | null = null;

/** import + next + the batch plan, in-process: each state its own tuning in one repository (HEAD back on main between them). */
async function oursInProcess(state: FolderState): Promise<Ours> {
  if (!shared) {
    shared = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    repos.push(shared);
  }
  const r = shared;
  r.git('symbolic-ref', 'HEAD', 'refs/heads/main');
  const name = `s-${state.id}`;
  const cwd = roots.get(state.id)!;
  const ctx = { env: r.env, now: new Date('2026-01-01T00:00:00Z') };
  const repo = await openRepo(r.dir, r.env);
  const input = await readFolder(path.join(cwd, 'finetune'), cwd);
  const plan = planFolderImport(input, name, withConfig(state) ? { prose: ['agents/**/*.md'], runner: { command: ['node', 'agent.js'] } } : {});
  await applyImport(repo, plan, ctx);
  const tuning = await loadTuning(repo, name);
  const step = nextFor(tuning);
  const planned = tuning.config && tuning.selection ? planNextBatch(tuning) : null;
  return { kind: step.kind, batch: planned && { size: planned.size, kind: planned.kind, new: planned.new, recheck: planned.recheck } };
}

/** The pure import plan, and next and the batch plan decided on the state it folds to. */
async function oursPure(state: FolderState): Promise<Ours> {
  const cwd = roots.get(state.id)!;
  const input = await readFolder(path.join(cwd, 'finetune'), cwd);
  const plan = planImport(input, { tuning: 'finetune', flags: withConfig(state) ? { prose: ['agents/**/*.md'], runner: { command: ['node', 'agent.js'] } } : {}, renderConfig });
  expect(plan.problems).toEqual([]);
  const file = (suffix: string) => plan.steps.flatMap((s) => s.files).findLast(([p]) => p.endsWith(suffix))?.[1];
  const config = parseConfig(file('/config.yaml')!, 'config.yaml').config;
  const selectionText = file('/selection.json');
  const selection = selectionText === undefined ? null : (JSON.parse(selectionText) as Selection);
  const input2 = nextInputOf({ state: plan.state, config, selection, dir: plan.dir });
  const step = decideNext(input2);
  const planned = selection ? planBatch({ state: plan.state, selection: input2.selection, complexity: input2.complexity, settings: config }) : null;
  return { kind: step.kind, batch: planned && { size: planned.size, kind: planned.kind, new: planned.new, recheck: planned.recheck } };
}

let project: TempRepo | null = null;

/** The same through the real CLI, in a new repository holding the project (a copy of one made once). */
async function oursByCli(state: FolderState): Promise<Ours> {
  if (!project) {
    project = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    repos.push(project);
  }
  const r = TempRepo.copyOf(project);
  repos.push(r);
  const imported = await tuneAsync(r, ['import', path.join(roots.get(state.id)!, 'finetune'), '--json', ...(withConfig(state) ? FLAGS : [])]);
  if (imported.code !== 0) throw new Error(`import of ${state.id} exited ${imported.code}: ${imported.stderr}`);
  const next = JSON.parse((await tuneOk(r, ['next', '--json'])).stdout) as { kind: string };
  expect(JSON.parse(imported.stdout).next.kind).toBe(next.kind);
  const dry = await tuneAsync(r, ['batch', '--dry-run', '--json']);
  const plan = dry.code === 0 ? (JSON.parse(dry.stdout) as SeedPlan) : null;
  expect(r.fsck()).toBe('');
  r.cleanup();
  return { kind: next.kind, batch: plan && { size: plan.size, kind: plan.kind, new: plan.new, recheck: plan.recheck } };
}

/**
 * The states compared through the CLI, started at once, CLI_LANES at a time:
 * their child processes work while this process decides the other states.
 */
const CLI_LANES = 2;
function startCliStates(states: readonly FolderState[]): Map<string, Promise<Ours>> {
  const started = new Map<string, Promise<Ours>>();
  const lanes: Array<Promise<unknown>> = Array.from({ length: CLI_LANES }, () => Promise.resolve());
  states.forEach((state, k) => {
    const ours = lanes[k % CLI_LANES]!.then(() => oursByCli(state));
    ours.catch(() => {}); // awaited, and so reported, in state order below
    lanes[k % CLI_LANES] = ours.catch(() => {});
    started.set(state.id, ours);
  });
  return started;
}

/** A run folder of the latest batch that has not run to its end (no batch/batch.json). */
function waitingRun(state: FolderState): boolean {
  const runs = new Set(Object.keys(state.files).map((f) => /^runs\/(batch\d+-(?:nomem|mem)-run\d+)\//.exec(f)?.[1]).filter((x): x is string => !!x));
  const last = Math.max(0, ...[...runs].map((r) => Number(/^batch(\d+)/.exec(r)![1])));
  return [...runs].some((r) => Number(/^batch(\d+)/.exec(r)![1]) === last && state.files[`runs/${r}/batch/batch.json`] === undefined);
}

describe('git tune import decides as the folder method does', () => {
  it(`covers every kind next.mjs prints (${STATES.length} states)`, () => {
    expect(STATES.length).toBeGreaterThanOrEqual(300);
    const kinds = new Set(STATES.map((s) => kindOfLine(answers.get(s.id)!.next)));
    expect([...kinds].filter((k) => k.startsWith('unknown'))).toEqual([]);
    expect([...kinds].sort()).toEqual([
      'batch', 'candidate', 'checkpoint', 'config', 'confirm', 'dataset', 'done', 'edit', 'final', 'final-failed',
      'grade', 'mem-run', 'refused', 'resume', 'run', 'select', 'stop-batch', 'void-floor', 'void-rerun',
    ]);
  });

  it('the simulation lays out each batch as batch.mjs plans it, so its folders are ones the method reaches', () => {
    let checked = 0;
    STATES.forEach((state, i) => {
      const m = /^batch (\d+) planned$/.exec(state.label);
      if (!m) return;
      const written = JSON.parse(state.files[`runs/batch${m[1]!.padStart(2, '0')}-nomem-run1/plan.json`]!) as SeedPlan;
      const seed = answers.get(STATES[i - 1]!.id)!.batch;
      expect({ size: written.size, kind: written.kind, new: written.new, recheck: written.recheck }, state.id).toEqual(seed);
      checked += 1;
    });
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it('next: the kind next.mjs gives, and the batch batch.mjs plans, on every state', async () => {
    const byKind = new Map<string, { agree: number; differ: string[] }>();
    const batchDiffers: string[] = [];
    let batchCompared = 0;
    let forecasts = 0;
    const byCli = startCliStates(STATES.filter((_, i) => i % SAMPLE === 0));
    for (const [i, state] of STATES.entries()) {
      const seed = answers.get(state.id)!;
      const want = kindOfLine(seed.next);
      const ours = i % SAMPLE === 0 ? await byCli.get(state.id)! : i % SAMPLE === SAMPLE / 2 ? await oursInProcess(state) : await oursPure(state);
      const tally = byKind.get(want) ?? { agree: 0, differ: [] };
      if (ours.kind === want) tally.agree += 1;
      else tally.differ.push(`${state.id} (${state.label}): next.mjs "${seed.next}" = ${want}, git-tune ${ours.kind}`);
      byKind.set(want, tally);
      if (seed.batch !== null) {
        batchCompared += 1;
        // batch.mjs counts a run folder that has not run (laid out, or never finished) toward the growth
        // rule; git-tune counts runs that ran (docs/design.md, "Import"). Only a forecast can see one:
        // no batch is due while a run of the batch before it waits.
        if (JSON.stringify(ours.batch) === JSON.stringify(seed.batch)) continue;
        if (waitingRun(state)) {
          forecasts += 1;
          continue;
        }
        {
          batchDiffers.push(`${state.id} (${state.label}): batch.mjs ${JSON.stringify(seed.batch)}, git-tune ${JSON.stringify(ours.batch)}`);
        }
      }
    }
    const table = [...byKind].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, t]) => `${k}: ${t.agree}/${t.agree + t.differ.length}`);
    console.log(`agreement by kind: ${table.join(', ')}; batch plans ${batchCompared - forecasts - batchDiffers.length}/${batchCompared} (${forecasts} differ only as forecasts while a run of the batch before waits)`);
    expect([...byKind.values()].flatMap((t) => t.differ)).toEqual([]);
    expect(batchDiffers).toEqual([]);
  }, 600_000);
});
