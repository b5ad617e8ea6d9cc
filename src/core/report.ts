import type { CaseResult } from '../contracts/result.js';

/**
 * The per-case table of a run (docs/method.md#grading), optionally beside an earlier run
 * of the same cases. Pure: results in, rows and markdown out.
 */
export interface CaseRow {
  id: string;
  right: boolean | null;
  status: CaseResult['status'];
  rubric: string;
  tokens: number;
  llmCalls: number;
  toolCalls: number;
  memoryReads: number;
  memoryWrites: number;
  savedTwice: number;
  durationMs: number;
  costUsd: number;
  before: { right: boolean | null; tokens: number; llmCalls: number } | null;
}

export type RubricMarks = Record<string, Record<string, string>>; // case id → rubric id → met|partial|missed

export function caseRows(results: readonly CaseResult[], previous?: readonly CaseResult[], rubric: RubricMarks = {}): CaseRow[] {
  const prev = new Map((previous ?? []).map((r) => [r.id, r]));
  return results.map((r) => {
    const p = prev.get(r.id);
    const marks = rubric[r.id] ?? {};
    const counts = ['met', 'partial', 'missed'].map((m) => Object.values(marks).filter((v) => v === m).length);
    return {
      id: r.id,
      right: r.right,
      status: r.status,
      rubric: Object.keys(marks).length ? `${counts[0]}/${counts[1]}/${counts[2]}` : '',
      tokens: r.tokens,
      llmCalls: r.llmCalls,
      toolCalls: r.toolCalls,
      memoryReads: r.memoryReads,
      memoryWrites: r.memoryWrites.added + r.memoryWrites.changed + r.memoryWrites.deleted,
      savedTwice: r.memoryWrites.savedTwice,
      durationMs: r.durationMs,
      costUsd: r.costUsd,
      before: p ? { right: p.right, tokens: p.tokens, llmCalls: p.llmCalls } : null,
    };
  });
}

export const rightText = (right: boolean | null, status?: string) =>
  status === 'void' ? 'VOID' : right === null ? '?' : right ? 'right' : 'wrong';

function delta(now: number, before: number): string {
  const d = now - before;
  return d === 0 ? '±0' : d > 0 ? `+${d}` : `${d}`;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function renderCaseTable(rows: readonly CaseRow[], withBefore: boolean): string {
  const headers = ['case', 'result', 'rubric met/partial/missed', 'tokens', 'llm calls', 'tool calls', 'memory reads', 'memory writes', 'saved twice', 'time', 'cost'];
  if (withBefore) headers.push('before', 'tokens Δ');
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => ' --- ').join('|')}|`];
  for (const r of rows) {
    const cells = [
      r.id, rightText(r.right, r.status), r.rubric || '–', String(r.tokens), String(r.llmCalls), String(r.toolCalls),
      String(r.memoryReads), String(r.memoryWrites), String(r.savedTwice), `${(r.durationMs / 1000).toFixed(1)}s`, `$${r.costUsd.toFixed(4)}`,
    ];
    if (withBefore) cells.push(r.before ? rightText(r.before.right) : '–', r.before ? delta(r.tokens, r.before.tokens) : '–');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const total = (f: (r: CaseRow) => number) => rows.reduce((s, r) => s + f(r), 0);
  const right = rows.filter((r) => r.right === true).length;
  const totals = ['**total**', `${right}/${rows.length} right`, '', String(total((r) => r.tokens)), String(total((r) => r.llmCalls)),
    String(total((r) => r.toolCalls)), String(total((r) => r.memoryReads)), String(total((r) => r.memoryWrites)),
    String(total((r) => r.savedTwice)), `${(total((r) => r.durationMs) / 1000).toFixed(1)}s`, `$${total((r) => r.costUsd).toFixed(4)}`];
  if (withBefore) {
    const withPrev = rows.filter((r) => r.before);
    totals.push(`${withPrev.filter((r) => r.before!.right === true).length}/${withPrev.length} right`, delta(total((r) => r.tokens), withPrev.reduce((s, r) => s + r.before!.tokens, 0) + total((r) => (r.before ? 0 : r.tokens))));
  }
  lines.push(`| ${totals.join(' | ')} |`);
  return lines.join('\n');
}
