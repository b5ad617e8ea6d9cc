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
/**
 * Node parses the certificates NODE_EXTRA_CA_CERTS names at every start:
 * where a machine sets it (this one does), it is most of a bare `node -e 0`
 * (BENCHMARKS.md: 95 ms against 32 ms). The tests start thousands of Node
 * processes (the CLI, the example agent, its judge and checks) and none of
 * them speaks TLS; the one that does, npm installing the real agent CLIs,
 * gets the variable back (test/helpers/agent-clis.ts). The other npm calls
 * (`npm pack`, and `npm install --offline` of the packed tarball, which has
 * no dependencies) reach no registry. The workers and everything they start
 * inherit this environment.
 */
if (process.env.NODE_EXTRA_CA_CERTS) {
  process.env.GIT_TUNE_TEST_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

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
