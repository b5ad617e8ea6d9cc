import { describeValue, type Problem } from '../../contracts/problems.js';
import { caseResultSchema, usageSchema, type CaseResult } from '../../contracts/result.js';
import { field, isObject, listOf, num, reasonText, rightWord } from './values.js';

/**
 * A run's `batch/batch.json`: the folder method's `{batch: {concurrency, …}}`
 * (the concurrency the run ran at decides a VOID's re-run), or per-case
 * results as a list, `{results|cases: [...]}` or an object keyed by id, each
 * `{id, right|correct|pass|…}` or `{status: "right"|"fail"|…}`; a result with
 * only an `error` is wrong. Tokens: `tokens`, else the sum of `usage[]`
 * input + output tokens; cost: `costUsd`|`cost`. Top-level `tokens`,
 * `costUsd`, `concurrency`, `void`, `stopped`|`sandboxDown` win over sums. Pure.
 */
export interface RunResults {
  right: Map<string, boolean>;
  /** Each case's result as the folder wrote it, in the file's order. */
  items: Array<{ id: string; raw: Record<string, unknown>; right: boolean | null; tokens: number; costUsd: number }>;
  tokens: number;
  costUsd: number;
  concurrency: number | null;
  void: string | null;
  stopped: string | null;
}

function usageTokens(value: unknown): { tokens: number; costUsd: number } | null {
  if (!Array.isArray(value)) return null;
  let tokens = 0;
  let costUsd = 0;
  for (const u of value) {
    if (!isObject(u)) continue;
    tokens += (num(field(u, 'inputTokens')) ?? 0) + (num(field(u, 'outputTokens')) ?? 0);
    costUsd += num(field(u, 'costUsd', 'cost')) ?? 0;
  }
  return { tokens, costUsd };
}

/** `{batch: {…}, …}` (what `zen run batch` writes) read as the object inside, the outer keys winning. */
function unwrapBatch(value: unknown): unknown {
  if (!isObject(value)) return value;
  const inner = field(value, 'batch');
  if (!isObject(inner)) return value;
  const outer = Object.fromEntries(Object.entries(value).filter(([k]) => k.toLowerCase() !== 'batch'));
  return { ...inner, ...outer };
}

export function readResults(raw: unknown, file: string, problems: Problem[]): RunResults {
  const out: RunResults = { right: new Map(), items: [], tokens: 0, costUsd: 0, concurrency: null, void: null, stopped: null };
  const value = unwrapBatch(raw);
  let items: Array<[string | null, unknown]> = [];
  const listed = listOf(value, ['results', 'cases', 'items']);
  if (listed) items = listed.map((r) => [null, r]);
  else if (isObject(value)) {
    const keyed = field(value, 'results', 'cases');
    if (isObject(keyed)) items = Object.entries(keyed);
  } else {
    problems.push({ file, message: 'must be the run\'s results: {"batch": {"concurrency": 8, …}}, a list, or an object with `results`', received: describeValue(value) });
    return out;
  }
  items.forEach(([key, r], i) => {
    if (!isObject(r)) return;
    const id = key ?? field(r, 'id', 'case', 'caseId');
    if (typeof id !== 'string') {
      problems.push({ file, where: `result ${i}`, field: 'id', message: 'names no case (id, case or caseId)', received: describeValue(id) });
      return;
    }
    let right = rightWord(field(r, 'right', 'correct', 'pass', 'passed', 'ok', 'success'));
    if (right === null) right = rightWord(field(r, 'status', 'verdict', 'result', 'grade', 'outcome'));
    if (right === null && reasonText(field(r, 'error')) !== null) right = false;
    if (right !== null) out.right.set(id, right);
    const fromUsage = usageTokens(field(r, 'usage'));
    const tokens = num(field(r, 'tokens', 'totalTokens')) ?? fromUsage?.tokens ?? 0;
    const costUsd = num(field(r, 'costUsd', 'cost')) ?? fromUsage?.costUsd ?? 0;
    out.tokens += tokens;
    out.costUsd += costUsd;
    out.items.push({ id, raw: r, right, tokens, costUsd });
  });
  if (isObject(value)) {
    const totals = isObject(field(value, 'usage', 'totals')) ? (field(value, 'usage', 'totals') as Record<string, unknown>) : {};
    out.tokens = num(field(value, 'tokens', 'totalTokens')) ?? num(field(totals, 'tokens', 'totalTokens')) ?? out.tokens;
    out.costUsd = num(field(value, 'costUsd', 'cost', 'totalCostUsd')) ?? num(field(totals, 'costUsd', 'cost')) ?? out.costUsd;
    const c = num(field(value, 'concurrency'));
    out.concurrency = c !== null && Number.isInteger(c) && c >= 1 ? c : null;
    out.void = reasonText(field(value, 'void'));
    out.stopped = reasonText(field(value, 'stopped', 'sandboxDown'));
  }
  out.tokens = Math.round(out.tokens);
  return out;
}

/**
 * The run's results in the shape `git tune run` records (`results.json`), so
 * `git tune show` and the next findings draft can read an imported run.
 * Numbers the folder did not keep are 0. Null when a result does not fit.
 */
export function caseResultsFile(results: RunResults, revs: ReadonlyMap<string, string>): string | null {
  const out: CaseResult[] = [];
  for (const item of results.items) {
    const r = item.raw;
    const count = (key: string) => {
      const n = num(field(r, key));
      return n !== null && Number.isInteger(n) && n >= 0 ? n : 0;
    };
    const usage = usageSchema.array().safeParse(field(r, 'usage') ?? []);
    const error = reasonText(field(r, 'error'));
    const voidReason = reasonText(field(r, 'void'));
    const parsed = caseResultSchema.safeParse({
      id: item.id, rev: revs.get(item.id) ?? '',
      status: voidReason ? 'void' : error ? 'error' : 'ok',
      ...(field(r, 'answer') !== undefined ? { answer: field(r, 'answer') } : {}),
      right: item.right, checks: [], usage: usage.success ? usage.data : [],
      tokens: item.tokens, costUsd: item.costUsd,
      llmCalls: count('llmCalls'), toolCalls: count('toolCalls'), memoryReads: count('memoryReads'),
      memoryWrites: { added: 0, changed: 0, deleted: 0, savedTwice: count('savedTwice'), refused: [] },
      durationMs: num(field(r, 'durationMs')) ?? 0, exitCode: null, signal: null,
      ...(error ? { error } : {}), ...(voidReason ? { void: voidReason } : {}),
      startedAt: typeof field(r, 'startedAt') === 'string' ? field(r, 'startedAt') : '',
    });
    if (!parsed.success) return null;
    out.push(parsed.data);
  }
  return `${JSON.stringify(out, null, 2)}\n`;
}
