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

/**
 * Parse options for a file read once per process (config.yaml,
 * selection.json): no compiled fast path. zod compiles one per object schema
 * on its first parse (`new Function`, which no code cache keeps); for one
 * object it costs more than it saves. Lists of cases keep it.
 */
export const PARSED_ONCE = { jitless: true } as const;
