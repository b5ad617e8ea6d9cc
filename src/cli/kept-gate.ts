import { existsSync } from 'node:fs';
import { isValidTuningName, namedTuning } from '../core/names.js';
import { memoPath } from '../core/paths.js';
import { locateRepo, readHeadRef } from '../git/find-repo.js';

/** The options of a `next` the kept answer takes (`nextOptions`). */
export interface NextOptions {
  json: boolean;
  tuning?: string | undefined;
}

/**
 * The options of `git-tune <args>` when it is a `next` whose tuning may keep
 * an answer for it: the options are the kept answer's (`nextOptions`) and
 * the tuning's memo file exists; null otherwise. Only then does the entry
 * load the kept answer's bundle (next.cjs, src/cli/next-kept.ts), which
 * decides; a cold `next` (nothing kept) paid ~9 ms for loading it. A
 * necessary condition, read in a few system calls: whatever it misses only
 * leaves the command to the program.
 */
export function mayHaveKept(args: readonly string[], cwd: string): NextOptions | null {
  const opts = nextOptions(args);
  const repo = opts && locateRepo(cwd);
  if (!opts || !repo || 'linked' in repo) return null;
  const named = namedTuning(opts.tuning, readHeadRef(repo.gitdir));
  return named !== null && isValidTuningName(named.name) && existsSync(memoPath(repo.gitdir, named.name)) ? opts : null;
}

/**
 * `next`, `--json` and `-t/--tuning <name>` (each at most once), or null for
 * anything else: the program parses that, and says what is wrong with it.
 */
export function nextOptions(args: readonly string[]): NextOptions | null {
  if (args[0] !== 'next') return null;
  let json = false;
  let tuning: string | undefined;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    const value = arg.startsWith('--tuning=') ? arg.slice('--tuning='.length) : (arg === '-t' || arg === '--tuning') ? args[++i] : undefined;
    if (arg === '--json' && !json) json = true;
    else if (value !== undefined && value !== '' && !value.startsWith('-') && tuning === undefined) tuning = value;
    else return null;
  }
  return { json, tuning };
}
