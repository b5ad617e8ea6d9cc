/**
 * Splits a command line given as one string (`--runner 'node agent.js'`)
 * into arguments the way a POSIX shell would for plain words, quotes and
 * backslashes. No expansion: the runner runs without a shell.
 */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) cur += line[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      has = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in: ${line}`);
  if (has || cur) out.push(cur);
  return out;
}

/**
 * Quotes one argument for a POSIX shell, only when it needs it (Python's
 * shlex.quote's safe set): the one quoting of every command line we print.
 * splitArgs reads it back to the same argument.
 */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : singleQuoted(arg);
}

/** One argument in single quotes, needed or not (paths in hints read alike), a `'` inside as `'\''`. */
export function singleQuoted(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
