/**
 * `--dry-run`: a use case reads and decides as a real run does, up to its
 * first write; there the real run writes its step commits (`landSteps`,
 * src/app/commit.ts) and a dry run returns them as a Plan instead, and the
 * CLI prints it. The same StepCommits are planned or written, so the two
 * cannot drift. A use case that would start an outside process (runner,
 * judge, editor, memory.merge) before it knows its commit returns the plan so
 * far, saying what it would do (`then`), before the process starts.
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

/** What a dry run answers: the commits it would write, and what it would do next (or instead). */
export class Plan {
  constructor(
    readonly commits: readonly PlannedCommit[],
    /** What the command would do next, or instead (an outside process it would start). */
    readonly then: string | null = null,
  ) {}

  /** The same plan, with what comes after it said. */
  followedBy(then: string): Plan {
    return new Plan(this.commits, this.then ? `${this.then}; ${then}` : then);
  }
}

/** A context that is never a dry run: its steps are written. */
export interface Writes {
  dryRun?: false;
}

/**
 * A command's context, which may be a dry run (`--dry-run`): its steps are
 * planned, not written. Past `if (ctx.dryRun) return plan`, it is `C`: a
 * context that writes.
 */
export type DryRunnable<C extends Writes> = C | (Omit<C, 'dryRun'> & { dryRun: true });
