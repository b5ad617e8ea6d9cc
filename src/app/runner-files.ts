import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandSpec } from '../contracts/config.js';
import { uncommittedProse } from './prose.js';
import type { Tuning } from './tuning.js';

/**
 * The runner's own files (the paths its command names inside the
 * repository: `node agent.js` names agent.js; a folder counts whole) that
 * differ from the commit a run starts at. A run of them cannot be
 * reproduced from its commit: the run says so and its commit records it.
 */
export async function uncommittedRunnerFiles(tuning: Tuning, runner: CommandSpec | undefined): Promise<string[]> {
  const argv = runner?.command;
  if (!argv || !tuning.tip) return [];
  const words = runner.shell ? argv.flatMap((a) => a.split(/\s+/)) : argv;
  const root = path.resolve(tuning.repo.dir);
  const globs: string[] = [];
  for (const word of words) {
    if (!word || word.startsWith('-') || /[*?[\]{}$`'"|;&<>]/.test(word)) continue;
    const abs = path.resolve(root, word);
    const rel = path.relative(root, abs).split(path.sep).join('/');
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel) || rel === '.git' || rel.startsWith('.git/')) continue;
    const stat = await fs.stat(abs).catch(() => null);
    if (stat?.isFile()) globs.push(rel);
    else if (stat?.isDirectory()) globs.push(`${rel}/**`);
  }
  return globs.length === 0 ? [] : uncommittedProse(tuning.repo, tuning.tip, globs);
}
