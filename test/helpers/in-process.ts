import { runCli } from '../../src/cli/program.js';
import type { CommandIO } from '../../src/cli/io.js';
import type { At, CliResult } from './cli.js';

/**
 * `git tune <args>` in this process (runCli, the sources), as the user would
 * see it: for tests that take many steps, where a process per command would
 * be most of their time. The real CLI in a process is test/helpers/cli.ts.
 */
export async function tuneInProcess(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io = (): CommandIO => ({
    cwd: at.dir, env: { ...process.env, ...at.env, ...extraEnv }, now: new Date(), clock: () => new Date(), isTTY: false,
    out: (text) => (stdout += text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => (stderr += text.endsWith('\n') ? text : `${text}\n`),
  });
  const code = await runCli(args, io);
  return { code, signal: null, stdout, stderr };
}
