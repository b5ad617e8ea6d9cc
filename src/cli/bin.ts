#!/usr/bin/env node
// The shipped entry, dist/bin/git-tune.js (scripts/bundle.mjs), a CommonJS
// file: `--version` answers at once; anything else runs the program from the
// CommonJS bundle beside it (dist/bin/cli.cjs), compiled through V8's code cache.
import { fileURLToPath } from 'node:url';
import { requireWithCodeCache } from './code-cache.js';
import { commandWord } from './command-word.js';
import { answeredVersion, ignoreClosedOutput } from './io.js';
import { exitWhenSettled } from '../run/exit-when-settled.js';

/** The content hash of cli.cjs, set by the bundler (it builds cli.cjs first). */
declare const GIT_TUNE_PROGRAM_HASH: string;

ignoreClosedOutput();
const args = process.argv.slice(2);
if (!answeredVersion(args)) {
  const command = commandWord(args) ?? 'help';
  const program = requireWithCodeCache(fileURLToPath(new URL('./cli.cjs', import.meta.url)), GIT_TUNE_PROGRAM_HASH, command) as typeof import('./program.js');
  // Not a top-level await: the shipped entry is CommonJS (scripts/bundle.mjs); main() reports its own errors.
  exitWhenSettled(program.main(process.argv), 'git-tune');
}
