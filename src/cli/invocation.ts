import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../core/argv.js';
import type { Env } from '../git/identity.js';

/**
 * How the person at this shell runs git-tune, for the commands we print
 * them to run: `git tune` when git would find a `git-tune` program on PATH
 * (git runs `git-<name>` for `git <name>`), else `node` and the absolute path
 * of the entry this process was started from. After `npm ci && npm run demo`
 * nothing has put git-tune on PATH, and `git tune status` would fail
 * ("'tune' is not a git command").
 */
export function tuneInvocation(env: Env, entry: string | undefined = process.argv[1], platform: NodeJS.Platform = process.platform): string {
  if (onPath('git-tune', env, platform) || !entry) return 'git tune';
  return `node ${shellQuote(path.resolve(entry))}`;
}

function onPath(program: string, env: Env, platform: NodeJS.Platform): boolean {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  const names = platform === 'win32' ? (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').map((ext) => `${program}${ext.toLowerCase()}`) : [program];
  return dirs.some((dir) => names.some((name) => isExecutable(path.join(dir, name), platform)));
}

function isExecutable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (platform !== 'win32') accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
