/**
 * A value as one canonical JSON text (keys sorted): equal values give equal
 * texts. In a module of its own, without zod, so the pure code that compares
 * cases (src/core/held-out.ts) does not load the schemas on a command's start.
 */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
