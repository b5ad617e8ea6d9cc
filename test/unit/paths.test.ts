import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  batchPlanPath, configPath, datasetPath, difficultPath, localPath, localRoot, memoryPath, readmePath, RUN_FILES, runDir,
  runFilePath, runsPrefix, selectionPath, tuningDir, usagePath,
} from '../../src/core/paths.js';

describe('one name for each path of a tuning', () => {
  const dir = tuningDir('support-desk');

  it('the files on the branch sit under .tune/<name>/, repository-relative with forward slashes', () => {
    expect(dir).toBe('.tune/support-desk');
    expect([configPath(dir), selectionPath(dir), datasetPath(dir), difficultPath(dir), readmePath(dir), usagePath(dir)]).toEqual([
      '.tune/support-desk/config.yaml', '.tune/support-desk/selection.json', '.tune/support-desk/dataset.jsonl',
      '.tune/support-desk/difficult.json', '.tune/support-desk/README.md', '.tune/support-desk/USAGE.md',
    ]);
    expect(batchPlanPath(dir, 3)).toBe('.tune/support-desk/batches/batch03.json');
    expect(batchPlanPath(dir, 112)).toBe('.tune/support-desk/batches/batch112.json');
    expect(memoryPath(dir, 'last-good')).toBe('.tune/support-desk/memory/last-good');
    expect(memoryPath(dir, 'candidate')).toBe('.tune/support-desk/memory/candidate');
  });

  it('a run folder holds its files, and every one starts with the runs prefix', () => {
    expect(runDir(dir, 'batch01-nomem-run1')).toBe('.tune/support-desk/runs/batch01-nomem-run1');
    expect(Object.values(RUN_FILES).map((f) => runFilePath(dir, 'final-check', f))).toEqual(
      ['run.json', 'results.json', 'memory-writes.json', 'judge.json', 'findings.md', 'changes.md'].map((f) => `.tune/support-desk/runs/final-check/${f}`),
    );
    for (const f of Object.values(RUN_FILES)) expect(runFilePath(dir, 'batch02-mem-run3', f).startsWith(runsPrefix(dir))).toBe(true);
  });

  it('local state sits under <gitdir>/tune/<name>/, outside the branch', () => {
    const gitdir = path.join('/repo', '.git');
    expect(localRoot(gitdir)).toBe(path.join('/repo', '.git', 'tune'));
    expect(localPath(gitdir, 'desk', 'runs', 'batch01-nomem-run1')).toBe(path.join('/repo', '.git', 'tune', 'desk', 'runs', 'batch01-nomem-run1'));
    expect(localPath(gitdir, 'desk', 'cache')).toBe(path.join(localRoot(gitdir), 'desk', 'cache'));
    expect(localPath(gitdir, 'desk', 'pending-step.json').startsWith(localRoot(gitdir))).toBe(true);
  });
});
