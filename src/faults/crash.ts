import { appendFileSync, existsSync, writeFileSync } from 'node:fs';

/**
 * Named crash points, for tests only. When the environment variable
 * `GIT_TUNE_CRASH_AT` names the point a command reaches, the process kills
 * itself with SIGKILL right there: no `finally`, no lock released, no file
 * flushed, as a power cut or `kill -9` would leave it. The reliability tests
 * (test/reliability/crash.test.ts) use it to check that every write point
 * leaves a repository `git fsck` accepts, a branch at the old step or the
 * new one, and a next command that finishes the step.
 *
 * `GIT_TUNE_CRASH_AT=grade:after-ref` crashes the first time the point is
 * reached; `case:saved#2` the second time; several points are comma-separated.
 * Never set it outside tests.
 */
export const CRASH_ENV = 'GIT_TUNE_CRASH_AT';

/**
 * The points, by where they are. A commit of step `<step>` (run-start, run,
 * grade, edit, revert, difficult, candidate, checkpoint, plan, …) passes
 * `<step>:after-objects` (objects written, branch not moved),
 * `<step>:after-ref` (branch moved, tags and working tree not yet),
 * `<step>:after-tags` (a run's tag written, working tree not yet) and
 * `<step>:after-checkout` (all done but the command's own cleanup).
 */
export const CRASH_POINTS = {
  commit: ['after-objects', 'after-ref', 'after-tags', 'after-checkout'],
  other: [
    'case:saved', // a case result kept in .git/tune/<name>/runs/<run>/cases/
    'logs:after-objects', 'logs:after-ref', // refs/tune-logs/<name>
    'import:after-objects', 'import:after-ref', 'import:after-tags', 'import:after-head',
  ],
} as const;

const reached = new Map<string, number>();

function wanted(point: string, count: number, spec: string): boolean {
  return spec.split(',').map((s) => s.trim()).some((entry) => {
    const [name, nth] = entry.split('#');
    return name === point && count === (nth ? Number(nth) : 1);
  });
}

/**
 * `GIT_TUNE_MARKS=<file>`: every point reached is appended to the file, one
 * line each, so a test that kills the process at a random instant can say
 * where it was (test/reliability/kill-anywhere.test.ts).
 */
export const MARKS_ENV = 'GIT_TUNE_MARKS';
/**
 * `GIT_TUNE_PAUSE_AT=<point>[#n][,…]` with `GIT_TUNE_PAUSE_FILE=<file>`: at
 * the point, the process writes its name to the file and waits while the file
 * exists (at most a minute), so a test can signal or kill it exactly there.
 */
export const PAUSE_ENV = 'GIT_TUNE_PAUSE_AT';
export const PAUSE_FILE_ENV = 'GIT_TUNE_PAUSE_FILE';

async function pauseAt(point: string, count: number): Promise<void> {
  const spec = process.env[PAUSE_ENV];
  const file = process.env[PAUSE_FILE_ENV];
  if (!spec || !file || !wanted(point, count, spec)) return;
  writeFileSync(file, `${point}\n`);
  const until = Date.now() + 60_000;
  while (existsSync(file) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * Kills this process with SIGKILL when `GIT_TUNE_CRASH_AT` names `point`;
 * marks or pauses it there when asked (tests only).
 */
export async function crashPoint(point: string): Promise<void> {
  const spec = process.env[CRASH_ENV];
  const marks = process.env[MARKS_ENV];
  if (!spec && !marks && !process.env[PAUSE_ENV]) return;
  const count = (reached.get(point) ?? 0) + 1;
  reached.set(point, count);
  if (marks) appendFileSync(marks, `${point}\n`);
  await pauseAt(point, count);
  if (!spec || !wanted(point, count, spec)) return;
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL cannot be caught; never go on past the point while it lands.
  await new Promise<never>(() => {});
}
