import { promises as fs } from 'node:fs';
import { localPath } from '../core/paths.js';
import { writeCacheFile } from './tip-memo.js';

/**
 * The note that a tuning's run tags are settled for a branch tip
 * (`settleRunTags`, src/app/abandon.ts): a command's start looks at the tags
 * once per tip. A cache: losing it costs one more look.
 */
const TAGS_CHECKED = 'run-tags-checked';

const markerOf = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'cache', TAGS_CHECKED);

/** Whether the run tags were settled at `tip`. */
export async function tagsSettledAt(gitdir: string, tuning: string, tip: string): Promise<boolean> {
  return (await fs.readFile(markerOf(gitdir, tuning), 'utf8').catch(() => '')).trim() === tip;
}

/** Forgets the note (a command that moves tags and then the branch): should it be killed between, the next start looks again. */
export async function forgetTagsSettled(gitdir: string, tuning: string): Promise<void> {
  await fs.rm(markerOf(gitdir, tuning), { force: true });
}

/**
 * A step that moved the branch from `from` to `to` made its own tags: when
 * the tags were settled at `from`, they are at `to` too, so the next command
 * need not look again (and a command that fails there writes nothing).
 */
export async function carryTagsSettled(gitdir: string, tuning: string, from: string | null, to: string): Promise<void> {
  if (from !== null && (await tagsSettledAt(gitdir, tuning, from))) await markTagsSettled(gitdir, tuning, to);
}

/** Notes that the run tags are settled for `tip`. */
export async function markTagsSettled(gitdir: string, tuning: string, tip: string): Promise<void> {
  writeCacheFile(markerOf(gitdir, tuning), `${tip}\n`);
}
