import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TempRepo } from '../helpers/repo.js';
import { cachePath } from '../../src/core/paths.js';
import { nextFor, nextInputFor } from '../../src/app/decide.js';
import { loadTuning, readHistory } from '../../src/app/tuning.js';
import { foldHistory } from '../../src/core/fold.js';
import { decideNext } from '../../src/core/next.js';
import { matcher } from '../../src/core/glob.js';
import { CONFIG_FILE } from '../../src/core/paths.js';
import { formatStep } from '../../src/core/steps.js';
import { IsoGitRepo } from '../../src/git/iso.js';
import { NativeGitRepo } from '../../src/git/native-repo.js';

/**
 * The fold's cache in .git/tune/<name>/cache (src/app/cache.ts) must never
 * serve a stale state: after every move of the branch (a new step, a config
 * or selection change, a rewind, a rewrite, a damaged cache file) the state
 * equals the fold of the whole history read afresh. And it must earn its
 * keep: a warm load walks nothing, a moved tip walks only the new commits.
 */
const NAME = 'desk';
const BRANCH = `refs/heads/tune/${NAME}`;
const DIR = `.tune/${NAME}`;
const person = { name: 'Tune Tester', email: 'tester@example.com', timestamp: 1767225600, timezoneOffset: 0 };
const SELECTION = (ids: string[]) => `${JSON.stringify({ seed: 1, limit: ids.length, total: 4, datasetRev: 'r1', ids, complex: [] })}\n`;
const CONFIG = (prose: string) => `prose:\n  - '${prose}'\nrunner:\n  command: [node, agent.js]\n`;

type Repo = InstanceType<typeof NativeGitRepo> | InstanceType<typeof IsoGitRepo>;
type Change = { content: string } | null;

/** Counts what a load takes from git: walked commits and changed-path diffs. */
function counting(repo: Repo) {
  const seen = { walked: 0, diffs: 0 };
  const proxy = new Proxy(repo, {
    get(target, key, receiver) {
      if (key === 'firstParentLog') {
        // Counted as the load takes them: how far it walked, not how far a page read ahead.
        return async function* (tip: string, opts?: { short?: boolean }) {
          for await (const page of target.firstParentLog(tip, opts)) {
            for (const entry of page) {
              seen.walked++;
              yield [entry];
            }
          }
        };
      }
      if (key === 'changedPaths') {
        return (oid: string) => {
          seen.diffs++;
          return target.changedPaths(oid);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { repo: proxy as Repo, seen };
}

describe.each([
  ['native', (dir: string) => new NativeGitRepo(dir, `${dir}/.git`)],
  ['iso', (dir: string) => new IsoGitRepo(dir, `${dir}/.git`)],
] as const)('the fold cache (%s backend)', (_name, make) => {
  let repo: TempRepo;
  let git: Repo;
  let tip: string;

  const commit = async (message: string, changes: Record<string, Change> = {}) => {
    const oid = await git.writeCommit({ parent: tip, changes: new Map(Object.entries(changes)), message, author: person, committer: person });
    await git.compareAndSwapRef(BRANCH, oid, tip);
    tip = oid;
    return oid;
  };
  const step = (data: Record<string, unknown>, subject: string, changes: Record<string, Change> = {}) =>
    commit(formatStep({ tuning: NAME, difficult: [], ...data } as never, subject), changes);

  /** What a load must equal: the whole history read and folded with no cache. */
  const fresh = async () => {
    const config = Buffer.from((await git.readBlobAt(tip, `${DIR}/config.yaml`))!).toString();
    const prose = /- '(.*)'/.exec(config)![1]!;
    const selection = JSON.parse(Buffer.from((await git.readBlobAt(tip, `${DIR}/selection.json`))!).toString()) as { ids: string[] };
    const commits = await readHistory(git, NAME, tip, matcher([prose]));
    return { commits, state: foldHistory(NAME, commits, selection.ids) };
  };
  const load = async () => {
    const { repo: counted, seen } = counting(git);
    const tuning = await loadTuning(counted, NAME);
    const expected = await fresh();
    expect(tuning.tip).toBe(tip);
    // `next` is kept per tip (memo.json): it must be what the fresh state decides.
    expect(nextFor(tuning)).toEqual(decideNext(nextInputFor({ ...tuning, state: expected.state })));
    expect(tuning.state).toEqual(expected.state);
    expect(tuning.commits).toEqual(expected.commits);
    return { tuning, seen };
  };

  beforeAll(async () => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'docs/notes.md': 'notes\n' });
    git = make(repo.dir);
    tip = (await git.resolveRef('refs/heads/main'))!;
    const init = await git.writeCommit({
      parent: tip, message: formatStep({ step: 'init', tuning: NAME, difficult: [] }, `tune(${NAME}): init`),
      changes: new Map([[`${DIR}/config.yaml`, { content: CONFIG('agents/**') }]]), author: person, committer: person,
    });
    await git.compareAndSwapRef(BRANCH, init, null);
    tip = init;
    await step({ step: 'dataset', cases: 4, rev: 'r1' }, 'dataset');
    await step({ step: 'select', selected: 4, total: 4 }, 'select', { [`${DIR}/selection.json`]: { content: SELECTION(['a', 'b', 'c', 'd']) } });
    await step({ step: 'plan', batch: 1, size: 2, kind: 'new', new: ['a', 'b'], recheck: [] }, 'plan 1');
    await step({ step: 'run-start', run: 'batch01-nomem-run1', concurrency: 2 }, 'start');
    await step({ step: 'run', run: 'batch01-nomem-run1', concurrency: 2, cases: 2, void: null, stopped: null, tokens: 10, costUsd: 0 }, 'run');
    await step({ step: 'grade', run: 'batch01-nomem-run1', verdict: 'MIXED', wrong: ['b'], review: false }, 'grade');
    // A hand commit that is not prose under the first config (docs/ is not agents/).
    await commit('hand: notes\n', { 'docs/notes.md': { content: 'more notes\n' } });
  });
  afterAll(() => repo.cleanup());

  it('reads config.yaml where core/paths.ts says it is', () => {
    expect(CONFIG_FILE).toBe('config.yaml'); // src/app/tuning.ts takes its path from there, without importing the YAML parser
  });

  it('a cold load walks to the init commit and writes the cache inside .git, where git does not look', async () => {
    const { tuning, seen } = await load();
    expect(seen.walked).toBe(8);
    expect(seen.diffs).toBe(1);
    expect(tuning.state.edits).toEqual([]);
    expect(existsSync(`${cachePath(git.gitdir, NAME)}/history.bin`)).toBe(true);
    expect(repo.git('status', '--porcelain', '--ignored')).not.toContain('.git');
  });

  it('a warm load reads nothing of git, and a kept `next` needs no state', async () => {
    const { seen } = await load();
    expect(seen).toEqual({ walked: 0, diffs: 0 });
    const tuning = await loadTuning(git, NAME);
    const state = Object.getOwnPropertyDescriptor(tuning, 'state')!;
    expect(state.get).toBeTypeOf('function'); // read from the cache file only when used
    expect(nextFor(tuning).kind).toBe('edit');
    // A copy with another state is decided afresh, never from the memo.
    const copy = { ...tuning, state: foldHistory(NAME, (await fresh()).commits.slice(0, 4)) };
    expect(nextFor(copy).kind).not.toBe('edit');
  });

  it('after a new step, walks only to the cached tip and folds the new commits on top', async () => {
    await step({ step: 'edit', run: 'batch01-nomem-run1', aims: ['b'] }, 'edit', { 'agents/prompt.md': { content: 'Answer politely, in one line.\n' } });
    await step({ step: 'run-start', run: 'batch01-nomem-run2', concurrency: 2 }, 'start 2');
    const { tuning, seen } = await load();
    expect(seen).toEqual({ walked: 3, diffs: 0 }); // two new commits and the cached tip it stops at
    expect(tuning.state.edits.map((e) => e.status)).toEqual(['pending']);
  });

  it('after config.yaml changes the prose globs, an old hand commit becomes an edit without another diff', async () => {
    await step({ step: 'config', keys: ['prose'] }, 'config prose', { [`${DIR}/config.yaml`]: { content: CONFIG('{agents,docs}/**') } });
    const { tuning, seen } = await load();
    expect(seen).toEqual({ walked: 2, diffs: 0 });
    expect(tuning.state.edits.filter((e) => e.hand)).toHaveLength(1);
  });

  it('after selection.json changes, the final check covers the new selection', async () => {
    await step({ step: 'select', selected: 3, total: 4 }, 'select again', { [`${DIR}/selection.json`]: { content: SELECTION(['a', 'b', 'c']) } });
    await step({ step: 'run-start', run: 'final-check', concurrency: 2 }, 'final');
    const { tuning, seen } = await load();
    expect(seen.walked).toBe(3);
    expect(tuning.state.final[0]!.cases).toEqual(['a', 'b', 'c']);
  });

  it('after a rewind or a rewrite of the branch, it rebuilds', async () => {
    const rewound = repo.git('rev-parse', 'tune/desk~3').trim();
    await git.compareAndSwapRef(BRANCH, rewound, tip);
    tip = rewound;
    const back = await load();
    expect(back.seen.walked).toBe(back.tuning.state.commits); // the old tip is not on this line: walked to init
    expect(back.tuning.state.final).toEqual([]);
    // A different commit where the cached tip's parent was: same length, other content.
    const parent = repo.git('rev-parse', 'tune/desk~1').trim();
    await git.compareAndSwapRef(BRANCH, parent, tip);
    tip = parent;
    await step({ step: 'grade', run: 'batch01-nomem-run1', verdict: 'REGRESSION', wrong: ['a', 'b'], review: false }, 'regrade');
    const rewritten = await load();
    expect(rewritten.seen.walked).toBe(rewritten.tuning.state.commits);
  });

  it('appends a segment per step, and past 64 writes the commits back as one, the state always right', async () => {
    for (let i = 0; i < 66; i++) {
      await step({ step: 'note' }, `note ${i}`);
      if (i === 10) {
        expect((await load()).seen.walked).toBe(2); // state and commits read back across segments
        continue;
      }
      const { repo: counted, seen } = counting(git);
      await loadTuning(counted, NAME);
      expect(seen.walked).toBe(2);
    }
    expect((await load()).seen.walked).toBe(0);
  });

  it('a damaged cache file is rebuilt, never trusted', async () => {
    const file = `${cachePath(git.gitdir, NAME)}/history.bin`;
    writeFileSync(file, 'git-tune-history\n\u0000\u0000\u0000\u0010garbage garbage garbage');
    const { seen } = await load();
    expect(seen.walked).toBeGreaterThan(5);
    expect((await load()).seen.walked).toBe(0);
    expect(repo.fsck()).toBe('');
  });
});
