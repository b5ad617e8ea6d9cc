/**
 * The command word of a `git-tune` argv (after node and the script): the
 * first word, with only the program's own `--debug` before it. Undefined for
 * no word, or an option first (`--help next` is the program's help). Read by
 * the entry, to pick its code cache (src/cli/code-cache.ts), and by the
 * program, to declare only that command (src/cli/program.ts).
 */
export function commandWord(args: readonly string[]): string | undefined {
  for (const arg of args) {
    if (arg === '--debug') continue;
    return arg.startsWith('-') ? undefined : arg;
  }
  return undefined;
}
