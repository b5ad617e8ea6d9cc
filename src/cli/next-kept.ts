import { keptNext } from '../app/kept-next.js';
import { asLines, writeStdout } from './io.js';
import type { NextOptions } from './kept-gate.js';
import { nextText } from './render-next.js';

/**
 * `git tune next` answered from what the tuning keeps for its tip
 * (src/app/kept-next.ts), before the program loads: a bundle of its own
 * (dist/bin/next.cjs, scripts/bundle.mjs), which the entry tries first for
 * `next`. A start that loads the program (its 1.5 MB bundle, commander and
 * the 28 commands) cost a warm `next` three times what answering does. What
 * it prints is what the program's `next` prints; false, having printed
 * nothing, when only the program can answer. `opts` as the entry's look
 * read them (src/cli/kept-gate.ts).
 */
export async function answerKept(opts: NextOptions): Promise<boolean> {
  const step = await keptNext(process.cwd(), process.env, opts.tuning);
  if (!step) return false;
  writeStdout(asLines(nextText(step, opts.json)));
  return true;
}
