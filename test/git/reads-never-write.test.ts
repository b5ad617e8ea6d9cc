import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTuning, startTuning } from '../../src/app/tuning.js';
import { openRepo } from '../../src/git/open.js';
import type { TempRepo } from '../helpers/repo.js';
import { tuneAsync } from '../helpers/cli.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Reading a tuning writes nothing: a step a killed command left half-applied
 * is finished where a command starts (`startTuning`), not by `loadTuning`.
 */
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

describe('reads never write', () => {
  it('loadTuning leaves an interrupted step as it is; startTuning finishes it once and says so', async () => {
    const repo = await plannedRepo([plainCase('a'), plainCase('b')], { plan: false });
    repos.push(repo);
    const crashed = await tuneAsync(repo, ['batch'], { GIT_TUNE_CRASH_AT: 'plan:after-ref' });
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const journal = repo.path('.git/tune/desk/pending-step.json');
    const status = repo.git('status', '--porcelain', '--untracked-files=no');
    const indexLock = repo.path('.git/index.lock');
    expect(existsSync(journal)).toBe(true);
    expect(existsSync(indexLock)).toBe(true); // held by the step from its checks to its checkout
    expect(status).not.toBe(''); // the branch moved, the working tree lags behind

    const read = await loadTuning(await openRepo(repo.dir), 'desk');
    expect(read.state.batches).toHaveLength(1); // the step is in history
    expect(read.notices).toBeUndefined();
    expect(existsSync(journal)).toBe(true);
    expect(existsSync(indexLock)).toBe(true);
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe(status);

    const started = await startTuning(await openRepo(repo.dir), 'desk');
    expect(started.notices).toEqual([
      'lock files left by a git-tune that was killed were removed: .git/index.lock',
      expect.stringMatching(/^an interrupted git tune plan was finished: \d+ files? checked out$/),
    ]);
    expect(existsSync(journal)).toBe(false);
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe('');
    expect((await startTuning(await openRepo(repo.dir), 'desk')).notices).toBeUndefined();
  });
});
