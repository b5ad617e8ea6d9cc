import type * as z from 'zod';

/** Text inside a markdown fence longer than any run of backticks in it, so no file can close it early. */
export function fenced(text: string, lang = ''): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${text.endsWith('\n') ? text : `${text}\n`}${fence}`;
}

/** A zod error as one line: each issue at its path. */
export const issuesText = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.') || 'reply'}: ${i.message}`).join('; ');
