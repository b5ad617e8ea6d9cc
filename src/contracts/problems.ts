import type * as z from 'zod';

/**
 * A problem found in a file a user wrote: where (file, case index or line,
 * field), the rule, and what was found. Every parser collects all of them
 * before refusing, so one fix-and-retry round is enough.
 */
export interface Problem {
  file: string;
  where?: string;
  field?: string;
  message: string;
  received?: string;
}

export function formatProblem(p: Problem): string {
  const place = [p.file, p.where].filter(Boolean).join(' ');
  const field = p.field ? ` field \`${p.field}\`` : '';
  const received = p.received === undefined ? '' : ` (found ${p.received})`;
  return `${place}:${field} ${p.message}${received}`;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    // Non-ASCII is spelled out, so a look-alike (a Cyrillic "а" in an id) is visible.
    return JSON.stringify(shown).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

export function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

/** Zod issues of one value become problems; `input` is the value parsed. */
export function problemsFromZod(
  error: z.ZodError,
  input: unknown,
  file: string,
  where?: string,
): Problem[] {
  return error.issues.map((issue) => {
    const problem: Problem = { file, message: issue.message };
    if (where !== undefined) problem.where = where;
    if (issue.path.length > 0) problem.field = pathText(issue.path);
    if (issue.code !== 'unrecognized_keys') {
      problem.received = describeValue(valueAt(input, issue.path));
    }
    return problem;
  });
}
