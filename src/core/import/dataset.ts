import { field, isObject } from './values.js';

/**
 * The folder's dataset.json as the folder method writes it: `{cases: [...]}`
 * or `{samples: [...]}` (also a plain list), rubric items `{id, text}` or
 * plain strings, which get the ids `r1`, `r2`, … in their order. Returns the
 * cases to validate as `git tune dataset import` does, or null when the value
 * holds no list of cases. Pure.
 */
export function folderDatasetCases(value: unknown): unknown[] | null {
  const list = Array.isArray(value) ? value : isObject(value) ? (field(value, 'cases') ?? field(value, 'samples')) : null;
  if (!Array.isArray(list)) return null;
  return list.map((item) => {
    if (!isObject(item) || !Array.isArray(item.rubric)) return item;
    const rubric = item.rubric.map((r, i) => (typeof r === 'string' ? { id: `r${i + 1}`, text: r } : r));
    return { ...item, rubric };
  });
}
