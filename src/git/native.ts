import { spawn } from 'node:child_process';
import { TuneError, EXIT } from '../errors.js';

/**
 * The native `git` binary, for what isomorphic-git cannot do well: talking
 * to remotes over any transport (SSH included) with the user's credentials.
 */
export function runGit(args: readonly string[], cwd: string, env: Record<string, string | undefined> = process.env): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (e) =>
      reject(new TuneError('no-git', `native git could not start: ${e.message}`, { exitCode: EXIT.usage, hint: 'install git and put it on PATH' })),
    );
    child.on('close', (code) => {
      if (code === 0) resolve({ stdout, stderr });
      else {
        reject(new TuneError('git-failed', `git ${args.join(' ')} failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' / ')}`, { exitCode: EXIT.unexpected }));
      }
    });
  });
}
