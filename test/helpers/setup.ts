import { beforeEach } from 'vitest';

/**
 * Every test file's setup (vitest.config.ts): before each test, one turn of
 * the event loop. A test that runs the CLI synchronously blocks its worker;
 * the worker's calls to vitest (task updates) fail after 60 s without the
 * answer read, and between back-to-back synchronous tests nothing else lets
 * the answers in. Three synchronous tests of 25 s each failed a run with
 * "Timeout calling onTaskUpdate" though they passed; with this turn, not.
 */
beforeEach(() => new Promise<void>((resolve) => setImmediate(resolve)));
