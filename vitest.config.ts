import os from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Most test files spend their time in child processes (the CLI, git, the
 * example agent), not in the vitest worker. Vitest's default of one worker
 * fewer than the cores is one worker on a 2-core CI machine: the files then
 * run one after another and a core idles while a test waits on its child.
 * Two workers at least keep both cores busy; each test then shares the
 * cores with another file's, hence the longer default timeouts.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
  },
});
