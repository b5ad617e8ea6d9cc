/**
 * Glob patterns for `prose` and `memoryPolicy` (paths relative to the
 * repository root, `/` separators): `**` any depth, `*` within a segment,
 * `?` one character, `{a,b}` alternatives.
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  let i = 0;
  let inGroup = false;
  while (i < glob.length) {
    const ch = glob[i]!;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        const slashAfter = glob[i + 2] === '/';
        out += slashAfter ? '(?:.*/)?' : '.*';
        i += slashAfter ? 3 : 2;
        continue;
      }
      out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '{') {
      inGroup = true;
      out += '(?:';
    } else if (ch === '}' && inGroup) {
      inGroup = false;
      out += ')';
    } else if (ch === ',' && inGroup) out += '|';
    else out += ch.replace(/[.+^$()|[\]\\]/g, '\\$&');
    i++;
  }
  return new RegExp(`^${out}$`);
}

export function matcher(globs: readonly string[]): (path: string) => boolean {
  const res = globs.map((g) => globToRegExp(g.replace(/^\.\//, '')));
  return (p) => res.some((re) => re.test(p));
}
