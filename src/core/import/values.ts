import { FINAL_RUN, type Half, type RunId } from '../names.js';

/**
 * Tolerant readers of the values a `finetune/` folder holds. The folder
 * method's scripts fixed some shapes (`{batch: [{id}]}`, run names) and left
 * others to whoever wrote them, so keys match ignoring case, `_` and `-`, and
 * a list may sit directly in a file or under a key. Pure.
 */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const normKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');
export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value of the first key present, matching keys ignoring case, `_` and `-`. */
export function field(obj: Record<string, unknown>, ...names: string[]): unknown {
  for (const name of names) {
    const key = Object.keys(obj).find((k) => normKey(k) === normKey(name));
    if (key !== undefined) return obj[key];
  }
  return undefined;
}

export function hasField(obj: Record<string, unknown>, ...names: string[]): boolean {
  return field(obj, ...names) !== undefined;
}

/** A list of ids: strings, or objects with an id; also one comma-separated string. */
export function idsOf(value: unknown): string[] | null {
  if (typeof value === 'string') return splitIds(value);
  if (!Array.isArray(value)) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item === 'string') out.push(item);
    else if (isObject(item) && typeof field(item, 'id', 'case', 'caseId') === 'string') out.push(field(item, 'id', 'case', 'caseId') as string);
    else return null;
  }
  return out;
}

/**
 * Ids held by a file the folder method writes as `{batch: [{id, …}]}` (the
 * selection, a run's cases.json), also a plain list or `{ids|cases: [...]}`.
 */
export function batchIdsOf(value: unknown, keys: readonly string[]): string[] | null {
  if (!isObject(value)) return idsOf(value);
  return idsOf(field(value, 'batch', ...keys));
}

export function splitIds(text: string): string[] {
  const t = text.trim();
  if (/^\(?(none|-|—)?\)?$/i.test(t)) return [];
  return t.split(/[\s,;]+/).map((s) => s.replace(/^[`*[(]+|[`*\]).]+$/g, '')).filter(Boolean);
}

/** A list held directly or under one of `keys`. */
export function listOf(value: unknown, keys: string[]): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (isObject(value)) {
    const inner = field(value, ...keys);
    if (Array.isArray(inner)) return inner;
  }
  return null;
}

/** A batch number: `3`, `batch03`, or a run name such as `batch03-nomem-run2`. */
export function batchNumberOf(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const m = /^(?:batch)?0*(\d+)(?:-(?:nomem|mem)-run\d+)?$/i.exec(value.trim());
    if (m) return Number(m[1]);
  }
  return null;
}

/** `batch03-nomem-run2`, also written `batch3-…`; `final-check`. */
export function parseRunFolderName(name: string): RunId | null {
  if (name === FINAL_RUN) return { kind: 'final' };
  const m = /^batch0*(\d+)-(nomem|mem)-run0*(\d+)$/i.exec(name);
  if (!m || Number(m[1]) < 1 || Number(m[3]) < 1) return null;
  return { kind: 'batch', batch: Number(m[1]), half: m[2]!.toLowerCase() as Half, number: Number(m[3]) };
}

const TRUE_WORDS = new Set(['right', 'yes', 'y', 'true', 'correct', 'pass', 'passed', 'ok', '✓', '✔', '✅', '1', 'met']);
const FALSE_WORDS = new Set(['wrong', 'no', 'n', 'false', 'incorrect', 'fail', 'failed', '✗', '✘', '❌', 'x', '0', 'error', 'missed']);

/** right/wrong from the words folders use (yes/no, pass/fail, ✓/✗, true/false). */
export function rightWord(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : null;
  if (typeof value !== 'string') return null;
  const w = value.replace(/[*_`]/g, '').trim().toLowerCase().split(/\s+/)[0] ?? '';
  if (TRUE_WORDS.has(w)) return true;
  if (FALSE_WORDS.has(w)) return false;
  return null;
}

export function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function reasonText(value: unknown): string | null {
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (value === true) return 'void';
  return null;
}
