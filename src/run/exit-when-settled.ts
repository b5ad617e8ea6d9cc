/**
 * Ends a program with its main promise's exit code. The shipped programs
 * (the CLI's entry, the presets') are CommonJS, with no top-level await: a
 * main promise left pending with nothing else to wait for would let Node
 * exit 0 without a word (an ES module's await exits 13). Here it exits 1,
 * the unexpected error, saying so.
 *
 * Once nothing is left to wait for (`beforeExit`: every write flushed, every
 * child process ended or let go), it exits at once: Node's own way out first
 * tears the heap down, ~1.5 ms of a short command (a cold `next`'s heap,
 * measured from the parent).
 */
export function exitWhenSettled(main: Promise<number>, program: string): void {
  let settled = false;
  void main.then(
    (code) => {
      settled = true;
      process.exitCode = code;
    },
    (err: unknown) => {
      // A main that reports its own errors never rejects; one that does is the unexpected error (exit 1), said in one line.
      settled = true;
      process.stderr.write(`${program}: error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
  process.once('beforeExit', () => {
    if (settled) process.exit();
  });
  process.once('exit', () => {
    if (settled) return;
    process.stderr.write(`${program}: internal error: it stopped before its work was done (a promise nothing settled): a bug of git-tune, please report it\n`);
    process.exitCode = 1;
  });
}
