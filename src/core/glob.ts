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

/** The tool's own directory (`.tune/<name>/`: config, notes, memory, reports). */
const TOOL_DIR = '.tune';

/** Whether a repository-relative path lies in the tool's own directory. */
export function isToolPath(path: string): boolean {
  const p = path.replace(/^(?:\.\/)+/, '');
  return p === TOOL_DIR || p.startsWith(`${TOOL_DIR}/`);
}

/**
 * Whether a path is under any of the `prose`/`memoryPolicy` globs. The
 * tool's own files are never prose, whatever the globs say: a broad
 * glob for `.md` files at any depth must not take in `.tune/<name>/README.md` and the like.
 */
export function matcher(globs: readonly string[]): (path: string) => boolean {
  const res = globs.map((g) => globToRegExp(g.replace(/^\.\//, '')));
  return (p) => !isToolPath(p) && res.some((re) => re.test(p));
}
