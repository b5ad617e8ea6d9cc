import type { Complexity } from '../contracts/dataset.js';
import type { BatchPlan } from '../contracts/files.js';
import { fixedEntries, openEntries, viewDifficult } from './difficult.js';
import { batchCases, batchNumbered, countedRuns, type TuningState } from './fold.js';

/**
 * Plans batch n exactly as docs/method.md#batches says. Pure: the same history, selection,
 * settings and seed give the same plan on every machine.
 */
export interface PlanSettings {
  minBatch: number;
  maxBatch: number;
  recheck: number;
  seed: number;
  maxRetries: number;
}

export interface PlanInput {
  state: TuningState;
  selection: readonly string[];
  complexity: (id: string) => Complexity | undefined;
  settings: PlanSettings;
  size?: number;
}

const LEHMER_MODULUS = 2147483647;
const LEHMER_MULTIPLIER = 48271;

/**
 * Keys for the recheck draw: s0 = ((seed × 7919 + n × 104729) mod 2147483646) + 1,
 * then s ← s × 48271 mod 2147483647; the i-th pool id gets the i-th value
 * produced by that step (so the first key is s0 × 48271 mod m). Every product
 * stays below 2^53, so doubles are exact.
 */
export function recheckKeys(seed: number, batch: number, count: number): number[] {
  let s = ((seed * 7919 + batch * 104729) % (LEHMER_MODULUS - 1)) + 1;
  const keys: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (s * LEHMER_MULTIPLIER) % LEHMER_MODULUS;
    keys.push(s);
  }
  return keys;
}

function sizeFor(input: PlanInput, n: number): { size: number; why: string } {
  const { state, settings } = input;
  if (input.size !== undefined) return { size: input.size, why: `batch ${n} size set by --size: ${input.size}` };
  if (n === 1) return { size: settings.minBatch, why: `batch 1 takes minBatch: ${settings.minBatch}` };
  const previous = batchNumbered(state, n - 1);
  const was = previous?.plan.size ?? settings.minBatch;
  const runs = previous?.runs ?? [];
  const nomem = countedRuns(runs.filter((r) => r.half === 'nomem'));
  const mem = countedRuns(runs.filter((r) => r.half === 'mem'));
  const added = state.difficult.filter((e) => e.batch === n - 1 && !e.fixed).length;
  const counts = `${nomem} no-memory + ${mem} with-memory runs`;
  if (nomem <= 2 && mem <= 2 && added === 0) {
    const size = Math.min(settings.maxBatch, 2 * was);
    const capped = size < 2 * was ? ` (maxBatch ${settings.maxBatch})` : '';
    return { size, why: `batch ${n - 1} went smoothly (${counts}, no new difficult case): ${was} → ${size}${capped}` };
  }
  const reason = added > 0
    ? `${added} new difficult case${added === 1 ? '' : 's'}`
    : `more than 2 runs in a half`;
  return { size: was, why: `batch ${n - 1} needed work (${counts}, ${reason}): stays at ${was}` };
}

/** The next batch's plan, or null when no batch is left (go to the final check). */
export function planBatch(input: PlanInput): BatchPlan | null {
  const { state, selection, settings } = input;
  const n = (state.batches[state.batches.length - 1]?.plan.batch ?? 0) + 1;
  const inSelection = new Set(selection);

  const used: string[] = [];
  const seen = new Set<string>();
  for (const b of state.batches) {
    for (const id of batchCases(b.plan)) {
      if (!seen.has(id)) {
        seen.add(id);
        used.push(id);
      }
    }
  }
  const unused = selection.filter((id) => !seen.has(id));

  const view = viewDifficult(state, settings.maxRetries);
  const open = openEntries(view);
  const fixed = fixedEntries(view);

  const { size, why } = sizeFor(input, n);
  let kind: BatchPlan['kind'] = 'new';
  let fresh: string[];
  if (unused.length > 0) {
    fresh = unused.slice(0, size);
  } else {
    kind = 'difficult';
    fresh = open.filter((e) => inSelection.has(e.id)).slice(0, size).map((e) => e.id);
    if (fresh.length === 0) return null;
  }

  const freshSet = new Set(fresh);
  const pool = used.filter((id) => !freshSet.has(id) && inSelection.has(id));
  const keys = new Map<string, number>();
  recheckKeys(settings.seed, n, pool.length).forEach((key, i) => keys.set(pool[i]!, key));

  const recheck: string[] = [];
  const take = (id: string) => {
    if (recheck.length < settings.recheck && keys.has(id) && !recheck.includes(id)) recheck.push(id);
  };
  for (const e of open) take(e.id);
  for (const e of fixed) take(e.id);
  const rest = pool.filter((id) => !recheck.includes(id));
  const byKey = (a: string, b: string) => keys.get(a)! - keys.get(b)!;
  const complex = rest.filter((id) => input.complexity(id) === 'complex').sort(byKey);
  const others = rest.filter((id) => input.complexity(id) !== 'complex').sort(byKey);
  for (const id of [...complex, ...others]) take(id);

  return { batch: n, size, why, kind, new: fresh, recheck };
}
