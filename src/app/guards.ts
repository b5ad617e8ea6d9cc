import { branchName } from '../core/names.js';
import { usageError } from '../errors.js';
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
