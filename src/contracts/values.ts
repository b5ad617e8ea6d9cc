import type { Config } from './config.js';

/**
 * The contracts' plain values, without zod: what the pure core needs of them.
 * The schema modules re-export these; the core imports them from here, so a
 * read command (`next`, `status`) whose parse is cached loads no schema
 * library at start (about a third of a warm `next`: BENCHMARKS.md, start-up).
 */
export const DIFFICULT_REASONS = ['wrong', 'regressed', 'flaky', 'memory', 'costly'] as const;
export type DifficultReason = (typeof DIFFICULT_REASONS)[number];

/** What `next` calls "no config": the method cannot run without these. */
export function missingConfig(config: Config): string | null {
  if (config.prose.length === 0) return 'prose';
  if (config.runner === null) return 'runner';
  return null;
}
