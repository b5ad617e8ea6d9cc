import { EventEmitter } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Case } from '../../src/contracts/dataset.js';
import { runCase, type CaseContext } from '../../src/run/case.js';
import { runProcess } from '../../src/run/process.js';
import { ROOT, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { EXAMPLE, yamlCases } from '../helpers/tuning.js';

/**
 * A runner that runs out of memory is VOID with a reason that says memory,
 * never an error that blames the prose (docs/contracts.md#runner): killed
 * (exit 137, or SIGKILL with no exit code), dead of a full heap (Node's
 * "JavaScript heap out of memory", exit 134 / SIGABRT), stopped by an
 * address-space limit (ulimit -v: an allocation the system refuses), or never started because the system had
 * no memory or process to give (spawn ENOMEM, EAGAIN). Real runners, run
 * in-process through runCase: the example agent's simulations, and the help
 * desk (test/fixtures/helpdesk) really allocating until it dies.
 */
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  /** Programs named `refused-<ERRNO>` are refused as the system refuses them: Node throws ENOMEM, and emits EAGAIN. */
  const spawn = ((program: string, ...rest: unknown[]) => {
    const refused = /^refused-(E[A-Z]+)$/.exec(program)?.[1];
    const error = () => Object.assign(new Error(`spawn ${refused}`), { code: refused, errno: refused === 'ENOMEM' ? -12 : -11, syscall: 'spawn' });
    if (refused === 'ENOMEM') throw error();
    if (refused) {
      const child = Object.assign(new EventEmitter(), { pid: undefined, stdout: null, stderr: null });
      process.nextTick(() => child.emit('error', error()));
      return child;
    }
    return (real.spawn as (...a: unknown[]) => unknown)(program, ...rest);
  }) as typeof real.spawn;
  return { ...real, spawn };
});

const HELPDESK = path.join(ROOT, 'test/fixtures/helpdesk');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-runner-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function ctx(root: string, command: string[], shell = false): CaseContext {
  const dir = path.join(tmp, `case-${++n}`);
  return {
    root, run: 'batch01-nomem-run1', runner: { command, shell, timeoutSec: 60, env: {} }, scope: { prose: [], memoryPolicy: [] },
    target: null, memory: [], scratch: path.join(dir, 'scratch'), logDir: path.join(dir, 'logs'),
    env: { PATH: process.env.PATH }, now: () => new Date(),
  };
}
const item = (id: string, input: Record<string, unknown>) => ({ id, rev: 'r1', class: 'c', input } as unknown as Case);

describe.concurrent('a runner short of memory is VOID, and the reason says memory', () => {
  it('the example agent: a full heap (SIGABRT), SIGKILL with no exit code, exit 137; a plain crash stays an error', async () => {
    const example = (mode: string) => runCase(ctx(EXAMPLE, ['node', 'agent.mjs']), item(mode, { question: 'q', topics: ['refund_window'], simulate: mode }));
    const [heap, signal, exit137, crash] = await Promise.all([example('oom-heap'), example('oom-signal'), example('oom'), example('crash')]);
    expect(heap.result).toMatchObject({ status: 'void', right: null, exitCode: null, signal: 'SIGABRT' });
    expect(heap.result.void).toBe('out of memory (SIGABRT): FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory');
    expect(heap.result.error).toBeUndefined();
    expect(signal.result).toMatchObject({ status: 'void', right: null, exitCode: null, signal: 'SIGKILL' });
    expect(signal.result.void).toMatch(/^killed \(SIGKILL: out of memory/);
    expect(exit137.result).toMatchObject({ status: 'void', exitCode: 137 });
    expect(exit137.result.void).toMatch(/^killed \(exit 137: out of memory/);
    expect(crash.result).toMatchObject({ status: 'error', right: false, error: 'the runner exited 1 without a result' });
    expect(crash.result.void).toBeUndefined();
  });

  it('the help desk really allocating: dead of a 32 MB heap (SIGABRT, or exit 134 through a shell), and under ulimit -v', async () => {
    const hog = item('acct-hog', { topic: 'reset-password', hog: true });
    const [direct, viaShell, ulimit, fine] = await Promise.all([
      runCase(ctx(HELPDESK, ['node', '--max-old-space-size=32', 'runner.mjs']), hog),
      runCase(ctx(HELPDESK, ['node --max-old-space-size=32 runner.mjs; status=$?; exit $status'], true), hog),
      runCase(ctx(HELPDESK, ['ulimit -v 1500000; node runner.mjs; status=$?; exit $status'], true), item('acct-hog-buffers', { topic: 'reset-password', hog: 'buffers' })),
      runCase(ctx(HELPDESK, ['node', '--max-old-space-size=32', 'runner.mjs']), item('acct-reset-password', { topic: 'reset-password' })),
    ]);
    expect(direct.result).toMatchObject({ status: 'void', right: null, signal: 'SIGABRT' });
    // V8 words its last GC two ways ("Reached heap limit", "Ineffective mark-compacts near heap limit"), as the heap happens to fill.
    expect(direct.result.void).toMatch(/^out of memory \(SIGABRT\): FATAL ERROR: (Reached|Ineffective mark-compacts near) heap limit Allocation failed - JavaScript heap out of memory$/);
    expect(viaShell.result).toMatchObject({ status: 'void', exitCode: 134 });
    expect(viaShell.result.void).toMatch(/^out of memory \(exit 134\): .*JavaScript heap out of memory$/);
    expect(ulimit.result).toMatchObject({ status: 'void', right: null, exitCode: 1, void: 'out of memory (exit 1): RangeError: Array buffer allocation failed' });
    // The same small heap answers an ordinary case: the limit is not what made the others VOID.
    expect(fine.result).toMatchObject({ status: 'ok', answer: 'use the reset link on the sign-in page' });
    // What the runner printed is kept whole for `show --log`, the stack trace past the reason included.
    expect(readFileSync(direct.stderrFile, 'utf8')).toContain('JavaScript heap out of memory');
  });

  it('a spawn the system refuses for memory (ENOMEM, thrown) or a fork (EAGAIN, emitted) is VOID; a missing program is an error', async () => {
    const root = path.join(tmp, 'empty-root');
    const [enomem, eagain, missing] = await Promise.all([
      runCase(ctx(root, ['refused-ENOMEM']), item('a', {})),
      runCase(ctx(root, ['refused-EAGAIN']), item('b', {})),
      runCase(ctx(root, ['git-tune-no-such-runner']), item('c', {})),
    ]);
    expect(enomem.result).toMatchObject({ status: 'void', right: null, void: 'out of memory: the runner could not start (spawn ENOMEM)' });
    expect(eagain.result).toMatchObject({ status: 'void', right: null });
    expect(eagain.result.void).toMatch(/^out of memory or processes: the runner could not start \(spawn EAGAIN/);
    expect(missing.result).toMatchObject({ status: 'error', right: false });
    expect(missing.result.error).toMatch(/^the runner could not start: spawn git-tune-no-such-runner ENOENT/);
  });

  it('runProcess never throws for a refused spawn: the outcome carries the errno, and the log files are closed', async () => {
    const dir = path.join(tmp, 'process');
    cpSync(HELPDESK, dir, { recursive: true });
    const spec = { command: ['refused-ENOMEM'], shell: false, cwd: dir, env: {}, timeoutMs: 5000, stdoutFile: path.join(dir, 'out'), stderrFile: path.join(dir, 'err') };
    const outcome = await runProcess(spec);
    expect(outcome).toMatchObject({ exitCode: null, signal: null, spawnError: 'spawn ENOMEM', spawnCode: 'ENOMEM', stderrTail: '' });
    expect(readFileSync(spec.stderrFile, 'utf8')).toBe('');
  });
});

describe('git tune run on the help desk with a case that runs out of memory', () => {
  it('records the run VOID with the memory reason in its trailer and results, and next halves the concurrency', async () => {
    const repo = new TempRepo('git-tune-runner-memory-');
    try {
      repo.git('init', '-q', '-b', 'main');
      cpSync(HELPDESK, repo.dir, { recursive: true });
      writeFileSync(repo.path('cases.yaml'), yamlCases([
        { id: 'acct-reset-password', class: 'accounts', input: { topic: 'reset-password' }, expected: 'use the reset link on the sign-in page' },
        { id: 'acct-hog', class: 'accounts', input: { topic: 'two-factor', hog: true }, expected: 'use an authenticator app' },
      ]));
      repo.git('add', '-A');
      repo.git('commit', '-q', '-m', 'the help desk');
      await tuneOk(repo, ['init', 'desk', '--prose', 'desk/**/*.md', '--memory-policy', 'desk/memory-policy.md', '--runner', 'node --max-old-space-size=32 runner.mjs', '--dataset', 'cases.yaml']);
      for (const [k, v] of [['minBatch', '2'], ['concurrency', '8']]) await tuneOk(repo, ['config', 'set', k!, v!]);
      await tuneOk(repo, ['select']);
      await tuneOk(repo, ['batch']);
      const run = await tuneOk(repo, ['run', '--json']);
      const out = JSON.parse(run.stdout) as { void: string; results: Array<{ id: string; status: string; void?: string }> };
      const hog = out.results.find((r) => r.id === 'acct-hog')!;
      expect(hog).toMatchObject({ status: 'void', void: 'out of memory (SIGABRT): FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory' });
      expect(out.results.find((r) => r.id === 'acct-reset-password')).toMatchObject({ status: 'ok' });
      expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Void,valueonly)', 'tune/desk')).toContain('JavaScript heap out of memory');
      const next = repo.tuneJson(['next']);
      expect(next).toMatchObject({ kind: 'void-rerun', command: 'git tune config set concurrency 4 && git tune run' });
      repo.fsck();
    } finally {
      repo.cleanup();
    }
  });
});
