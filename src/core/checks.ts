import type { Check } from '../contracts/dataset.js';
import type { CheckOutcome } from '../contracts/result.js';

/**
 * The deterministic checks of a case (docs/contracts.md#dataset), except `command`,
 * which runs a process and lives in src/run. Pure.
 * - equals: strings compare trimmed; other values compare as JSON.
 * - contains / not-contains / regex: on the answer as text (JSON for non-strings), case-sensitive.
 * - json: the answer (or the JSON a string answer holds) at a path like `$.plan.steps[0]`.
 */
export function answerText(answer: unknown): string {
  return typeof answer === 'string' ? answer : JSON.stringify(answer) ?? '';
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.trim() === b.trim();
  return canonical(a) === canonical(b);
}

/** `$`, `.key`, `['key']`, `[n]`. Returns undefined where the path leads nowhere. */
export function readJsonPath(root: unknown, path: string): unknown {
  const tokens = /^\$((?:\.[A-Za-z_$][\w$-]*|\[\d+\]|\['[^']*'\]|\["[^"]*"\])*)$/.exec(path.trim());
  if (!tokens) throw new Error(`unsupported JSON path ${path}: use $.key, $['key'] and $.list[0]`);
  let cur: unknown = root;
  for (const m of tokens[1]!.matchAll(/\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g)) {
    const key = m[1] ?? m[3] ?? m[4];
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = key !== undefined ? (cur as Record<string, unknown>)[key] : (cur as unknown[])[Number(m[2])];
  }
  return cur;
}

function jsonOf(answer: unknown): unknown {
  if (typeof answer !== 'string') return answer;
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
}

export function runCheck(check: Exclude<Check, { type: 'command' }>, answer: unknown): CheckOutcome {
  const text = answerText(answer);
  switch (check.type) {
    case 'equals':
      return { type: check.type, pass: sameValue(answer, check.value), detail: sameValue(answer, check.value) ? undefined : `expected ${JSON.stringify(check.value)}` };
    case 'contains':
      return { type: check.type, pass: text.includes(check.value), detail: text.includes(check.value) ? undefined : `missing ${JSON.stringify(check.value)}` };
    case 'not-contains':
      return { type: check.type, pass: !text.includes(check.value), detail: text.includes(check.value) ? `contains ${JSON.stringify(check.value)}` : undefined };
    case 'regex': {
      let re: RegExp;
      try {
        re = new RegExp(check.value, check.flags);
      } catch (err) {
        return { type: check.type, pass: false, detail: `bad regex: ${(err as Error).message}` };
      }
      const pass = re.test(text);
      return { type: check.type, pass, detail: pass ? undefined : `no match for /${check.value}/` };
    }
    case 'json': {
      let found: unknown;
      try {
        found = readJsonPath(jsonOf(answer), check.path);
      } catch (err) {
        return { type: check.type, pass: false, detail: (err as Error).message };
      }
      const pass = found !== undefined && sameValue(found, check.value);
      return { type: check.type, pass, detail: pass ? undefined : `${check.path} is ${JSON.stringify(found) ?? 'missing'}, expected ${JSON.stringify(check.value)}` };
    }
  }
}
