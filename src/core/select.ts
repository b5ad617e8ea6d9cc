import { createHash } from 'node:crypto';
import type { Case, Complexity } from '../contracts/dataset.js';
import { compareIds } from './difficult.js';

/**
 * The selection order (docs/method.md#selection): classes take turns, largest class first
 * (ties by name); inside a class, cases with a rubric first, then complex,
 * medium, simple, then a seeded order. `limit` cuts the tail.
 */
const COMPLEXITY_RANK: Record<Complexity, number> = { complex: 0, medium: 1, simple: 2 };

/** The seeded order: sha256 of `seed:id`, compared as hex, stable everywhere. */
export function seededKey(seed: number, id: string): string {
  return createHash('sha256').update(`${seed}:${id}`).digest('hex');
}

export type SelectableCase = Pick<Case, 'id' | 'class' | 'complexity' | 'rubric'>;

export function selectCases(cases: readonly SelectableCase[], seed: number, limit: number | null): string[] {
  const classes = new Map<string, SelectableCase[]>();
  for (const c of cases) {
    const list = classes.get(c.class) ?? [];
    list.push(c);
    classes.set(c.class, list);
  }
  const order = [...classes.entries()].sort(
    ([nameA, a], [nameB, b]) => b.length - a.length || compareIds(nameA, nameB),
  );
  const queues = order.map(([, list]) =>
    list
      .map((c) => ({ c, key: seededKey(seed, c.id) }))
      .sort(
        (a, b) =>
          Number(!a.c.rubric?.length) - Number(!b.c.rubric?.length) ||
          COMPLEXITY_RANK[a.c.complexity] - COMPLEXITY_RANK[b.c.complexity] ||
          compareIds(a.key, b.key),
      )
      .map(({ c }) => c.id),
  );
  const out: string[] = [];
  for (let round = 0; out.length < cases.length; round++) {
    for (const q of queues) if (round < q.length) out.push(q[round]!);
  }
  return limit === null ? out : out.slice(0, limit);
}
