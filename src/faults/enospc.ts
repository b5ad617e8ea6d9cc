/**
 * Named disk-full points, for tests only, beside the crash points
 * (src/faults/crash.ts). When `GIT_TUNE_ENOSPC_AT` names the point a write
 * reaches, that write fails as a full file system makes it fail: an error
 * with `code: 'ENOSPC'` (errno -28) and the path it was writing, thrown
 * where the real write would have thrown. The reliability tests
 * (test/reliability/disk-full.test.ts) use it to check that every write
 * point turns a full disk into exit 7 (`disk-full`), leaves nothing
 * half-written, and that the next command finishes the step.
 *
 * `GIT_TUNE_ENOSPC_AT=checkout` fails the first write at that point,
 * `case#2` the second; several points are comma-separated; `EDQUOT:` before
 * a point fails it as an exceeded quota instead. Never set it outside tests.
 */
export const ENOSPC_ENV = 'GIT_TUNE_ENOSPC_AT';

/**
 * The points: `objects` (a step's git objects), `journal` (the pending-step
 * note), `ref` (the branch's compare-and-swap), `tags`, `checkout` (a file of
 * the step written into the working tree), `index` (the index after the
 * checkout), `case` (a case result kept under .git/tune), `logs` (the logs
 * ref's objects), `scratch` (a scratch directory), `result-set` (the final
 * check's result set), `cache` (the state cache) and `code-cache`.
 */
export const ENOSPC_POINTS = [
  'objects', 'journal', 'ref', 'tags', 'checkout', 'index', 'case', 'logs', 'scratch', 'result-set', 'cache', 'code-cache',
] as const;

export type EnospcPoint = (typeof ENOSPC_POINTS)[number];

const reached = new Map<string, number>();

/** The error a full file system gives a write of `file` (as Node's fs shapes it). */
export function spaceError(file: string, quota = false, syscall = 'write'): NodeJS.ErrnoException {
  const [code, errno, words] = quota ? ['EDQUOT', -122, 'disk quota exceeded'] : ['ENOSPC', -28, 'no space left on device'];
  const err = new Error(`${code}: ${words}, ${syscall} '${file}'`) as NodeJS.ErrnoException;
  err.code = code;
  err.errno = errno;
  err.syscall = syscall;
  err.path = file;
  return err;
}

/** Throws a real-looking ENOSPC (or EDQUOT) for `file` when `GIT_TUNE_ENOSPC_AT` names `point` (tests only). */
export function diskFullPoint(point: EnospcPoint, file: string): void {
  const spec = process.env[ENOSPC_ENV];
  if (!spec) return;
  const count = (reached.get(point) ?? 0) + 1;
  reached.set(point, count);
  for (const entry of spec.split(',').map((s) => s.trim())) {
    const quota = entry.startsWith('EDQUOT:');
    const [name, nth] = (quota ? entry.slice('EDQUOT:'.length) : entry).split('#');
    if (name === point && count === (nth ? Number(nth) : 1)) throw spaceError(file, quota);
  }
}
