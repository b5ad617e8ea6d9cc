import type { CommandIO } from '../io.js';
import { final, type RunCommandOptions } from './run.js';

/** `git tune final`: the final check (SPEC 3.8); CI, shards and targets come with the CI work. */
export async function run(io: CommandIO, opts: RunCommandOptions): Promise<void> {
  await final(io, opts);
}
