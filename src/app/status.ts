import { viewDifficult } from '../core/difficult.js';
import { editFate } from '../core/edits.js';
import { isVoidRun, type EditKeep, type TuningState } from '../core/fold.js';
import type { NextStep } from '../core/next.js';
import { describeRewritten, type RewrittenKind } from '../core/rewritten.js';
import type { AbandonedMove } from './abandon.js';
import { nextFor } from './decide.js';
import { repairOf, withRepair } from './rewritten.js';
import type { Tuning } from './tuning.js';

/** Where a tuning stands, as data for `git tune status` (text and --json). */
export interface StatusReport {
  tuning: string;
  branch: string;
  tip: string;
  commits: number;
  dataset: { cases: number; rev: string } | null;
  selection: { selected: number; total: number } | null;
  batches: Array<{
    batch: number; size: number; kind: string; new: number; recheck: number;
    runs: Array<{ run: string; finished: boolean; verdict: string | null; void: string | null; concurrency: number; tokens: number; costUsd: number }>;
    checkpoint: boolean;
  }>;
  final: Array<{ run: string; finished: boolean; verdict: string | null }>;
  /**
   * Each edit and where it stands: `settledBy` is the run that confirmed it
   * or not, or the revert commit; `triedBy` the run that tried it;
   * `revertedBy` the revert commit; `kept` who kept it unconfirmed and why.
   */
  edits: Array<{
    commit: string; run: string; status: string; aims: string[]; hand: boolean;
    triedBy: string | null; revertedBy: string | null; kept: EditKeep | null; fate: string;
  }>;
  difficult: { open: number; fixed: number; stuck: number };
  usage: { tokens: number; costUsd: number };
  /** Steps a rewrite abandoned whose run tags were moved aside (`git tune log --abandoned`): how many, in how many moves, the last when. */
  abandoned: { steps: number; moves: number; last: string | null };
  warnings: string[];
  /** Commits that rewrote a step (docs/git-model.md#rewritten-steps), oldest first; empty when none. */
  rewritten: Array<{ commit: string; kind: RewrittenKind; files: string[]; says: string }>;
  /**
   * With a rewritten step: the command that repairs it (`restore`: puts the
   * original steps back from the reflog, when it still holds them; `undo`:
   * back to the last good step), else null.
   */
  repair: { command: string; restore: string | null; undo: string } | null;
  next: NextStep;
}

function runRow(r: TuningState['batches'][number]['runs'][number]) {
  return {
    run: r.name, finished: r.finished, verdict: r.grade?.verdict ?? (isVoidRun(r) ? 'VOID' : null),
    void: r.void, concurrency: r.concurrency, tokens: r.tokens, costUsd: r.costUsd,
  };
}

export function statusOf(tuning: Tuning, abandoned: readonly Pick<AbandonedMove, 'steps' | 'at'>[] = []): StatusReport {
  const { state } = tuning;
  const view = viewDifficult(state, tuning.config?.maxRetries ?? 3);
  return {
    tuning: tuning.name,
    branch: `tune/${tuning.name}`,
    tip: tuning.tip,
    commits: state.commits,
    dataset: state.dataset,
    selection: state.selection,
    batches: state.batches.map((b) => ({
      batch: b.plan.batch, size: b.plan.size, kind: b.plan.kind, new: b.plan.new.length, recheck: b.plan.recheck.length,
      runs: b.runs.map(runRow), checkpoint: state.checkpoints.includes(b.plan.batch),
    })),
    final: state.final.map((r) => ({ run: r.name, finished: r.finished, verdict: r.grade?.verdict ?? null })),
    edits: state.edits.map((e) => ({
      commit: e.oid, run: e.run, status: e.status, aims: e.aims, hand: e.hand,
      triedBy: e.triedBy, revertedBy: e.status === 'reverted' ? e.settledBy : null, kept: e.kept, fate: editFate(e),
    })),
    difficult: {
      open: view.filter((e) => e.status === 'open').length,
      fixed: view.filter((e) => e.status === 'fixed').length,
      stuck: view.filter((e) => e.status === 'stuck').length,
    },
    usage: state.usage,
    abandoned: { steps: abandoned.reduce((n, m) => n + m.steps, 0), moves: abandoned.length, last: abandoned[abandoned.length - 1]?.at ?? null },
    warnings: [...state.warnings, ...(tuning.notices ?? [])],
    rewritten: state.rewritten.map((r) => ({ commit: r.oid, kind: r.kind, files: r.files, says: describeRewritten(r) })),
    repair: null,
    next: nextFor(tuning),
  };
}

/** `statusOf`, with the repair of a rewritten step looked up in the reflog (src/app/rewritten.ts). */
export async function statusWithRepair(tuning: Tuning, abandoned: readonly Pick<AbandonedMove, 'steps' | 'at'>[] = []): Promise<StatusReport> {
  const report = statusOf(tuning, abandoned);
  const repair = await repairOf(tuning);
  if (!repair) return report;
  return {
    ...report,
    repair: { command: repair.command, restore: repair.restore?.command ?? null, undo: repair.undo },
    next: await withRepair(tuning, report.next),
  };
}
