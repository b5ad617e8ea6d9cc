import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { leftovers, type TempRepo } from '../helpers/repo.js';
import { ownerIsGone, parseScratchName } from '../../src/run/scratch.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * A `git tune run` killed with SIGKILL mid-run cannot remove its scratch
 * directory (the cases' workspaces in the temp dir); the next command that
 * makes one sweeps it. The commands here get a temp dir of their own
 * (TMPDIR), so what is in it is theirs alone.
 */
const made: Array<{ repo: TempRepo; tmp: string }> = [];
afterAll(() => {
  for (const { repo, tmp } of made.splice(0)) {
    repo.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  }
});

// Scratch dirs only: the CLI's code cache (git-tune-code-cache-<uid>) is meant to stay.
const ours = (tmp: string) => readdirSync(tmp).filter((name) => name.startsWith('git-tune-') && !name.startsWith('git-tune-code-cache-'));

describe('scratch directories of a killed command', () => {
  it('git tune run killed mid-run leaves its scratch dir; the next run removes it and leaves none', async () => {
    const repo = await plannedRepo([plainCase('a'), plainCase('b'), plainCase('c')], { config: [['concurrency', '1']] });
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'scratch-rel-'));
    made.push({ repo, tmp });
    const env = { TMPDIR: tmp };

    const crashed = await tuneAsync(repo, ['run'], { ...env, GIT_TUNE_CRASH_AT: 'case:saved' });
    expect(crashed.signal, `the run never reached case:saved: exit ${crashed.code}\n${crashed.stderr}`).toBe('SIGKILL');
    const stale = ours(tmp);
    expect(stale).toHaveLength(1);
    const owner = parseScratchName(stale[0]!);
    expect(owner, stale[0]).not.toBeNull();
    expect(ownerIsGone(owner!)).toBe(true);

    const resumed = await tuneOk(repo, ['run'], env);
    expect(resumed.stdout).toContain('batch01-nomem-run1: finished');
    expect(resumed.stderr).toContain('[2/3] b:'); // resumed after the case the killed run kept
    expect(ours(tmp)).toEqual([]);
    expect(leftovers(repo)).toEqual([]);
  });
});
