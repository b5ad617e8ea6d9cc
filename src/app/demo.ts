import { existsSync, readFileSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../core/argv.js';
import { viewDifficult } from '../core/difficult.js';
import { isVoidRun, type RunState } from '../core/fold.js';
import { branchName, isFinalRun } from '../core/names.js';
import { answerTokens } from '../core/tuning-state.js';
import { usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { initRepo } from '../git/init.js';
import { openRepo } from '../git/open.js';
import type { AutoResult } from './auto.js';
import { loadTuning } from './tuning.js';
import { readmePath } from '../core/paths.js';

/**
 * `git tune demo [dir]`: the main job on the bundled example agent, in a new
 * repository: the example copied in and committed, `git tune init` as the
 * example's README says, `git tune auto` to the end, and a summary of what
 * happened. No network, no account.
 */
export const DEMO_TUNING = 'demo';

/**
 * `git tune init` as templates/example/README.md writes it. The dataset is
 * named by its full path: the import reads a relative one from the
 * process's working directory, and the demo runs in its own repository.
 */
export const demoInitArgs = (dir: string) => [
  'init', DEMO_TUNING, '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md',
  '--runner', 'node agent.mjs', '--judge', 'node judge.mjs', '--editor', 'node editor.mjs', '--dataset', path.join(dir, 'cases.yaml'),
];

export const DEMO_IDENTITY = { name: 'git-tune demo', email: 'demo@git-tune.invalid' };

/** The installed package's root: the nearest folder above this module whose package.json is git-tune's. */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = path.dirname(from);
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'git-tune') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`git-tune's package.json not found above ${from}`);
    dir = parent;
  }
}

export const exampleDir = () => path.join(packageRoot(), 'templates', 'example');

/** The folder the demo repository goes in: `dir` (new, or empty) or a new temp dir. */
export async function demoDir(cwd: string, dir: string | undefined): Promise<string> {
  if (dir === undefined) return fs.mkdtemp(path.join(os.tmpdir(), 'git-tune-demo-'));
  const full = path.resolve(cwd, dir);
  const stat = await fs.stat(full).catch(() => null);
  if (stat && !stat.isDirectory()) throw usageError('demo-dir-not-a-dir', `${full} is a file, not a folder`, 'git tune demo   # in a new temp dir');
  if (stat && (await fs.readdir(full)).length > 0) {
    throw usageError('demo-dir-not-empty', `${full} is not empty: the demo makes a new repository there`, `git tune demo ${path.join(dir, 'git-tune-demo')}   # or: git tune demo (a new temp dir)`);
  }
  await fs.mkdir(full, { recursive: true });
  return full;
}

/**
 * A new repository in `dir` holding the example agent, as one commit on
 * `main`. Without a git identity anywhere, a local one is set in it.
 */
export async function createDemoRepo(dir: string, env: Env): Promise<{ identitySet: boolean }> {
  await fs.cp(exampleDir(), dir, { recursive: true });
  return initRepo(dir, env, { branch: 'main', message: 'The example agent and its prose', fallbackIdentity: DEMO_IDENTITY });
}

export interface DemoBatch {
  batch: number;
  kind: string;
  cases: number;
  /** Verdicts of the no-memory runs, then of the with-memory runs, in order (VOID included). */
  nomem: string[];
  mem: string[];
  /** Tokens of the batch's passing no-memory run and of its passing with-memory run (same cases). */
  tokensWithout: number | null;
  tokensWith: number | null;
}

export interface DemoSummary {
  dir: string;
  tuning: string;
  outcome: string;
  message: string;
  seconds: number;
  batches: DemoBatch[];
  runs: { nomem: number; mem: number; final: number };
  edits: { made: number; confirmed: number; unconfirmed: number; pending: number; reverted: number };
  difficult: Array<{ id: string; reason: string; status: string; retries: number }>;
  tokens: { withoutMemory: number; withMemory: number; saving: number | null; total: number; costUsd: number };
  final: { verdict: string | null; right: number; cases: number; stuck: string[] } | null;
  look: string[];
}

const verdictOf = (r: RunState) => (isVoidRun(r) ? 'VOID' : r.grade?.verdict ?? (r.finished ? 'not graded' : 'unfinished'));
const lastPassed = (runs: RunState[]) => [...runs].reverse().find((r) => r.grade?.verdict === 'PASSED') ?? null;

/** What the demo's tuning went through, read back from its history. */
/**
 * `tune` is how the user's shell runs git-tune (`git tune`, or `node
 * '<entry>'` when it is not on PATH): the commands under "Where to look" are
 * printed to be run as they are.
 */
export async function summarizeDemo(dir: string, result: AutoResult, seconds: number, tune = 'git tune'): Promise<DemoSummary> {
  const tuning = await loadTuning(await openRepo(dir), DEMO_TUNING);
  const { state } = tuning;
  const batches: DemoBatch[] = state.batches.map((b) => {
    const nomem = b.runs.filter((r) => r.half === 'nomem');
    const mem = b.runs.filter((r) => r.half === 'mem');
    const passedNomem = lastPassed(nomem);
    const passedMem = lastPassed(mem);
    return {
      batch: b.plan.batch, kind: b.plan.kind, cases: b.plan.new.length + b.plan.recheck.length,
      nomem: nomem.map(verdictOf), mem: mem.map(verdictOf),
      tokensWithout: passedNomem ? answerTokens(passedNomem) : null, tokensWith: passedMem ? answerTokens(passedMem) : null,
    };
  });
  const paired = batches.filter((b) => b.tokensWithout !== null && b.tokensWith !== null);
  const withoutMemory = paired.reduce((s, b) => s + b.tokensWithout!, 0);
  const withMemory = paired.reduce((s, b) => s + b.tokensWith!, 0);
  const view = viewDifficult(state, tuning.config?.maxRetries ?? 3);
  const final = state.final[state.final.length - 1] ?? null;
  const count = (status: string) => state.edits.filter((e) => e.status === status).length;
  const readme = path.join(dir, readmePath(tuning.dir));
  return {
    dir,
    tuning: DEMO_TUNING,
    outcome: result.outcome,
    message: result.message,
    seconds,
    batches,
    runs: {
      nomem: batches.reduce((s, b) => s + b.nomem.length, 0),
      mem: batches.reduce((s, b) => s + b.mem.length, 0),
      final: state.final.length,
    },
    edits: { made: state.edits.length, confirmed: count('confirmed'), unconfirmed: count('unconfirmed'), pending: count('pending'), reverted: count('reverted') },
    difficult: view.map((e) => ({ id: e.id, reason: e.reason, status: e.status, retries: e.retries })),
    tokens: {
      withoutMemory, withMemory,
      saving: withoutMemory > 0 ? Math.round((1 - withMemory / withoutMemory) * 100) : null,
      total: state.usage.tokens, costUsd: state.usage.costUsd,
    },
    final: final && isFinalRun(final.name)
      ? { verdict: final.grade?.verdict ?? null, right: final.cases.length - (final.grade?.wrong.length ?? 0), cases: final.cases.length, stuck: view.filter((e) => e.status === 'stuck').map((e) => e.id) }
      : null,
    look: [
      `git -C ${shellQuote(dir)} log --oneline --decorate ${branchName(DEMO_TUNING)}`,
      ...(existsSync(readme) ? [readme] : []),
      `cd ${shellQuote(dir)} && ${tune} status`,
    ],
  };
}
