import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Env } from '../git/identity.js';
import { changedPaths, restoreFromHead } from '../git/status.js';

/**
 * A judge or an editor runs in the repository root, and may touch only what
 * its contract gives it: a judge nothing of the repository (its verdict goes
 * to TUNE_OUTPUT, outside it), an editor the prose it may edit and the run's
 * changes.md. What else it changed is put back as it was before it ran, and
 * named, so the caller reports it (README.md: Contracts).
 *
 * The baseline is what native git shows as changed (modified, added, deleted,
 * untracked; ignored files are not the repository's) with each such file's
 * content, so a person's own uncommitted work is put back too, never lost.
 */
export interface WorktreeBaseline {
  /** Changed paths before the command ran → their content then (null: absent). */
  changed: Map<string, Buffer | null>;
}

const read = (file: string) => fs.readFile(file).catch(() => null);

export async function worktreeBaseline(dir: string, env: Env): Promise<WorktreeBaseline> {
  const changed = new Map<string, Buffer | null>();
  for (const file of (await changedPaths(dir, env)).keys()) changed.set(file, await read(path.join(dir, file)));
  return { changed };
}

const same = (a: Buffer | null, b: Buffer | null) => (a === null || b === null ? a === b : Buffer.compare(a, b) === 0);

/**
 * Puts back every path that differs from the baseline and that `allowed`
 * refuses; returns those paths, sorted. A path clean in the baseline is
 * restored from HEAD (or removed, if it is new); a path that was already
 * changed gets its baseline content back.
 */
export async function undoOutside(dir: string, env: Env, baseline: WorktreeBaseline, allowed: (file: string) => boolean): Promise<string[]> {
  const now = await changedPaths(dir, env);
  const undone: string[] = [];
  const fromHead: string[] = [];
  for (const file of new Set([...now.keys(), ...baseline.changed.keys()])) {
    if (allowed(file)) continue;
    const full = path.join(dir, file);
    if (baseline.changed.has(file)) {
      const before = baseline.changed.get(file)!;
      const current = await read(full);
      if (same(before, current)) continue;
      if (before === null) await fs.rm(full, { force: true });
      else {
        await fs.mkdir(path.dirname(full), { recursive: true });
        await fs.writeFile(full, before);
      }
    } else if (now.get(file)) await fs.rm(full, { force: true });
    else fromHead.push(file);
    undone.push(file);
  }
  await restoreFromHead(dir, env, fromHead);
  return undone.sort();
}
