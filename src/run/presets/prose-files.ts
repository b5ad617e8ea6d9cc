import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { globBase, matcher } from '../../core/glob.js';
import { filesUnder } from '../files.js';

/**
 * The prose a preset program may read or edit: git-tune passes the tuning's
 * `prose` and `memoryPolicy` globs in `TUNE_PROSE_GLOBS` (src/run/presets/index.ts),
 * and the program finds the files itself in the repository root.
 */
export const proseScopeSchema = z.object({
  prose: z.array(z.string()).default([]),
  memoryPolicy: z.array(z.string()).default([]),
});
export type ProseScope = z.infer<typeof proseScopeSchema>;

/** One prose file as a preset shows it to the model: its repository-relative path and its text. */
export interface ProseFile {
  path: string;
  text: string;
  /** Under the memory-policy globs (the only files a with-memory half may edit). */
  memoryPolicy: boolean;
}

/** TUNE_PROSE_GLOBS as git-tune writes it; a clear error when it is missing or malformed. */
export function parseProseScope(raw: string | undefined): ProseScope {
  if (!raw) throw new Error('TUNE_PROSE_GLOBS is not set (git-tune sets it for its presets: {"prose": [globs], "memoryPolicy": [globs]})');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new Error(`TUNE_PROSE_GLOBS is not JSON (${(err as Error).message}); expected {"prose": ["agents/**/*.md"], "memoryPolicy": []}`);
  }
  const parsed = proseScopeSchema.safeParse(value);
  if (!parsed.success) throw new Error(`TUNE_PROSE_GLOBS: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

const SKIP_DIRS = new Set(['.git', 'node_modules', '.tune']);

/**
 * Repository-relative paths under `root` that any of the glob lists match
 * (the tuning's `prose` and `memoryPolicy`, each with its own negations),
 * sorted, never inside .git, node_modules or .tune.
 */
export async function findProse(root: string, globLists: ReadonlyArray<readonly string[]>): Promise<string[]> {
  const matchers = globLists.map((globs) => matcher(globs));
  const matches = (p: string) => matchers.some((m) => m(p));
  const globs = globLists.flat();
  const found = new Set<string>();
  const walk = async (base: string) => {
    for (const r of await filesUnder(root, base, { skip: SKIP_DIRS })) if (matches(r)) found.add(r);
  };
  const bases = [...new Set(globs.map(globBase).filter((b): b is string => b !== null))];
  // A base inside another is walked with it.
  for (const base of bases.filter((b) => !bases.some((o) => o !== b && (o === '' || b.startsWith(`${o}/`))))) await walk(base);
  return [...found].sort();
}

/** Every file under the scope's globs in `root` (each list with its own negations), sorted by path, with its text. */
export async function readProseFiles(root: string, scope: ProseScope): Promise<ProseFile[]> {
  const isPolicy = matcher(scope.memoryPolicy);
  const out: ProseFile[] = [];
  for (const file of await findProse(root, [scope.prose, scope.memoryPolicy])) {
    out.push({ path: file, text: await fs.readFile(path.join(root, file), 'utf8'), memoryPolicy: isPolicy(file) });
  }
  return out;
}

/** A path as a model may write it (`./a/b.md`, `a\b.md`), as the repository names it (`a/b.md`). */
export const normalizeProsePath = (file: string) => file.trim().replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');
