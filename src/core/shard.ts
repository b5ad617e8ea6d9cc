import { createHash } from 'node:crypto';

/**
 * Sharding the final check across CI jobs (docs/ci.md), and choosing among
 * target models. Pure.
 *
 * The rule: shard i of n takes every n-th case of the selection, starting at
 * selection index i−1 (0-based index k goes to shard k mod n + 1). The
 * selection already interleaves classes and puts rubric and complex cases
 * first inside each class, so striding gives every shard a similar mix of
 * classes and complexity (and so a similar wall time), where contiguous
 * ranges would give one shard all the complex cases.
 */
export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

export const SHARD_RULE = 'every n-th case of the selection, from index i−1';

export function parseShard(text: string): Shard | null {
  const m = /^\s*([1-9]\d*)\s*\/\s*([1-9]\d*)\s*$/.exec(text);
  if (!m) return null;
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (index > count || count > 1000) return null;
  return { index, count };
}

export const formatShard = (s: Shard) => `${s.index}/${s.count}`;

/** The folder name of a shard's result set: `2-of-5`. */
export const shardFolder = (s: Shard) => `${s.index}-of-${s.count}`;

export const WHOLE: Shard = { index: 1, count: 1 };

export function shardCases<T>(selection: readonly T[], shard: Shard): T[] {
  return selection.filter((_, k) => k % shard.count === shard.index - 1);
}

/** Names the selection (its ids in order): shards agree on it or do not belong together. */
export function selectionHash(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join('\n')).digest('hex').slice(0, 16);
}

/** What a shard's manifest says about where it belongs. */
export interface ShardIdentity {
  /** Where it was read from, for messages. */
  source: string;
  tuning: string;
  tip: string;
  seed: number;
  selectionHash: string;
  target: string | null;
  shard: Shard;
  cases: readonly string[];
}

const targetLabel = (t: string | null) => (t === null ? 'no target' : `target ${t}`);

/** The shards grouped by target, in the order targets first appear. */
export function groupByTarget<T extends { target: string | null }>(items: readonly T[]): Array<{ target: string | null; items: T[] }> {
  const groups: Array<{ target: string | null; items: T[] }> = [];
  for (const item of items) {
    let g = groups.find((x) => x.target === item.target);
    if (!g) groups.push((g = { target: item.target, items: [] }));
    g.items.push(item);
  }
  return groups;
}

/**
 * Every reason a list of shards cannot be merged into one final check, per
 * target: they must share the tuning, tip, seed and selection, cover
 * shards 1..n of one n exactly once, and each hold exactly the cases the
 * rule gives its index. Empty when they belong together.
 */
export function shardSetProblems(shards: readonly ShardIdentity[], selection: readonly string[] | null): string[] {
  const problems: string[] = [];
  if (shards.length === 0) return ['no result set was given'];
  const differ = <K extends keyof ShardIdentity>(key: K, label: string, show: (v: ShardIdentity[K]) => string) => {
    const values = [...new Set(shards.map((s) => show(s[key])))];
    if (values.length > 1) {
      problems.push(`different ${label}: ${values.map((v) => `${v} (${shards.filter((s) => show(s[key]) === v).map((s) => s.source).join(', ')})`).join(' vs ')}`);
    }
  };
  differ('tuning', 'tunings', (v) => String(v));
  differ('tip', 'tuning tips (the branch moved between shards: run them all at one commit)', (v) => String(v).slice(0, 12));
  differ('seed', 'seeds', (v) => String(v));
  differ('selectionHash', 'selections', (v) => String(v));
  if (selection !== null && shards.some((s) => s.selectionHash !== selectionHash(selection))) {
    problems.push(`the selection at the tuning's tip is not the one the shards ran (${shards.filter((s) => s.selectionHash !== selectionHash(selection)).map((s) => s.source).join(', ')})`);
  }
  for (const group of groupByTarget(shards)) {
    const label = group.items.length === shards.length ? '' : ` (${targetLabel(group.target)})`;
    const counts = [...new Set(group.items.map((s) => s.shard.count))];
    if (counts.length > 1) {
      problems.push(`shards of different splits${label}: ${counts.map((n) => `of ${n}`).join(', ')}`);
      continue;
    }
    const n = counts[0]!;
    for (let i = 1; i <= n; i++) {
      const at = group.items.filter((s) => s.shard.index === i);
      if (at.length === 0) problems.push(`shard ${i}/${n} is missing${label}`);
      if (at.length > 1) problems.push(`shard ${i}/${n} is given ${at.length} times${label}: ${at.map((s) => s.source).join(', ')}`);
    }
    if (selection !== null) {
      for (const s of group.items) {
        const want = shardCases(selection, s.shard);
        if (want.join('\n') !== s.cases.join('\n')) problems.push(`${s.source} does not hold the cases of shard ${formatShard(s.shard)}`);
      }
    }
  }
  return problems;
}

/** Items of the shards put back in selection order (each shard's in its own order). */
export function mergeInSelectionOrder<T extends { id: string }>(selection: readonly string[], parts: ReadonlyArray<readonly T[]>): T[] {
  const byId = new Map<string, T>();
  for (const part of parts) for (const item of part) byId.set(item.id, item);
  return selection.map((id) => byId.get(id)).filter((x): x is T => x !== undefined);
}

/** One target's final check, in numbers. */
export interface Receipt {
  target: string | null;
  verdict: string;
  casesRight: number;
  casesTotal: number;
  tokens: number;
  costUsd: number;
}

/** The best target: most cases right, then fewest tokens, then the lowest cost (then the name, for a stable pick). */
export function bestReceipt<R extends Receipt>(receipts: readonly R[]): R | null {
  const sorted = [...receipts].sort((a, b) =>
    b.casesRight - a.casesRight || a.tokens - b.tokens || a.costUsd - b.costUsd || String(a.target).localeCompare(String(b.target)));
  return sorted[0] ?? null;
}
