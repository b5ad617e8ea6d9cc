/**
 * `--dry-run`: the step writer (commitSteps, src/app/commit.ts) is given
 * `dryRun` in its context and, instead of writing, throws the commits it
 * would have written. Plans are data, so every command that writes steps gets
 * a dry run from that one check; the CLI catches it and prints the plan.
 * A use case that would start an outside process (runner, judge, editor,
 * memory.merge) before it knows its commit throws one too, before the process
 * starts, saying what it would do (`then`).
 */
export interface PlannedCommit {
  subject: string;
  /** The whole commit message: subject, body, trailers. */
  message: string;
  /** Every path the commit writes (null content: deleted). */
  files: Array<{ path: string; deleted: boolean }>;
  /** The tags this commit gets, whole (`tune/<name>/<run>`), to be copied. */
  tags: string[];
}

export class DryRun extends Error {
  constructor(
    readonly commits: readonly PlannedCommit[],
    /** What the command would do next, or instead (an outside process it would start). */
    readonly then: string | null = null,
  ) {
    super(`dry run: ${commits.length} commit${commits.length === 1 ? '' : 's'} planned, nothing written`);
    this.name = 'DryRun';
  }

  /** The same plan, with what comes after it said. */
  followedBy(then: string): DryRun {
    return new DryRun(this.commits, this.then ? `${this.then}; ${then}` : then);
  }
}
