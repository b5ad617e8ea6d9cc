import { branchName } from '../core/names.js';
import { usageError } from '../errors.js';
import { refuseWhileDriven } from '../git/lock-owner.js';
import { requireIntactHistory } from './rewritten.js';
import type { Tuning } from './tuning.js';

/** A command that writes a step needs the tuning's branch checked out. */
export function requireOnBranch(tuning: Tuning): void {
  if (!tuning.onBranch) {
    throw usageError(
      'not-on-tuning-branch',
      `tuning ${tuning.name} is not checked out; steps are written on its branch`,
      `git switch ${branchName(tuning.name)}`,
    );
  }
}

/**
 * A command that writes steps of a tuning: refused at once (exit 4
 * `driver-running`) while `git tune auto` in another process drives it
 * (src/git/lock-owner.ts), then it needs the tuning's branch checked out
 * and a history without a rewritten step (`rewritten-step`, exit 3:
 * src/app/rewritten.ts).
 */
export async function requireWriter(tuning: Tuning): Promise<void> {
  await refuseWhileDriven(tuning.repo.gitdir, tuning.name, !tuning.onBranch);
  requireOnBranch(tuning);
  await requireIntactHistory(tuning);
}
