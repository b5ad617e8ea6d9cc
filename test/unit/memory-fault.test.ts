import { describe, expect, it } from 'vitest';
import { memoryShortage, oomLine, type ProcessEnd } from '../../src/core/memory-fault.js';

/**
 * Which ends of a runner are a memory shortage (VOID, docs/contracts.md#runner)
 * and what the reason says. Pure: the real deaths are in test/reliability/runner-memory.test.ts.
 */
const end = (over: Partial<ProcessEnd>): ProcessEnd => ({
  exitCode: 1, signal: null, spawnCode: null, stderrTail: '', oomKills: { machine: null, cgroup: null }, ...over,
});

const NODE_HEAP = `<--- Last few GCs --->\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n----- Native stack trace -----\n\n 1: 0xb78db3 node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]\n`;

describe('memoryShortage', () => {
  it('names memory for every kill: exit 137, SIGKILL without an exit code, and says when the OOM killer moved', () => {
    expect(memoryShortage(end({ exitCode: 137 }))).toBe('killed (exit 137: out of memory, most often)');
    expect(memoryShortage(end({ exitCode: null, signal: 'SIGKILL' }))).toBe('killed (SIGKILL: out of memory, most often)');
    expect(memoryShortage(end({ exitCode: null, signal: 'SIGKILL', oomKills: { machine: 1, cgroup: null } })))
      .toBe("killed (SIGKILL: out of memory; the kernel's out-of-memory killer ended a process during the case)");
    expect(memoryShortage(end({ exitCode: 137, oomKills: { machine: 3, cgroup: 1 } })))
      .toBe("killed (exit 137: out of memory; the cgroup's out-of-memory killer ended a process during the case)");
    // The counters moving says nothing of a runner that was not killed.
    expect(memoryShortage(end({ exitCode: 1, oomKills: { machine: 2, cgroup: 2 } }))).toBeNull();
  });

  it('a spawn refused for memory (ENOMEM) or for a fork (EAGAIN) is a shortage; a missing program is not', () => {
    expect(memoryShortage(end({ exitCode: null, spawnCode: 'ENOMEM' }))).toBe('out of memory: the runner could not start (spawn ENOMEM)');
    expect(memoryShortage(end({ exitCode: null, spawnCode: 'EAGAIN' }))).toMatch(/^out of memory or processes: the runner could not start \(spawn EAGAIN/);
    expect(memoryShortage(end({ exitCode: null, spawnCode: 'ENOENT' }))).toBeNull();
  });

  it("reads the runtime's last words: Node's heap (exit 134 or SIGABRT), V8's reservation, Python, awk, C++, Rust, Java", () => {
    expect(memoryShortage(end({ exitCode: 134, stderrTail: NODE_HEAP })))
      .toBe('out of memory (exit 134): FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory');
    expect(memoryShortage(end({ exitCode: null, signal: 'SIGABRT', stderrTail: NODE_HEAP }))).toMatch(/^out of memory \(SIGABRT\): FATAL ERROR: .*JavaScript heap out of memory$/);
    expect(memoryShortage(end({ exitCode: null, signal: 'SIGTRAP', stderrTail: '\n#\n# Fatal process OOM in Failed to reserve virtual memory for CodeRange\n#\n\n' })))
      .toBe('out of memory (SIGTRAP): Fatal process OOM in Failed to reserve virtual memory for CodeRange');
    for (const last of ['MemoryError', 'awk: run time error: out of memory', "terminate called after throwing an instance of 'std::bad_alloc'",
      'memory allocation of 4294967296 bytes failed', 'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
      'fatal error: runtime: out of memory', 'RangeError: Array buffer allocation failed', 'bash: fork: Cannot allocate memory']) {
      expect(memoryShortage(end({ exitCode: 1, stderrTail: `Traceback (most recent call last):\n  File "x", line 2\n${last}\n` })), last).toMatch(/^out of memory \(exit 1\): /);
    }
  });

  it('a crash or an abort that says nothing of memory stays the error it was; a clean exit is never looked at', () => {
    expect(memoryShortage(end({ exitCode: 1, stderrTail: 'TypeError: cannot read properties of undefined\n' }))).toBeNull();
    expect(memoryShortage(end({ exitCode: 134, stderrTail: 'Assertion failed: (x), function main\n' }))).toBeNull();
    expect(memoryShortage(end({ exitCode: null, signal: 'SIGSEGV' }))).toBeNull();
    expect(memoryShortage(end({ exitCode: 0, stderrTail: 'warning: ran out of memory once, retried\n' }))).toBeNull();
    // "memory" alone is not the runtime giving up.
    expect(oomLine('saved 3 facts to memory\nmemory policy: read first\n')).toBeNull();
  });
});
