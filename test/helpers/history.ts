import { createHash } from 'node:crypto';
import { configSchema, withDefaults, type Config, type ConfigInput } from '../../src/contracts/config.js';
import type { Complexity } from '../../src/contracts/dataset.js';
import type { DifficultReason } from '../../src/contracts/files.js';
import { foldHistory, runName, type HistoryCommit, type TuningState } from '../../src/core/fold.js';
import type { NextInput } from '../../src/core/next.js';
import { formatStep, type DifficultChange, type Keep, type Step, type StepData, type Verdict } from '../../src/core/steps.js';

/**
 * Hand-built tuning histories, made the way the product makes them: each
 * step is data turned into a commit message by `formatStep`, with a fake but
 * stable oid, and the state is `foldHistory` of those commits.
 */
export const TUNING = 'demo';

/** A stable, distinct 40-hex oid per commit number (distinct in its first 7 characters too). */
export function fakeOid(n: number): string {
  return createHash('sha1').update(`fake commit ${n}`).digest('hex');
}

export const ids = (prefix: string, from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${String(from + i).padStart(2, '0')}`);

export const nomem = (batch: number, number: number) => runName(batch, 'nomem', number);
export const mem = (batch: number, number: number) => runName(batch, 'mem', number);

export interface FinishOptions {
  concurrency?: number;
  void?: string | null;
  stopped?: string | null;
  tokens?: number;
  costUsd?: number;
  /** The prose the run ran (`Tune-Prose`). */
  prose?: string;
}

export interface GradeOptions {
  review?: boolean;
  difficult?: DifficultChange[];
  /** Unconfirmed edits the grade keeps on purpose (`git tune grade --keep`). */
  keep?: Keep;
  /** The prose the branch holds after the grade (`Tune-Prose`). */
  prose?: string;
}

export class History {
  readonly commits: HistoryCommit[] = [];

  constructor(readonly tuning: string = TUNING) {}

  /** Appends one step commit; returns its oid. */
  step(data: StepData, difficult: DifficultChange[] = []): string {
    const oid = fakeOid(this.commits.length + 1);
    const step = { ...data, tuning: this.tuning, difficult } as Step;
    this.commits.push({ oid, message: formatStep(step, `tune(${this.tuning}): ${data.step}`) });
    return oid;
  }

  /** A plain commit made by hand (no trailers). */
  hand(touchesProse = true, message = 'reword the refund rule\n'): string {
    const oid = fakeOid(this.commits.length + 1);
    this.commits.push({ oid, message, touchesProse });
    return oid;
  }

  init(): this {
    this.step({ step: 'init', tuning: this.tuning });
    return this;
  }

  dataset(cases: number, rev = 'rev0001'): this {
    this.step({ step: 'dataset', cases, rev });
    return this;
  }

  select(selected: number, total = selected): this {
    this.step({ step: 'select', selected, total });
    return this;
  }

  /** init, config, dataset of `total` cases, selection of `selected`. */
  setup(selected: number, total = selected): this {
    this.init();
    this.step({ step: 'config', keys: ['prose', 'runner'] });
    return this.dataset(total).select(selected, total);
  }

  plan(
    batch: number,
    fresh: string[],
    recheck: string[] = [],
    opts: { size?: number; kind?: 'new' | 'difficult'; difficult?: DifficultChange[] } = {},
  ): this {
    this.step(
      { step: 'plan', batch, size: opts.size ?? fresh.length, kind: opts.kind ?? 'new', new: fresh, recheck },
      opts.difficult,
    );
    return this;
  }

  start(run: string, concurrency = 8): string {
    return this.step({ step: 'run-start', run, concurrency });
  }

  finish(run: string, opts: FinishOptions = {}): string {
    return this.step({
      step: 'run', run, concurrency: opts.concurrency ?? 8, cases: 0,
      void: opts.void ?? null, stopped: opts.stopped ?? null,
      tokens: opts.tokens ?? 1000, costUsd: opts.costUsd ?? 0.01,
      ...(opts.prose !== undefined ? { prose: opts.prose } : {}),
    });
  }

  /** A run stopped part-way (budget, sandbox down): recorded, not finished. */
  stop(run: string, reason: string, tokens = 500, costUsd = 0.5): string {
    return this.step({ step: 'run-stop', run, reason, tokens, costUsd });
  }

  grade(run: string, verdict: Verdict, wrong: string[] = [], opts: GradeOptions = {}): string {
    return this.step({ step: 'grade', run, verdict, wrong, review: opts.review ?? true, ...(opts.keep ? { keep: opts.keep } : {}), ...(opts.prose !== undefined ? { prose: opts.prose } : {}) }, opts.difficult);
  }

  /** start + finish + grade, the usual shape of one run. */
  ran(run: string, verdict: Verdict, wrong: string[] = [], opts: GradeOptions & FinishOptions = {}): this {
    this.start(run, opts.concurrency ?? 8);
    this.finish(run, opts);
    this.grade(run, verdict, wrong, opts);
    return this;
  }

  /** A run the runner itself recorded VOID (never graded). */
  voided(run: string, concurrency = 8, reason = 'exit 137'): this {
    this.start(run, concurrency);
    this.finish(run, { concurrency, void: reason });
    return this;
  }

  edit(run: string, aims: string[] | null = null): string {
    return this.step({ step: 'edit', run, aims });
  }

  revert(...reverts: string[]): string {
    return this.step({ step: 'revert', reverts });
  }

  difficult(...changes: DifficultChange[]): this {
    this.step({ step: 'difficult' }, changes);
    return this;
  }

  candidate(run: string): this {
    this.step({ step: 'candidate', run });
    return this;
  }

  checkpoint(batch: number): this {
    this.step({ step: 'checkpoint', batch });
    return this;
  }

  /** A batch that went smoothly: planned, one PASSED run in each half, checkpointed. */
  smoothBatch(batch: number, fresh: string[], recheck: string[] = [], opts: { size?: number } = {}): this {
    this.plan(batch, fresh, recheck, opts);
    this.ran(nomem(batch, 1), 'PASSED');
    this.candidate(nomem(batch, 1));
    this.ran(mem(batch, 1), 'PASSED');
    return this.checkpoint(batch);
  }

  fold(selection: readonly string[] = []): TuningState {
    return foldHistory(this.tuning, this.commits, selection);
  }
}

export const add = (id: string, reason: DifficultReason): DifficultChange => ({ op: 'add', id, reason });
export const fix = (id: string): DifficultChange => ({ op: 'fix', id });

/** A complete config (prose and runner set), with every default filled in. */
export function makeConfig(over: Partial<ConfigInput> = {}): Config {
  return withDefaults(
    configSchema.parse({ prose: ['agents/**/*.md'], runner: { command: ['node', 'agent.js'] }, ...over }),
  );
}

export function complexityOf(complex: readonly string[]): (id: string) => Complexity {
  const set = new Set(complex);
  return (id) => (set.has(id) ? 'complex' : 'medium');
}

export function nextInput(
  history: History,
  opts: { config?: Config | null; selection?: readonly string[]; complex?: readonly string[] } = {},
): NextInput {
  const selection = opts.selection ?? [];
  return {
    state: history.fold(selection),
    config: opts.config === undefined ? makeConfig() : opts.config,
    selection,
    complexity: complexityOf(opts.complex ?? []),
    dir: `.tune/${history.tuning}`,
  };
}

/**
 * Batch 1 planned on a, b, c; run 1 wrong on a and b; one edit aimed at a,
 * one at b; run 2 started and finished, not graded: the history every
 * grading rule is tried on (which edit the grade confirms, reverts or keeps).
 */
export function twoEditsTried(): { h: History; fixesA: string; fixesB: string } {
  const h = new History().setup(3).plan(1, ['a', 'b', 'c']).ran(nomem(1, 1), 'NO CHANGE', ['a', 'b']);
  const fixesA = h.edit(nomem(1, 1), ['a']);
  const fixesB = h.edit(nomem(1, 1), ['b']);
  h.start(nomem(1, 2));
  h.finish(nomem(1, 2));
  return { h, fixesA, fixesB };
}
