#!/usr/bin/env node
// The shipped entry, dist/bin/git-tune.js (scripts/bundle.mjs), a CommonJS
// file: `--version` answers at once; `next` is first answered from what the
// tuning keeps (dist/bin/next.cjs); anything else runs the program from the
// CommonJS bundle beside it (dist/bin/cli.cjs). Both bundles are compiled
// through V8's code cache.
import { fileURLToPath } from 'node:url';
import { codePathsTaken } from '../code-paths.js';
import { requireWithCodeCache } from './code-cache.js';
import { commandWord } from './command-word.js';
import { mayHaveKept } from './kept-gate.js';
import { answeredVersion } from './io.js';
import { exitWhenSettled } from '../run/exit-when-settled.js';

/** The content hashes of cli.cjs and next.cjs, set by the bundler (it builds them first). */
declare const GIT_TUNE_PROGRAM_HASH: string;
declare const GIT_TUNE_NEXT_HASH: string;

const bundle = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

async function start(args: readonly string[]): Promise<number> {
  const command = commandWord(args) ?? 'help';
  if (command === 'next' && (await answeredKept(args))) return 0;
  const program = requireWithCodeCache(bundle('cli.cjs'), GIT_TUNE_PROGRAM_HASH, command, codePathsTaken) as typeof import('./program.js');
  return program.main(process.argv);
}

/**
 * `next` answered from what the tuning keeps (src/cli/next-kept.ts); false
 * to leave it to the program. Whatever fails here (a folder gone from under
 * the command, an output that refuses a write) is the program's to report.
 */
async function answeredKept(args: readonly string[]): Promise<boolean> {
  let answered = false;
  try {
    const opts = mayHaveKept(args, process.cwd());
    if (!opts) return false;
    const kept = requireWithCodeCache(bundle('next.cjs'), GIT_TUNE_NEXT_HASH, 'next-kept', () => new Set(answered ? ['answer'] : [])) as typeof import('./next-kept.js');
    answered = await kept.answerKept(opts);
  } catch {
    return false;
  }
  return answered;
}

const args = process.argv.slice(2);
// Not a top-level await: the shipped entry is CommonJS (scripts/bundle.mjs); main() reports its own errors.
if (!answeredVersion(args)) exitWhenSettled(start(args), 'git-tune');
