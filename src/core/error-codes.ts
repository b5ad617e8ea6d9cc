/**
 * Every error code: stable, matched on by scripts (`--json` prints `error.code`).
 * Pure data, so core's refusals (src/core/refusal.ts) are typed by it too;
 * src/errors.ts re-exports it with the error class and the exit codes.
 */
export const ERROR_CODES = [
  'already-on-list', 'already-reverted', 'ambiguous-commit', 'bad-aims', 'bad-backend', 'bad-ceiling',
  'bad-command-line', 'bad-concurrency', 'bad-config', 'bad-dataset', 'bad-difficult-file',
  'bad-difficult-lines', 'bad-findings', 'bad-folder', 'bad-keep', 'bad-memory-writes', 'bad-options',
  'bad-reason', 'bad-result-set', 'bad-shard', 'bad-size', 'bad-tuning-name', 'bad-until', 'bad-verdict',
  'batch-closed', 'batch-not-due', 'budget-spent', 'candidate-not-due', 'cases-missing',
  'changes-md-unchanged', 'checkpoint-not-due', 'demo-dir-not-a-dir', 'demo-dir-not-empty',
  'demo-init-failed', 'detached-head', 'dirty-file', 'disk-full', 'editor-failed', 'empty-dataset-dir', 'final-not-due',
  'final-recorded', 'findings-edited', 'git-busy', 'git-failed', 'github-api', 'github-unreachable',
  'grade-first', 'held-out-clash', 'held-out-quoted', 'history-incomplete', 'index-unsupported', 'interrupted', 'keep-without-why',
  'linked-worktree', 'log-needs-case', 'memory-half', 'memory-shape', 'merge-failed', 'no-batch',
  'no-changes-md', 'no-config', 'no-dataset', 'no-edit', 'no-findings', 'no-git', 'no-identity',
  'no-init-commit', 'no-plan', 'no-remote', 'no-run', 'no-runner', 'no-such-batch', 'no-such-case',
  'no-such-file', 'no-such-folder', 'no-such-run', 'no-such-target', 'no-such-tuning', 'no-targets',
  'no-tunings', 'not-a-repo', 'not-an-edit', 'not-github', 'not-on-list', 'not-on-tuning-branch',
  'not-prose', 'not-verified', 'nothing-graded', 'object-missing', 'object-type', 'passed-refused',
  'pr-push-failed', 'prose-not-committed', 'readme-markers', 'ref-conflict', 'ref-locked', 'ref-moved',
  'revert-conflict', 'run-not-due', 'run-not-finished', 'sandbox-down', 'secret-in-step', 'shallow-clone',
  'shard-not-whole', 'shards-do-not-match', 'shards-stale', 'tag-exists', 'tuning-dir-exists',
  'tuning-exists', 'uncommitted-changes', 'unconfirmed-edits', 'unknown-case', 'unknown-config-key',
  'unknown-preset', 'void-first', 'why-without-keep',
  // fleets of target models, auto's filters and limits
  'bad-minutes', 'bad-pick', 'bad-target-name', 'bad-worktree', 'fleet-exists', 'no-match', 'no-such-fleet',
  // one driver per tuning (docs/auto.md#one-driver)
  'driver-running',
  // a step amended, reworded or squashed (docs/git-model.md#rewritten-steps)
  'rewritten-step',
  // git tune undo
  'bad-count', 'undo-past-init', 'undo-pushed',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
