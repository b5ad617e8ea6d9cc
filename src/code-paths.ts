/**
 * The heavier paths a command took that a start does not always take (the
 * fold of history the fold cache did not hold; the parse of config.yaml).
 * The CLI's code cache (src/cli/code-cache.ts) is written again after a run
 * that took one its file does not cover yet, so later runs on that path
 * start from compiled code too: a code cache first made by a warm `next`
 * left every cold one compiling the walk, the fold, YAML and zod (~20 ms).
 *
 * Kept on globalThis: the entry (dist/bin/git-tune.js) and the program
 * (cli.cjs) are separate bundles, each with its own copy of this module.
 */
export type CodePath = 'fold' | 'parse';

const KEY = Symbol.for('git-tune.code-paths');
type Holder = { [KEY]?: Set<CodePath> };

export function tookCodePath(path: CodePath): void {
  ((globalThis as Holder)[KEY] ??= new Set()).add(path);
}

export function codePathsTaken(): ReadonlySet<CodePath> {
  return (globalThis as Holder)[KEY] ?? new Set();
}
