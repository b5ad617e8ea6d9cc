import picomatch from 'picomatch';

/**
 * Glob patterns for `prose` and `memoryPolicy` (paths relative to the
 * repository root, `/` separators), read by picomatch as bash reads them:
 * `**` any depth, `*` within a segment, `?` one character, `[abc]`, `[a-z]`,
 * `[!a]` and `[[:digit:]]` classes, `{a,b}` and `{1..3}` braces, `@(a|b)` and
 * the other extglobs, and `\` escaping the next character (`\*`, `\(`).
 * Dotfiles are matched like any file (`*` takes `.env`): a prose file is the
 * user's whatever its name. A `[` with no closing `]` is a plain character.
 */
const OPTIONS: picomatch.PicomatchOptions = { dot: true, posix: true };
// picomatch's shortcuts for globs starting with `*` or `.` want a character after a dot in `*.*` and
// `**/*.*` (`a.` missed), unlike the same glob in a folder (`x/*.*`) and unlike bash: those go through
// its full parser. (Its other shortcut, for globs with no glob character, is right and stays.)
const FULL_PARSE: picomatch.PicomatchOptions = { ...OPTIONS, fastpaths: false };

/** One glob as a regular expression over a repository-relative path (a leading `!` negates it). */
export function globToRegExp(glob: string): RegExp {
  return picomatch.makeRe(glob, /^[*.]/.test(glob) ? FULL_PARSE : OPTIONS);
}

/** The tool's own directory (`.tune/<name>/`: config, notes, memory, reports). */
const TOOL_DIR = '.tune';

/** Whether a repository-relative path lies in the tool's own directory. */
export function isToolPath(path: string): boolean {
  const p = path.replace(/^(?:\.\/)+/, '');
  return p === TOOL_DIR || p.startsWith(`${TOOL_DIR}/`);
}

const negated = (glob: string) => glob.startsWith('!') && !glob.startsWith('!(');

/**
 * Whether a path is under the `prose`/`memoryPolicy` globs: it matches one
 * of them and none of the negated ones (`!agents/drafts/**`), in any order.
 * Negated globs only take away, so a list of them alone matches nothing.
 * The tool's own files are never prose, whatever the globs say: a broad
 * glob for `.md` files at any depth must not take in `.tune/<name>/README.md` and the like.
 */
export function matcher(globs: readonly string[]): (path: string) => boolean {
  const take = globs.filter((g) => !negated(g)).map(globToRegExp);
  const drop = globs.filter(negated).map((g) => globToRegExp(g.slice(1)));
  return (p) => !isToolPath(p) && take.some((re) => re.test(p)) && !drop.some((re) => re.test(p));
}

/**
 * The directory a glob's files all lie under (`agents` for
 * `agents/**\/*.md`, `` for `*.md`): the segments before the first one
 * with a glob character or an escape. Null for a negated glob, which adds
 * no files. A prefix shorter than it could be only makes a walk longer.
 */
export function globBase(glob: string): string | null {
  if (negated(glob)) return null;
  const parts = glob.replace(/^(?:\.\/)+/, '').split('/');
  const fixed: string[] = [];
  for (const part of parts.slice(0, -1)) {
    if (/[*?{}[\]()!+@\\]/.test(part)) break;
    fixed.push(part);
  }
  return fixed.join('/');
}
