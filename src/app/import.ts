import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { configSchema, withDefaults, type Config } from '../contracts/config.js';
import { datasetRev, type Case } from '../contracts/dataset.js';
import { caseResultSchema, usageSchema, type CaseResult } from '../contracts/result.js';
import { DIFFICULT_REASONS, type BatchPlan, type DifficultReason, type Selection } from '../contracts/files.js';
import { describeValue, formatProblem, pathText, type Problem } from '../contracts/problems.js';
import { splitArgs } from '../core/argv.js';
import { countedRuns, foldHistory, halfRuns, type HistoryCommit, type TuningState } from '../core/fold.js';
import { batchLabel, branchName, branchRef, FINAL_RUN, formatRunName, tagName, tagRef, tuningDir, type Half, type RunId } from '../core/names.js';
import { selectCases } from '../core/select.js';
import { formatStep, VERDICTS, type DifficultChange, type StepData, type Verdict } from '../core/steps.js';
import { TuneError, usageError } from '../errors.js';
import { resolveIdentity } from '../git/identity.js';
import { withToolLock } from '../git/lock-owner.js';
import type { FileChange, GitRepo } from '../git/types.js';
import { assertNoSecrets, type WriteContext } from './commit.js';
import { crashPoint } from './crash.js';
import { CONFIG_FILE, parseConfig, renderConfig } from './config-file.js';
import { DATASET_FILE, formatDatasetJsonl, readDatasetInput } from './dataset-file.js';
import { clearJournal, writeJournal } from './recover.js';
import { reportChanges } from './reports.js';
import { assertCleanGitState, SELECTION_FILE } from './tuning.js';

/**
 * `git tune import <dir>` (SPEC section 10): a folder-based tuning (a
 * `finetune/` folder) becomes a tuning branch whose history replays it, so
 * `git tune next` carries on where the folder stood.
 *
 * Three moves, as everywhere: `readFolder` reads the folder into plain data
 * (the only I/O before writing), `planImport` turns it into the list of step
 * commits (pure; every problem is collected and the folder refused whole),
 * `applyImport` writes them and switches to the branch.
 *
 * What a folder may hold (the folder method never fixed its JSON shapes, so
 * each file is read tolerantly; keys match ignoring case, `_`, `-`):
 *
 * - `dataset.json` (or .jsonl/.yaml/.yml): a list of cases or `{cases: [...]}`,
 *   checked with the rules of `git tune dataset import`. Required.
 * - `config.json`: the settings by their config.yaml names (`limit`,
 *   `minBatch`, `maxBatch`, `recheck`, `concurrency`, `seed`, `maxRetries`,
 *   `maxRuns`, `prose`, `memoryPolicy`, `runner`, `judge`, `editor`, `memory`,
 *   `budget`, `targets`; `min_batch` works too). A command may be a string
 *   (`"node agent.js"`), a list of arguments, or `{command, shell, ...}`; a
 *   glob list may be one string. Other keys are left out with a warning.
 *   Missing: the defaults `git tune init` writes.
 * - `selection.json`: a list of ids, or `{ids|selection|cases: [...]}`; kept in
 *   the folder's order. Missing: the `git tune select` order (a warning).
 * - `difficult.json`: a list, or `{entries|difficult|cases: [...]}`, of
 *   `{id, reason|why, batch, fixed, notes, fixedIn}`. `batch` (a number,
 *   `batch03`, or a run name; 0 = before any batch) is the batch the entry was
 *   added in and is required; `fixed` may also be `status: "fixed"`.
 * - `memory/candidate.json`: names the run the candidate came from: a run name,
 *   or `{run|from|source: <run>}`, or `{batch: n}` (that batch's PASSED
 *   no-memory run). `memory/last-good.json`: names the batch it holds: `{batch}`,
 *   `batch03`, a run name, or a number. Only these pointers are read.
 * - `runs/batchNN-(nomem|mem)-runN/` (`batch3` works too) and
 *   `runs/final-check/`, each with:
 *   - `cases.json`: ids, or cases with `id`; `plan.json`: `{batch, size, why,
 *     kind, new, recheck}` (also `newCases`/`recheckCases`/`new_ids`...). A
 *     batch's plan comes from the first of its run folders holding plan.json,
 *     else from cases.json (cases never used before are new, the rest recheck).
 *   - `batch/`: the run started. `batch/batch.json`: it finished. Its
 *     per-case results are a list (or `{results|cases: [...]}`, or an object
 *     keyed by id) of `{id|case|caseId, right|correct|pass|passed|ok: bool}` or
 *     `{status|verdict|result: "right"|"wrong"|"pass"|"fail"...}`; a result with
 *     only an `error` is wrong. Tokens: `tokens`, else the sum of `usage[]`
 *     input + output tokens; cost: `costUsd`|`cost`. Top-level `tokens`,
 *     `costUsd`, `concurrency`, `void`, `stopped`|`sandboxDown` win over sums.
 *   - `findings.md`: its first level-2 heading is the verdict (`## PASSED`,
 *     `## Verdict: NO CHANGE`, `## no_change` all read as such); no `##`
 *     heading at all = not graded yet. For the final check VERIFIED, VOID,
 *     and anything else is FAILED. A `##` heading containing "review" is the
 *     review PASSED needs. The wrong cases: a `Wrong: id, id` line if there is
 *     one; else each case's right/wrong from batch.json, overridden by a
 *     findings table with an id column (`id`, `case`) and a right column
 *     (`right`, `correct`, `result`, `pass`, `ok`, `status`) holding yes/no,
 *     right/wrong, pass/fail, true/false, ✓/✗. A case nothing speaks for is right.
 *   - `changes.md`: the edit made after grading; `Aims: id, id` records its aims.
 *   Other small files directly in a run folder (.json .md .txt .yaml) are
 *   copied; per-case folders and logs are not (they are bulky).
 *
 * The replay, oldest first: init (config.yaml), dataset, select, difficult
 * entries added before batch 1, then per batch: plan; per run (nomem before
 * mem, by number) run-start, run (tagged), grade, edit, and for a PASSED at
 * `maxRuns` a revert of every unconfirmed and pending edit of its half (the
 * folder method reverts by hand before writing PASSED there); the batch's
 * difficult entries after its last graded run; candidate after the no-memory
 * half (when with-memory runs follow, or candidate.json names that run);
 * checkpoint after the with-memory half (when a later batch or the final
 * check follows, or last-good.json names that batch or a later one); then the
 * final check.
 */

export interface RunFolder {
  /** The folder's name under runs/ as found. */
  folder: string;
  hasBatchDir: boolean;
  /** Compact files, relative to the run folder (posix), in a stable order. */
  files: string[];
}

export interface FolderInput {
  /** The folder as problems name it (relative to the working directory). */
  shown: string;
  /** The validated dataset ([] when it was refused; see problems). */
  cases: Case[];
  /** Text of every file read, by path relative to the folder (posix). */
  files: ReadonlyMap<string, string>;
  runFolders: RunFolder[];
  /** Problems found while reading (the dataset's, listed the way `dataset import` does). */
  problems: string[];
}

export interface PlannedStep {
  data: StepData;
  difficult: DifficultChange[];
  subject: string;
  body: string;
  /** Paths relative to the repository root, with their content. */
  files: Array<[path: string, content: string]>;
  tags: string[];
  /** For a revert: the indexes (in the plan's steps) of the edits it reverts. */
  reverts?: number[];
}

export interface ImportPlan {
  tuning: string;
  dir: string;
  steps: PlannedStep[];
  tags: string[];
  warnings: string[];
  /** The state the imported history folds to (placeholder oids). */
  state: TuningState;
}

const COMPACT_EXTENSIONS = new Set(['.json', '.md', '.txt', '.yaml', '.yml']);
const COMPACT_MAX_BYTES = 1024 * 1024;
const DATASET_NAMES = ['dataset.json', 'dataset.jsonl', 'dataset.yaml', 'dataset.yml'];
const TOP_FILES = ['config.json', 'selection.json', 'difficult.json', 'memory/last-good.json', 'memory/candidate.json'];

// ---------------------------------------------------------------------------
// read

async function readIfFile(file: string): Promise<string | null> {
  const stat = await fs.stat(file).catch(() => null);
  return stat?.isFile() ? fs.readFile(file, 'utf8') : null;
}

/** Reads everything the import needs from the folder; the only I/O before writing. */
export async function readFolder(dir: string, cwd: string): Promise<FolderInput> {
  const root = path.resolve(cwd, dir);
  const shown = path.relative(cwd, root) || '.';
  const stat = await fs.stat(root).catch(() => null);
  if (!stat?.isDirectory()) {
    throw usageError('no-such-folder', `${dir} is not a folder`, 'git tune import finetune/');
  }
  const files = new Map<string, string>();
  const problems: string[] = [];
  for (const rel of TOP_FILES) {
    const text = await readIfFile(path.join(root, rel));
    if (text !== null) files.set(rel, text);
  }

  let cases: Case[] = [];
  const datasetFiles: string[] = [];
  for (const n of DATASET_NAMES) if ((await readIfFile(path.join(root, n))) !== null) datasetFiles.push(n);
  if (datasetFiles.length === 0) {
    problems.push(formatProblem({ file: `${shown}/dataset.json`, message: 'is missing: the folder must hold its dataset (a list of cases)' }));
  } else if (datasetFiles.length > 1) {
    problems.push(formatProblem({ file: shown, message: `holds ${datasetFiles.join(' and ')}: keep one dataset file` }));
  } else {
    try {
      cases = await readDatasetInput(path.join(root, datasetFiles[0]!), cwd);
    } catch (err) {
      if (!(err instanceof TuneError)) throw err;
      problems.push(...(err.details.length > 0 ? err.details : [err.message]));
    }
  }

  const runFolders: RunFolder[] = [];
  const runsDir = path.join(root, 'runs');
  const entries = await fs.readdir(runsDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => compare(a.name, b.name))) {
    const runDir = path.join(runsDir, entry.name);
    const inside = await fs.readdir(runDir, { withFileTypes: true });
    const compact: string[] = [];
    for (const f of inside.filter((e) => e.isFile()).sort((a, b) => compare(a.name, b.name))) {
      if (!COMPACT_EXTENSIONS.has(path.extname(f.name).toLowerCase())) continue;
      const size = (await fs.stat(path.join(runDir, f.name))).size;
      if (size > COMPACT_MAX_BYTES) continue;
      compact.push(f.name);
    }
    const hasBatchDir = inside.some((e) => e.isDirectory() && e.name === 'batch');
    if (hasBatchDir && (await readIfFile(path.join(runDir, 'batch', 'batch.json'))) !== null) compact.push('batch/batch.json');
    for (const rel of compact) files.set(`runs/${entry.name}/${rel}`, await fs.readFile(path.join(runDir, ...rel.split('/')), 'utf8'));
    runFolders.push({ folder: entry.name, hasBatchDir, files: compact });
  }
  return { shown, cases, files, runFolders, problems };
}

// ---------------------------------------------------------------------------
// tolerant readers (pure)

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const norm = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value of the first key present, matching keys ignoring case, `_` and `-`. */
function field(obj: Record<string, unknown>, ...names: string[]): unknown {
  for (const name of names) {
    const key = Object.keys(obj).find((k) => norm(k) === norm(name));
    if (key !== undefined) return obj[key];
  }
  return undefined;
}

function hasField(obj: Record<string, unknown>, ...names: string[]): boolean {
  return field(obj, ...names) !== undefined;
}

/** A list of ids: strings, or objects with an id; also one comma-separated string. */
function idsOf(value: unknown): string[] | null {
  if (typeof value === 'string') return splitIds(value);
  if (!Array.isArray(value)) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item === 'string') out.push(item);
    else if (isObject(item) && typeof field(item, 'id', 'case', 'caseId') === 'string') out.push(field(item, 'id', 'case', 'caseId') as string);
    else return null;
  }
  return out;
}

function splitIds(text: string): string[] {
  const t = text.trim();
  if (/^\(?(none|-|—)?\)?$/i.test(t)) return [];
  return t.split(/[\s,;]+/).map((s) => s.replace(/^[`*[(]+|[`*\]).]+$/g, '')).filter(Boolean);
}

/** A list held directly or under one of `keys`. */
function listOf(value: unknown, keys: string[]): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (isObject(value)) {
    const inner = field(value, ...keys);
    if (Array.isArray(inner)) return inner;
  }
  return null;
}

function batchNumberOf(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const m = /^(?:batch)?0*(\d+)(?:-(?:nomem|mem)-run\d+)?$/i.exec(value.trim());
    if (m) return Number(m[1]);
  }
  return null;
}

/** `batch03-nomem-run2`, also written `batch3-…`; `final-check`. */
export function parseRunFolderName(name: string): RunId | null {
  if (name === FINAL_RUN) return { kind: 'final' };
  const m = /^batch0*(\d+)-(nomem|mem)-run0*(\d+)$/i.exec(name);
  if (!m || Number(m[1]) < 1 || Number(m[3]) < 1) return null;
  return { kind: 'batch', batch: Number(m[1]), half: m[2]!.toLowerCase() as Half, number: Number(m[3]) };
}

const TRUE_WORDS = new Set(['right', 'yes', 'y', 'true', 'correct', 'pass', 'passed', 'ok', '✓', '✔', '✅', '1', 'met']);
const FALSE_WORDS = new Set(['wrong', 'no', 'n', 'false', 'incorrect', 'fail', 'failed', '✗', '✘', '❌', 'x', '0', 'error', 'missed']);

function rightWord(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : null;
  if (typeof value !== 'string') return null;
  const w = value.replace(/[*_`]/g, '').trim().toLowerCase().split(/\s+/)[0] ?? '';
  if (TRUE_WORDS.has(w)) return true;
  if (FALSE_WORDS.has(w)) return false;
  return null;
}

function markdownLines(text: string): string[] {
  const out: string[] = [];
  let fence = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      continue;
    }
    if (!fence) out.push(line);
  }
  return out;
}

/** `PASSED`, `Verdict: no_change`, `MIXED — 3 of 5 right` all name their verdict. */
function verdictOf(heading: string): string {
  let t = heading.replace(/[_-]/g, ' ').toUpperCase().replace(/[^A-Z ]/g, ' ').replace(/\s+/g, ' ').trim();
  t = t.replace(/^VERDICT\s+/, '').replace(/^PROPOSED\s+/, '');
  const named = [...VERDICTS].sort((a, b) => b.length - a.length).find((v) => t === v || t.startsWith(`${v} `));
  return named ?? t;
}

interface Findings {
  heading: string | null;
  verdict: string | null;
  review: boolean;
  wrongLine: string[] | null;
  table: Map<string, boolean>;
}

export function readFindings(text: string): Findings {
  const lines = markdownLines(text);
  const headings = lines.map((l) => /^##(?!#)\s*(.*?)\s*#*\s*$/.exec(l)?.[1]).filter((h): h is string => h !== undefined);
  let heading = headings[0] ?? null;
  if (heading !== null && verdictOf(heading) === 'VERDICT') {
    // `## Verdict` with the verdict on the next line
    const at = lines.findIndex((l) => /^##(?!#)/.test(l));
    heading = lines.slice(at + 1).find((l) => l.trim() !== '')?.trim() ?? heading;
  }
  const review = headings.some((h) => /review/i.test(h));
  let wrongLine: string[] | null = null;
  for (const line of lines) {
    const m = /^\s*(?:[-*]\s+)?\**\s*wrong(?:\s+cases)?\s*\**\s*:\s*\**\s*(.*)$/i.exec(line);
    if (m && !line.trim().startsWith('|')) {
      wrongLine = splitIds(m[1]!.replace(/\*+$/, ''));
      break;
    }
  }
  return { heading, verdict: heading === null ? null : verdictOf(heading), review, wrongLine, table: findingsTable(lines) };
}

const ID_COLUMNS = ['id', 'case', 'caseid', 'case id'];
const RIGHT_COLUMNS = ['right', 'correct', 'rightwrong', 'result', 'pass', 'passed', 'ok', 'outcome', 'status', 'verdict'];

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

function cellId(cell: string): string {
  const link = /^\[([^\]]+)\]\([^)]*\)$/.exec(cell.replace(/[*`]/g, ''));
  return (link ? link[1]! : cell).replace(/[*`]/g, '').trim();
}

/** Per-case right/wrong from the findings' markdown tables. */
function findingsTable(lines: string[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|') || !/^\s*\|?\s*:?-{3,}/.test(lines[i + 1]!)) continue;
    const header = cells(lines[i]!).map((h) => norm(h.replace(/[*`]/g, '')));
    const idCol = header.findIndex((h) => ID_COLUMNS.map(norm).includes(h));
    let rightCol = -1;
    for (const name of RIGHT_COLUMNS) {
      rightCol = header.indexOf(norm(name));
      if (rightCol >= 0) break;
    }
    if (idCol < 0 || rightCol < 0) continue;
    for (let j = i + 2; j < lines.length && lines[j]!.trim().startsWith('|'); j++) {
      const row = cells(lines[j]!);
      const id = cellId(row[idCol] ?? '');
      const right = rightWord(row[rightCol] ?? '');
      if (id && right !== null && !out.has(id)) out.set(id, right);
    }
  }
  return out;
}

interface RunResults {
  right: Map<string, boolean>;
  /** Each case's result as the folder wrote it, in the file's order. */
  items: Array<{ id: string; raw: Record<string, unknown>; right: boolean | null; tokens: number; costUsd: number }>;
  tokens: number;
  costUsd: number;
  concurrency: number | null;
  void: string | null;
  stopped: string | null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
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

function reasonText(value: unknown): string | null {
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (value === true) return 'void';
  return null;
}

function readResults(value: unknown, file: string, problems: Problem[]): RunResults {
  const out: RunResults = { right: new Map(), items: [], tokens: 0, costUsd: 0, concurrency: null, void: null, stopped: null };
  let items: Array<[string | null, unknown]> = [];
  const listed = listOf(value, ['results', 'cases', 'items']);
  if (listed) items = listed.map((r) => [null, r]);
  else if (isObject(value)) {
    const keyed = field(value, 'results', 'cases');
    if (isObject(keyed)) items = Object.entries(keyed);
  } else {
    problems.push({ file, message: 'must be the run\'s results: a list, or an object with `results`', received: describeValue(value) });
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
function caseResultsFile(results: RunResults, revs: ReadonlyMap<string, string>): string | null {
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

// ---------------------------------------------------------------------------
// plan (pure)

/** The settings `git tune init` writes, which a config.json overrides key by key. */
const INIT_VALUES: Record<string, unknown> = {
  limit: null, minBatch: 3, maxBatch: 10, recheck: 3, seed: 1, maxRetries: 3, maxRuns: 4,
  prose: [], memoryPolicy: [], runner: null, judge: null, editor: null,
  budget: { maxCostUsd: null, maxTokens: null },
};
const CONFIG_TOP_KEYS = [
  'limit', 'minBatch', 'maxBatch', 'recheck', 'concurrency', 'seed', 'maxRetries', 'maxRuns',
  'prose', 'memoryPolicy', 'runner', 'judge', 'editor', 'memory', 'budget', 'targets',
];

function commandValue(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      return { command: splitArgs(value) };
    } catch {
      return value;
    }
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return { command: value };
  if (isObject(value) && typeof value.command === 'string') {
    try {
      return { ...value, command: splitArgs(value.command) };
    } catch {
      return value;
    }
  }
  return value;
}

/** A fake but stable oid per planned step, so the plan can be folded before anything is written. */
export function placeholderOid(index: number): string {
  return createHash('sha1').update(`git-tune import step ${index}`).digest('hex');
}

interface RunPlan {
  name: string;
  id: RunId;
  folder: string;
  base: string; // `runs/<folder>` inside the import folder
  files: string[];
  cases: string[] | null;
  started: boolean;
  finished: boolean;
  results: RunResults | null;
  findings: Findings | null;
  verdict: Verdict | null;
  wrong: string[];
  changes: { aims: string[] | null } | null;
}

const halfOf = (run: RunPlan): Half | null => (run.id.kind === 'batch' ? run.id.half : null);
const batchOf = (run: RunPlan): number => (run.id.kind === 'batch' ? run.id.batch : 0);

interface DifficultIn {
  id: string;
  reason: DifficultReason;
  batch: number;
  fixed: boolean;
  fixedIn: number | null;
  notes: string[];
  index: number;
}

/** What reading collects as it goes: problems refuse the folder, warnings are reported. */
interface FolderReader {
  input: FolderInput;
  problems: Problem[];
  warnings: string[];
  caseIds: Set<string>;
  /** A file as problems name it. */
  shown(rel: string): string;
  /** A JSON file, undefined when absent or not JSON (a problem then). */
  json(rel: string): unknown;
  /** Reports the ids that are not dataset cases (when the dataset itself was readable). */
  knownIds(ids: readonly string[], file: string, fieldName: string): void;
}

function folderReader(input: FolderInput): FolderReader {
  const problems: Problem[] = [];
  const caseIds = new Set(input.cases.map((c) => c.id));
  const shown = (rel: string) => `${input.shown}/${rel}`;
  return {
    input, problems, warnings: [], caseIds, shown,
    json(rel) {
      const text = input.files.get(rel);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text);
      } catch (err) {
        const m = /position (\d+)/.exec((err as Error).message);
        const where = m ? `line ${text.slice(0, Number(m[1])).split('\n').length}` : undefined;
        problems.push({ file: shown(rel), where, message: `is not valid JSON (${(err as Error).message})` });
        return undefined;
      }
    },
    knownIds(ids, file, fieldName) {
      if (input.problems.length > 0) return;
      for (const id of ids) {
        if (!caseIds.has(id)) problems.push({ file, field: fieldName, message: 'names a case that is not in the dataset', received: describeValue(id) });
      }
    },
  };
}

function fail(problems: Problem[], extra: string[]): never {
  const all = [...extra, ...problems.map(formatProblem)];
  throw usageError(
    'bad-folder',
    `the folder was refused: ${all.length} problem${all.length === 1 ? '' : 's'}; nothing was written`,
    'fix every problem listed and import again',
    all,
  );
}

/** config.json → the values of config.yaml, over the defaults `git tune init` writes. */
function readConfig(r: FolderReader): { config: Config; text: string } {
  const file = r.shown('config.json');
  const values: Record<string, unknown> = structuredClone(INIT_VALUES);
  const raw = r.json('config.json');
  if (!r.input.files.has('config.json')) r.warnings.push(`${file} is missing: the settings are git tune init's defaults`);
  else if (raw !== undefined && !isObject(raw)) {
    r.problems.push({ file, message: 'must be an object of settings, e.g. {"maxBatch": 10}', received: describeValue(raw) });
  } else if (isObject(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      const known = CONFIG_TOP_KEYS.find((k) => norm(k) === norm(key));
      if (!known) {
        r.warnings.push(`${file}: \`${key}\` is not a git-tune setting: left out`);
        continue;
      }
      let v = value;
      if (known === 'runner' || known === 'judge' || known === 'editor') v = commandValue(v);
      if ((known === 'prose' || known === 'memoryPolicy') && typeof v === 'string') v = [v];
      values[known] = v;
    }
  }
  const fallback = { config: withDefaults(configSchema.parse(INIT_VALUES)), text: '' };
  const parsed = configSchema.safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      let received: unknown = values;
      for (const part of issue.path) received = (received as Record<PropertyKey, unknown> | undefined)?.[part];
      r.problems.push({ file, field: pathText(issue.path) || undefined, message: issue.message, received: describeValue(received) });
    }
    return fallback;
  }
  const text = renderConfig(values);
  try {
    return { config: parseConfig(text, CONFIG_FILE).config, text };
  } catch (err) {
    if (!(err instanceof TuneError)) throw err;
    for (const d of err.details) r.problems.push({ file, message: d });
    return fallback;
  }
}

/** selection.json in the folder's order; without one, `git tune select`'s order. */
function readSelection(r: FolderReader, config: Config): Selection {
  const file = r.shown('selection.json');
  const cases = r.input.cases;
  let ids: string[] = [];
  const raw = r.json('selection.json');
  if (raw === undefined) {
    ids = selectCases(cases, config.seed, config.limit);
    if (!r.input.files.has('selection.json')) r.warnings.push(`${file} is missing: the selection is git tune select's order`);
  } else {
    const list = idsOf(raw) ?? (isObject(raw) ? idsOf(field(raw, 'ids', 'selection', 'cases')) : null);
    if (list === null) r.problems.push({ file, message: 'must be a list of case ids, or {"ids": [...]}', received: describeValue(raw) });
    else {
      ids = list;
      const seen = new Set<string>();
      list.forEach((id, i) => {
        if (seen.has(id)) r.problems.push({ file, where: `item ${i}`, message: 'repeats an id; the selection holds each case once', received: describeValue(id) });
        seen.add(id);
      });
      r.knownIds(list, file, 'ids');
    }
  }
  const complex = new Set(cases.filter((c) => c.complexity === 'complex').map((c) => c.id));
  return {
    seed: config.seed, limit: ids.length, total: cases.length, datasetRev: datasetRev(cases),
    ids, complex: ids.filter((id) => complex.has(id)),
  };
}

/** Every run folder: its cases, results, findings and changes, in the order runs happen. */
function readRuns(r: FolderReader): { runs: RunPlan[]; final: RunPlan | null } {
  const runs: RunPlan[] = [];
  let final: RunPlan | null = null;
  for (const folder of r.input.runFolders) {
    const id = parseRunFolderName(folder.folder);
    if (!id) {
      r.warnings.push(`${r.shown(`runs/${folder.folder}`)} names no run (batchNN-nomem-runN, batchNN-mem-runN, final-check): left out`);
      continue;
    }
    const base = `runs/${folder.folder}`;
    const run: RunPlan = {
      name: formatRunName(id), id, folder: folder.folder, base, files: folder.files, cases: null,
      started: folder.hasBatchDir, finished: folder.files.includes('batch/batch.json'),
      results: null, findings: null, verdict: null, wrong: [], changes: null,
    };
    const rawCases = r.json(`${base}/cases.json`);
    if (rawCases !== undefined) {
      const list = idsOf(rawCases) ?? (isObject(rawCases) ? idsOf(field(rawCases, 'cases', 'ids')) : null);
      if (list === null) r.problems.push({ file: r.shown(`${base}/cases.json`), message: 'must be a list of case ids or cases, or {"cases": [...]}', received: describeValue(rawCases) });
      else {
        run.cases = list;
        r.knownIds(list, r.shown(`${base}/cases.json`), 'cases');
      }
    }
    if (run.finished) {
      const raw = r.json(`${base}/batch/batch.json`);
      if (raw !== undefined) run.results = readResults(raw, r.shown(`${base}/batch/batch.json`), r.problems);
    }
    const findingsText = r.input.files.get(`${base}/findings.md`);
    if (findingsText !== undefined) {
      if (!run.finished) r.problems.push({ file: r.shown(`${base}/findings.md`), message: 'grades a run that never finished (no batch/batch.json)' });
      run.findings = readFindings(findingsText);
    }
    const changesText = r.input.files.get(`${base}/changes.md`);
    if (changesText !== undefined) {
      const m = /^\s*(?:[-*]\s+)?\**\s*aims\s*\**\s*:\s*\**\s*(.*)$/im.exec(changesText);
      let aims: string[] | null = null;
      if (m) {
        const ids = splitIds(m[1]!.replace(/\*+$/, ''));
        if (ids.every((x) => r.caseIds.has(x))) aims = ids;
        else r.warnings.push(`${r.shown(`${base}/changes.md`)}: the Aims line names no case ids (${m[1]!.trim()}): the edit aims at the run's wrong cases`);
      }
      run.changes = { aims };
    }
    if (id.kind === 'final') final = run;
    else runs.push(run);
  }
  const key = (x: RunPlan) => [batchOf(x), halfOf(x) === 'mem' ? 1 : 0, x.id.kind === 'batch' ? x.id.number : 0];
  runs.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
  const seen = new Map<string, string>();
  for (const run of [...runs, ...(final ? [final] : [])]) {
    const earlier = seen.get(run.name);
    if (earlier) r.problems.push({ file: r.shown(`runs/${run.folder}`), message: `is the same run as runs/${earlier}` });
    seen.set(run.name, run.folder);
  }
  return { runs, final };
}

interface Batches {
  numbers: number[];
  last: number;
  runs: Map<number, RunPlan[]>;
}

/** Batches numbered 1..N, runs of a half numbered 1..k: the history the folder claims. */
function groupBatches(r: FolderReader, runs: readonly RunPlan[]): Batches {
  const numbers = [...new Set(runs.map(batchOf))];
  numbers.forEach((n, i) => {
    if (n !== i + 1) r.problems.push({ file: r.shown('runs'), message: `batch ${n} follows batch ${i === 0 ? 'none' : numbers[i - 1]}: batches are numbered 1, 2, … without a gap` });
  });
  const byBatch = new Map<number, RunPlan[]>();
  for (const run of runs) byBatch.set(batchOf(run), [...(byBatch.get(batchOf(run)) ?? []), run]);
  for (const [b, list] of byBatch) {
    for (const half of ['nomem', 'mem'] as const) {
      list.filter((x) => halfOf(x) === half).forEach((run, i) => {
        const number = run.id.kind === 'batch' ? run.id.number : 0;
        if (number !== i + 1) r.problems.push({ file: r.shown(`runs/${run.folder}`), message: `is run ${number} of batch ${b} ${half}, but run ${i + 1} is missing` });
      });
    }
  }
  return { numbers, last: numbers[numbers.length - 1] ?? 0, runs: byBatch };
}

/** The latest run of a batch's half graded PASSED. */
function passingRun(batches: Batches, batch: number, half: Half): RunPlan | null {
  const list = (batches.runs.get(batch) ?? []).filter((x) => halfOf(x) === half && x.verdict === 'PASSED');
  return list[list.length - 1] ?? null;
}

/** Each batch's plan: from plan.json, else from cases.json; every run of the batch must hold its cases. */
function readPlans(r: FolderReader, batches: Batches, inSelection: ReadonlySet<string>): Map<number, BatchPlan> {
  const plans = new Map<number, BatchPlan>();
  const used = new Set<string>();
  for (const b of batches.numbers) {
    const list = batches.runs.get(b)!;
    let plan: BatchPlan | null = null;
    let planFile = '';
    for (const run of list) {
      if (!run.files.includes('plan.json')) continue;
      const file = r.shown(`${run.base}/plan.json`);
      const candidate = readPlanJson(r, r.json(`${run.base}/plan.json`), file, b, used);
      if (candidate === null) continue;
      if (plan === null) {
        plan = candidate;
        planFile = file;
      } else if (!sameSet(batchCasesOf(plan), batchCasesOf(candidate))) {
        r.problems.push({ file, message: `plans other cases than ${planFile}: every run of a batch uses the same cases` });
      }
    }
    if (plan === null) {
      const first = list.find((x) => x.cases !== null);
      if (!first) {
        r.problems.push({ file: r.shown(`runs/${list[0]!.folder}`), message: `batch ${b} has neither plan.json nor cases.json in any of its run folders: its cases are unknown` });
        continue;
      }
      planFile = r.shown(`${first.base}/cases.json`);
      const fresh = first.cases!.filter((x) => !used.has(x));
      const recheck = first.cases!.filter((x) => used.has(x));
      // Nothing new: the batch retried difficult cases, which cases.json cannot tell from its rechecks.
      plan = fresh.length > 0
        ? { batch: b, size: fresh.length, why: `imported from ${planFile}`, kind: 'new', new: fresh, recheck }
        : { batch: b, size: recheck.length, why: `imported from ${planFile}`, kind: 'difficult', new: recheck, recheck: [] };
      r.warnings.push(`batch ${b} has no plan.json: planned from ${planFile} (cases never used before are new, the others recheck)`);
    }
    const p = plan;
    const dup = p.new.find((x, i) => p.new.indexOf(x) !== i || p.recheck.includes(x)) ?? p.recheck.find((x, i) => p.recheck.indexOf(x) !== i);
    if (dup) r.problems.push({ file: planFile, message: 'holds a case twice: new and recheck cases are distinct', received: describeValue(dup) });
    const planned = batchCasesOf(p);
    for (const x of planned) if (!inSelection.has(x)) r.warnings.push(`batch ${b}: case ${x} is not in the selection`);
    for (const run of list) {
      if (run.cases !== null && !sameSet(run.cases, planned)) {
        r.problems.push({ file: r.shown(`${run.base}/cases.json`), message: `holds other cases than batch ${b}'s plan (${planFile}): every run of a batch uses the same cases` });
      }
      run.cases ??= planned;
    }
    plans.set(b, p);
    for (const x of planned) used.add(x);
  }
  return plans;
}

function readPlanJson(r: FolderReader, raw: unknown, file: string, batch: number, used: ReadonlySet<string>): BatchPlan | null {
  if (raw === undefined) return null;
  if (!isObject(raw)) {
    r.problems.push({ file, message: 'must be an object {batch, size, why, kind, new, recheck}', received: describeValue(raw) });
    return null;
  }
  const rawBatch = field(raw, 'batch');
  if (rawBatch !== undefined && batchNumberOf(rawBatch) !== batch) {
    r.problems.push({ file, field: 'batch', message: `must be ${batch}, the batch of the folder`, received: describeValue(rawBatch) });
  }
  const NEW = ['new', 'newCases', 'newIds', 'fresh'];
  const RECHECK = ['recheck', 'recheckCases', 'recheckIds', 'rechecks'];
  let fresh = idsOf(field(raw, ...NEW));
  let recheck = idsOf(field(raw, ...RECHECK));
  if (!hasField(raw, ...NEW) && !hasField(raw, ...RECHECK)) {
    const all = idsOf(field(raw, 'cases', 'ids'));
    if (all) {
      fresh = all.filter((x) => !used.has(x));
      recheck = all.filter((x) => used.has(x));
    }
  }
  if (fresh === null) r.problems.push({ file, field: 'new', message: 'must be a list of case ids', received: describeValue(field(raw, ...NEW)) });
  if (recheck === null) {
    if (hasField(raw, ...RECHECK)) r.problems.push({ file, field: 'recheck', message: 'must be a list of case ids', received: describeValue(field(raw, ...RECHECK)) });
    recheck = [];
  }
  if (fresh === null) return null;
  const rawKind = field(raw, 'kind');
  let kind: BatchPlan['kind'] = fresh.length > 0 && fresh.every((x) => used.has(x)) ? 'difficult' : 'new';
  if (rawKind === 'new' || rawKind === 'difficult') kind = rawKind;
  else if (rawKind !== undefined) r.problems.push({ file, field: 'kind', message: 'must be new or difficult', received: describeValue(rawKind) });
  const size = num(field(raw, 'size'));
  const why = field(raw, 'why', 'reason');
  r.knownIds([...fresh, ...recheck], file, 'new/recheck');
  return {
    batch, size: size !== null && Number.isInteger(size) && size >= 0 ? size : fresh.length,
    why: typeof why === 'string' && why.trim() ? why.trim() : `imported from ${file}`,
    kind, new: fresh, recheck,
  };
}

/** Verdicts and wrong cases of the graded runs (SPEC 3.4), and the order the runs claim. */
function gradeRuns(r: FolderReader, runs: readonly RunPlan[], final: RunPlan | null, selection: readonly string[]): void {
  const all = [...runs, ...(final ? [final] : [])];
  for (const run of all) gradeRun(r, run, run === final ? selection : (run.cases ?? []));
  for (const run of all) {
    if (run.changes && !run.verdict) r.problems.push({ file: r.shown(`${run.base}/changes.md`), message: `is an edit after ${run.name}, which is not graded: an edit responds to a graded run` });
    if (run === final && run.changes) r.warnings.push(`${r.shown(`${run.base}/changes.md`)}: the final check is never edited after: left out`);
  }
  // Nothing starts after a run that never started or never finished.
  all.forEach((run, i) => {
    if (run.finished && (run.verdict || run.results?.void)) return;
    const later = all.slice(i + 1).find((x) => x.started);
    if (!later) return;
    if (run.finished) r.warnings.push(`${later.name} started before ${run.name} was graded`);
    else {
      r.problems.push({
        file: r.shown(`runs/${later.folder}`),
        message: `started, but the run before it (${run.name}) ${run.started ? 'never finished (no batch/batch.json)' : 'never started (no batch/ folder)'}`,
      });
    }
  });
}

function gradeRun(r: FolderReader, run: RunPlan, runCases: readonly string[]): void {
  const f = run.findings;
  if (!f || !run.finished) return;
  const file = r.shown(`${run.base}/findings.md`);
  if (f.heading === null) {
    r.warnings.push(`${file} has no verdict heading (## …) yet: ${run.name} is imported as not graded`);
    return;
  }
  const v = f.verdict!;
  if (run.id.kind === 'final') run.verdict = v === 'VERIFIED' ? 'VERIFIED' : v === 'VOID' ? 'VOID' : 'FAILED';
  else if ((VERDICTS as readonly string[]).includes(v) && v !== 'VERIFIED' && v !== 'FAILED') run.verdict = v as Verdict;
  else {
    r.problems.push({
      file, field: 'first ## heading',
      message: 'must be the verdict: PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT, PASSED or VOID, e.g. `## PASSED`',
      received: describeValue(f.heading),
    });
    return;
  }
  const inRun = new Set(runCases);
  let wrong: string[];
  if (f.wrongLine !== null && f.wrongLine.every((x) => r.caseIds.has(x))) wrong = f.wrongLine;
  else {
    if (f.wrongLine !== null) r.warnings.push(`${file}: the Wrong line names no case ids: read the table and batch.json instead`);
    const right = new Map(run.results?.right ?? []);
    for (const [id, ok] of f.table) right.set(id, ok);
    const silent = runCases.filter((id) => !right.has(id));
    if (silent.length > 0 && run.verdict !== 'VOID') {
      r.warnings.push(`${run.name}: no right/wrong for ${silent.length} case${silent.length === 1 ? '' : 's'} (${silent.slice(0, 5).join(', ')}${silent.length > 5 ? ', …' : ''}) in batch.json or findings.md: counted right`);
    }
    wrong = runCases.filter((id) => right.get(id) === false);
  }
  const outside = wrong.filter((x) => !inRun.has(x));
  if (outside.length > 0) r.warnings.push(`${file}: wrong case${outside.length === 1 ? '' : 's'} ${outside.join(', ')} not among ${run.name}'s cases: left out`);
  run.wrong = wrong.filter((x) => inRun.has(x));
}

/** memory/candidate.json names the run the candidate came from; memory/last-good.json the batch it holds. */
function readMemoryPointers(r: FolderReader, runs: readonly RunPlan[], batches: Batches): { candidateRun: string | null; lastGood: number } {
  for (const b of batches.numbers) {
    const memStarted = batches.runs.get(b)!.some((x) => halfOf(x) === 'mem' && x.started);
    if (memStarted && !passingRun(batches, b, 'nomem')) {
      r.problems.push({ file: r.shown('runs'), message: `batch ${b} has with-memory runs but no no-memory run graded PASSED: the candidate memory comes from one` });
    }
  }
  let candidateRun: string | null = null;
  const rawCandidate = r.json('memory/candidate.json');
  if (rawCandidate !== undefined && rawCandidate !== null) {
    const file = r.shown('memory/candidate.json');
    const named = typeof rawCandidate === 'string' ? rawCandidate : isObject(rawCandidate) ? field(rawCandidate, 'run', 'from', 'source', 'fromRun', 'name') : undefined;
    const batchOnly = isObject(rawCandidate) ? batchNumberOf(field(rawCandidate, 'batch')) : null;
    if (typeof named === 'string') {
      const id = parseRunFolderName(named);
      const run = id?.kind === 'batch' ? runs.find((x) => x.name === formatRunName(id)) : undefined;
      if (!run) r.problems.push({ file, field: 'run', message: 'must name a run of the folder (batchNN-nomem-runN)', received: describeValue(named) });
      else if (halfOf(run) !== 'nomem' || run.verdict !== 'PASSED') {
        r.problems.push({ file, field: 'run', message: 'must name a no-memory run graded PASSED: the candidate is built from one', received: describeValue(named) });
      } else candidateRun = run.name;
    } else if (batchOnly !== null && batchOnly > 0) {
      const run = passingRun(batches, batchOnly, 'nomem');
      if (!run) r.problems.push({ file, field: 'batch', message: `batch ${batchOnly} has no no-memory run graded PASSED`, received: describeValue(batchOnly) });
      else candidateRun = run.name;
    } else if (!(batchOnly === 0 || (isObject(rawCandidate) && Object.keys(rawCandidate).length === 0))) {
      r.warnings.push(`${file} names no run (run, from, source or batch): no candidate is imported from it`);
    }
  }
  let lastGood = 0;
  const rawLastGood = r.json('memory/last-good.json');
  if (rawLastGood !== undefined && rawLastGood !== null) {
    const file = r.shown('memory/last-good.json');
    const v = isObject(rawLastGood) ? field(rawLastGood, 'batch', 'run', 'from', 'source', 'name') : rawLastGood;
    const n = batchNumberOf(v);
    if (n === null) r.warnings.push(`${file} names no batch (batch, run, or a name like batch03): no checkpoint is imported from it`);
    else if (n > 0 && (n > batches.last || !passingRun(batches, n, 'mem'))) {
      r.problems.push({ file, field: 'batch', message: `names batch ${n}, which has no with-memory run graded PASSED: a checkpoint holds a batch that passed with memory`, received: describeValue(v) });
    } else lastGood = n;
  }
  return { candidateRun, lastGood };
}

function readDifficult(r: FolderReader, lastBatch: number): DifficultIn[] {
  const out: DifficultIn[] = [];
  const raw = r.json('difficult.json');
  if (raw === undefined) return out;
  const file = r.shown('difficult.json');
  let list = listOf(raw, ['entries', 'difficult', 'cases', 'items']);
  if (list === null && isObject(raw)) list = Object.entries(raw).map(([id, e]) => (isObject(e) ? { id, ...e } : e));
  if (list === null) r.problems.push({ file, message: 'must be a list of entries {id, reason, batch, fixed}', received: describeValue(raw) });
  (list ?? []).forEach((e, i) => {
    const where = `entry ${i}`;
    if (!isObject(e)) {
      r.problems.push({ file, where, message: 'must be an object {id, reason, batch, fixed}', received: describeValue(e) });
      return;
    }
    const id = field(e, 'id', 'case', 'caseId');
    const reasonRaw = field(e, 'reason', 'why');
    const reason = typeof reasonRaw === 'string' ? reasonRaw.trim().toLowerCase() : reasonRaw;
    const batchRaw = field(e, 'batch', 'addedIn', 'added', 'addedBatch');
    const batch = batchNumberOf(batchRaw);
    const status = field(e, 'status');
    const fixedRaw = field(e, 'fixed');
    const fixed = fixedRaw === true || (typeof status === 'string' && status.toLowerCase() === 'fixed');
    if (fixedRaw !== undefined && typeof fixedRaw !== 'boolean') r.problems.push({ file, where, field: 'fixed', message: 'must be true or false', received: describeValue(fixedRaw) });
    const notesRaw = field(e, 'notes', 'note');
    const notes = typeof notesRaw === 'string' ? [notesRaw] : Array.isArray(notesRaw) ? notesRaw.map(String) : [];
    let ok = true;
    if (typeof id !== 'string' || (r.input.problems.length === 0 && !r.caseIds.has(id))) {
      r.problems.push({ file, where, field: 'id', message: 'must name a case of the dataset', received: describeValue(id) });
      ok = false;
    }
    if (!(DIFFICULT_REASONS as readonly unknown[]).includes(reason)) {
      r.problems.push({ file, where, field: 'reason', message: `must be one of ${DIFFICULT_REASONS.join(', ')}`, received: describeValue(reasonRaw) });
      ok = false;
    }
    if (batch === null || batch > lastBatch) {
      r.problems.push({
        file, where, field: 'batch',
        message: batch === null
          ? 'must be the batch the entry was added in (a number; 0 = before batch 1)'
          : `names batch ${batch}, but the folder's last batch is ${lastBatch}`,
        received: describeValue(batchRaw),
      });
      ok = false;
    }
    if (ok) {
      const fixedIn = batchNumberOf(field(e, 'fixedIn', 'fixedBatch'));
      out.push({ id: id as string, reason: reason as DifficultReason, batch: batch!, fixed, fixedIn, notes, index: i });
    }
  });
  return out;
}

interface DifficultPlacement {
  changes: Map<number, DifficultChange[]>;
  notes: Map<number, string[]>;
}

/**
 * The batch each difficult change belongs to: an add in the batch the entry
 * was added in (the fold attributes it to the batch planned last, SPEC 3.2's
 * retries count from it); a fix in `fixedIn`, else the last batch holding
 * the case (a case is proposed fixed from a run that got it right), never
 * after the same case is added again.
 */
function placeDifficult(r: FolderReader, entries: readonly DifficultIn[], plans: ReadonlyMap<number, BatchPlan>, batches: Batches): DifficultPlacement {
  const fixBatch = (e: DifficultIn): number => {
    const holding = batches.numbers.filter((b) => b >= e.batch && batchCasesOf(plans.get(b) ?? emptyPlan(b)).includes(e.id));
    let at = e.fixedIn ?? Math.max(e.batch, ...holding);
    const readded = entries.find((x) => x.index > e.index && x.id === e.id);
    if (readded) at = Math.min(at, readded.batch);
    return Math.min(Math.max(at, e.batch), batches.last);
  };
  const events: Array<{ batch: number; order: number; change: DifficultChange; note?: string }> = [];
  for (const e of entries) {
    events.push({ batch: e.batch, order: e.index * 2, change: { op: 'add', id: e.id, reason: e.reason }, note: e.notes.length ? `${e.id}: ${e.notes.join('; ')}` : undefined });
    if (e.fixed) events.push({ batch: fixBatch(e), order: e.index * 2 + 1, change: { op: 'fix', id: e.id } });
  }
  events.sort((a, b) => a.batch - b.batch || a.order - b.order);
  const out: DifficultPlacement = { changes: new Map(), notes: new Map() };
  const open = new Set<string>();
  for (const ev of events) {
    if (ev.change.op === 'add') {
      if (open.has(ev.change.id)) r.warnings.push(`${r.shown('difficult.json')}: ${ev.change.id} is listed again while still open: the later entry's reason is kept`);
      open.add(ev.change.id);
    } else open.delete(ev.change.id);
    out.changes.set(ev.batch, [...(out.changes.get(ev.batch) ?? []), ev.change]);
    if (ev.note) out.notes.set(ev.batch, [...(out.notes.get(ev.batch) ?? []), ev.note]);
  }
  return out;
}

/** Everything the replay needs, read and checked. */
interface ReadTuning {
  tuning: string;
  dir: string;
  input: FolderInput;
  config: Config;
  configText: string;
  selection: Selection;
  batches: Batches;
  plans: Map<number, BatchPlan>;
  final: RunPlan | null;
  candidateRun: string | null;
  lastGood: number;
  difficult: DifficultPlacement;
}

/** Turns the folder into the step commits that replay it; refuses a bad folder with every problem. */
export function planImport(input: FolderInput, tuning: string): ImportPlan {
  const r = folderReader(input);
  const { config, text: configText } = readConfig(r);
  const selection = readSelection(r, config);
  const { runs, final } = readRuns(r);
  const batches = groupBatches(r, runs);
  const plans = readPlans(r, batches, new Set(selection.ids));
  gradeRuns(r, runs, final, selection.ids);
  const { candidateRun, lastGood } = readMemoryPointers(r, runs, batches);
  const difficult = placeDifficult(r, readDifficult(r, batches.last), plans, batches);
  if (r.problems.length > 0 || input.problems.length > 0) fail(r.problems, input.problems);

  const dir = tuningDir(tuning);
  const steps = replay(
    { tuning, dir, input, config, configText, selection, batches, plans, final, candidateRun, lastGood, difficult },
    r.warnings,
  );
  const state = foldHistory(tuning, historyOf(tuning, steps), selection.ids);
  if (state.warnings.length > 0) {
    fail(state.warnings.map((w) => ({ file: input.shown, message: `does not replay as a history: ${w}` })), []);
  }
  return { tuning, dir, steps, tags: steps.flatMap((s) => s.tags), warnings: r.warnings, state };
}

/** The step commits, in the order things happened (the order is documented at the top of this file). */
function replay(t: ReadTuning, warnings: string[]): PlannedStep[] {
  const { tuning, dir, input, config, selection, batches } = t;
  const steps: PlannedStep[] = [];
  const shown = (rel: string) => `${input.shown}/${rel}`;
  const subject = (text: string) => `tune(${tuning}): ${text}`;
  const from = (rel: string) => `Imported from ${shown(rel)}.`;
  const runPath = (run: RunPlan, rel: string) => `${dir}/runs/${run.name}/${rel}`;
  const copy = (run: RunPlan, rels: string[]): Array<[string, string]> =>
    rels.filter((rel) => run.files.includes(rel)).map((rel) => [runPath(run, rel), input.files.get(`${run.base}/${rel}`)!]);
  const add = (step: Omit<PlannedStep, 'difficult' | 'tags' | 'files'> & Partial<PlannedStep>) => {
    steps.push({ difficult: [], tags: [], files: [], ...step });
  };
  const cases = input.cases;
  const classes = new Set(cases.map((c) => c.class)).size;
  const revs = new Map(cases.map((c) => [c.id, c.rev]));

  add({
    data: { step: 'init', tuning }, subject: subject('init'),
    body: `Start tuning ${tuning}, imported from the folder ${input.shown}.`,
    files: [[`${dir}/${CONFIG_FILE}`, t.configText]],
  });
  add({
    data: { step: 'dataset', cases: cases.length, rev: selection.datasetRev },
    subject: subject(`dataset of ${cases.length} cases in ${classes} class${classes === 1 ? '' : 'es'}`),
    body: from('dataset.json'),
    files: [[`${dir}/${DATASET_FILE}`, formatDatasetJsonl(cases)]],
  });
  const cut = selection.limit < selection.total ? ` (limit ${selection.limit} of ${selection.total})` : '';
  add({
    data: { step: 'select', selected: selection.limit, total: selection.total },
    subject: subject(`select ${selection.limit} cases${cut}`),
    body: input.files.has('selection.json') ? `${from('selection.json')} The folder's order is kept.` : 'The folder has no selection.json: git tune select\'s order.',
    files: [[`${dir}/${SELECTION_FILE}`, `${JSON.stringify(selection, null, 2)}\n`]],
  });
  const addDifficult = (batch: number) => {
    const changes = t.difficult.changes.get(batch);
    if (!changes) return;
    const adds = changes.filter((c) => c.op === 'add').length;
    const notes = t.difficult.notes.get(batch) ?? [];
    add({
      data: { step: 'difficult' }, difficult: changes,
      subject: subject(`difficult list${batch === 0 ? ' before batch 1' : ` of batch ${batch}`} (${adds} added, ${changes.length - adds} fixed)`),
      body: [from('difficult.json'), ...(notes.length ? ['', 'Notes:', ...notes.map((n) => `- ${n}`)] : [])].join('\n'),
    });
  };

  const addRun = (run: RunPlan) => {
    if (!run.started) return; // planned only: its cases are its batch's plan
    const concurrency = run.results?.concurrency ?? config.concurrency;
    const startFiles = ['cases.json', 'plan.json'];
    const otherFiles = run.files.filter((f) => !startFiles.includes(f) && f !== 'findings.md' && f !== 'changes.md');
    add({
      data: { step: 'run-start', run: run.name, concurrency },
      subject: subject(`start ${run.name}`),
      body: from(run.base),
      files: copy(run, run.finished ? startFiles : [...startFiles, ...otherFiles]),
    });
    if (!run.finished) return;
    const results = run.results!;
    const count = run.id.kind === 'final' ? selection.ids.length : (run.cases ?? []).length;
    // The folder's own results.json, if any, is copied as it is instead.
    const own = run.files.includes('results.json');
    const resultsFile = own ? null : caseResultsFile(results, revs);
    if (resultsFile === null && !own) warnings.push(`${shown(`${run.base}/batch/batch.json`)}: its results do not fit results.json; only the file itself is kept`);
    add({
      data: {
        step: 'run', run: run.name, concurrency, cases: count, void: results.void, stopped: results.stopped,
        tokens: results.tokens, costUsd: results.costUsd,
      },
      subject: subject(`run ${run.name} (${count} cases${results.void ? ', VOID' : ''})`),
      body: from(`${run.base}/batch/batch.json`),
      files: [
        ...copy(run, [...otherFiles, ...(run.verdict ? [] : ['findings.md'])]),
        ...(resultsFile === null ? [] : [[runPath(run, 'results.json'), resultsFile] as [string, string]]),
      ],
      tags: [run.name],
    });
    if (!run.verdict) return;
    add({
      data: { step: 'grade', run: run.name, verdict: run.verdict, wrong: run.wrong, review: run.findings!.review },
      subject: subject(`grade ${run.name} ${run.verdict} (${run.wrong.length} wrong)`),
      body: from(`${run.base}/findings.md`),
      files: copy(run, ['findings.md']),
    });
    if (run.id.kind !== 'batch') return;
    if (run.changes) {
      add({
        data: { step: 'edit', run: run.name, aims: run.changes.aims },
        subject: subject(`edit after ${run.name}`),
        body: `${from(`${run.base}/changes.md`)} The prose edits themselves were made in the project before the import.`,
        files: copy(run, ['changes.md']),
      });
    }
    if (run.verdict === 'PASSED') addHandRevert(run, run.id.batch, run.id.half);
  };

  // SPEC 10: the folder method reverts by hand before it writes PASSED at the run limit.
  const addHandRevert = (run: RunPlan, batch: number, half: Half) => {
    const state = foldHistory(tuning, historyOf(tuning, steps), selection.ids);
    if (countedRuns(halfRuns(state, batch, half)) < config.maxRuns) return;
    const left = state.edits.filter((e) => e.batch === batch && e.half === half && (e.status === 'pending' || e.status === 'unconfirmed'));
    if (left.length === 0) return;
    add({
      data: { step: 'revert', reverts: left.map((e) => e.oid) },
      reverts: left.map((e) => steps.findIndex((_, i) => placeholderOid(i) === e.oid)),
      subject: subject(`revert ${left.length} edit${left.length === 1 ? '' : 's'} of ${batchLabel(batch)} ${half} (reverted in the folder)`),
      body: `${run.name} is the half's run ${config.maxRuns} of ${config.maxRuns}: the folder method reverted its unconfirmed and pending edits by hand before writing PASSED. The changes.md files stay as the record.`,
    });
  };

  addDifficult(0);
  for (const b of batches.numbers) {
    const plan = t.plans.get(b)!;
    add({
      data: { step: 'plan', batch: b, size: plan.size, kind: plan.kind, new: plan.new, recheck: plan.recheck },
      subject: subject(`plan batch ${b} (${plan.new.length} ${plan.kind} + ${plan.recheck.length} recheck)`),
      body: plan.why,
      files: [[`${dir}/batches/${batchLabel(b)}.json`, `${JSON.stringify(plan, null, 2)}\n`]],
    });
    const list = batches.runs.get(b)!;
    const lastGraded = [...list].reverse().find((x) => x.verdict !== null) ?? null;
    const nomemPass = passingRun(batches, b, 'nomem');
    const memPass = passingRun(batches, b, 'mem');
    const memStarted = list.some((x) => halfOf(x) === 'mem' && x.started);
    for (const half of ['nomem', 'mem'] as const) {
      if (half === 'mem' && nomemPass && (memStarted || t.candidateRun === nomemPass.name)) {
        add({
          data: { step: 'candidate', run: nomemPass.name },
          subject: subject(`candidate memory from ${nomemPass.name}`),
          body: t.candidateRun === nomemPass.name ? from('memory/candidate.json') : `Batch ${b}'s with-memory runs started from it.`,
        });
      }
      for (const run of list.filter((x) => halfOf(x) === half)) {
        addRun(run);
        if (run === lastGraded) addDifficult(b);
      }
    }
    if (!lastGraded) addDifficult(b);
    const later = b < batches.last ? `batch ${b + 1}` : t.final?.started ? 'the final check' : null;
    if (memPass && (later || t.lastGood >= b)) {
      add({
        data: { step: 'checkpoint', batch: b },
        subject: subject(`checkpoint: batch ${b} is the last good memory`),
        body: t.lastGood === b
          ? from('memory/last-good.json')
          : `In the folder ${later ?? `batch ${t.lastGood}'s checkpoint`} follows it, so it was the last good memory then.`,
      });
    } else if (later && !memPass) {
      warnings.push(`batch ${b} never passed with memory, yet ${later} follows: no checkpoint is imported for it`);
    }
  }
  if (t.final) addRun(t.final);
  return steps;
}

function batchCasesOf(plan: BatchPlan): string[] {
  return [...plan.new, ...plan.recheck];
}

function emptyPlan(batch: number): BatchPlan {
  return { batch, size: 0, why: '', kind: 'new', new: [], recheck: [] };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((id) => y.has(id));
}

/** The planned steps as the commits the fold reads (placeholder oids; reverts point at them). */
function historyOf(tuning: string, steps: readonly PlannedStep[]): HistoryCommit[] {
  return steps.map((s, i) => ({
    oid: placeholderOid(i),
    message: formatStep({ ...s.data, tuning, difficult: s.difficult } as Parameters<typeof formatStep>[0], s.subject, s.body),
  }));
}

// ---------------------------------------------------------------------------
// apply

export interface ImportResult {
  tip: string;
  commits: string[];
  tags: string[];
}

/**
 * Writes the plan: every check first (branch, tags, tuning folder, git state,
 * identity), then the chain of commits, built as `commitStep` builds one
 * (`formatStep`, `writeCommit`; a revert names the edits of the chain it
 * undoes, so each commit's id is known before the next is made), then one
 * compare-and-swap creates the branch, the run tags follow, and HEAD moves to
 * it with its files checked out, as `git tune init` does.
 */
export async function applyImport(repo: GitRepo, plan: ImportPlan, ctx: WriteContext): Promise<ImportResult> {
  return withToolLock(repo.gitdir, plan.tuning, 'git tune import', () => applyImportLocked(repo, plan, ctx));
}

async function applyImportLocked(repo: GitRepo, plan: ImportPlan, ctx: WriteContext): Promise<ImportResult> {
  const ref = branchRef(plan.tuning);
  if (await repo.resolveRef(ref)) {
    throw usageError('tuning-exists', `tuning ${plan.tuning} already exists (branch ${branchName(plan.tuning)})`,
      `git tune import <dir> --name <another-name>   # or: git switch ${branchName(plan.tuning)}`);
  }
  const taken: string[] = [];
  for (const run of plan.tags) if (await repo.resolveRef(tagRef(plan.tuning, run))) taken.push(tagName(plan.tuning, run));
  if (taken.length > 0) {
    throw usageError('tag-exists', `run tags of tuning ${plan.tuning} already exist: ${taken.join(', ')}`,
      `git tag -d ${taken.join(' ')}   # only if they are left over from another repository`);
  }
  await assertCleanGitState(repo);
  const headRef = await repo.headRef();
  const base = headRef ? await repo.resolveRef(headRef) : await repo.resolveRef('HEAD');
  if ((base && (await repo.treeOidAt(base, plan.dir))) || (await fs.stat(path.join(repo.dir, plan.dir)).catch(() => null))) {
    throw usageError('tuning-dir-exists', `${plan.dir} already exists here; the import would write over it`,
      `git tune import <dir> --name <another-name>`);
  }

  // The commits are built first and the branch moves once, by compare-and-swap from
  // "absent" (as commitStep does for init): the tuning appears whole or not at all,
  // and a long history does not pay one locked, fsynced ref write per step.
  assertNoSecrets(plan.steps.flatMap((step) => step.files.map(([p, content]): [string, FileChange] => [p, { content }])), ctx.env);
  const { author, committer } = await resolveIdentity(repo.gitdir, ctx.env, ctx.now);
  const commits: string[] = [];
  const paths = new Set<string>();
  let parent = base;
  const built: HistoryCommit[] = [];
  for (const [i, step] of plan.steps.entries()) {
    const data = step.reverts ? { ...step.data, reverts: step.reverts.map((i) => commits[i]!) } : step.data;
    const changes = new Map<string, FileChange>(step.files.map(([p, content]) => [p, { content }]));
    const message = formatStep({ ...data, tuning: plan.tuning, difficult: step.difficult } as Parameters<typeof formatStep>[0], step.subject, step.body);
    if (i === plan.steps.length - 1) {
      // The tuning's README.md and USAGE.md, as a step writes them, in the import's last commit (SPEC 7).
      const [reports] = await reportChanges({ repo, tuning: plan.tuning, parent, history: () => built, onBranch: false, usage: 'always' }, [{ step: data.step, message, changes }]);
      for (const [p, change] of reports!) changes.set(p, change);
    }
    const oid = await repo.writeCommit({ parent, changes, message, author, committer });
    commits.push(oid);
    built.push({ oid, message });
    for (const p of changes.keys()) paths.add(p);
    parent = oid;
  }
  const tip = commits[commits.length - 1]!;
  await crashPoint('import:after-objects');
  // Should this process die between the writes below, the next command finishes them (src/app/recover.ts).
  await writeJournal(repo, {
    tuning: plan.tuning, ref, base, to: tip, paths: [...paths], head: { was: headRef, at: base }, command: 'git tune import',
    tags: plan.steps.flatMap((step, i) => step.tags.map((run): [string, string] => [tagRef(plan.tuning, run), commits[i]!])),
  });
  await repo.compareAndSwapRef(ref, tip, null);
  await crashPoint('import:after-ref');
  const tagged: Array<[string, string]> = [];
  try {
    for (const [i, step] of plan.steps.entries()) {
      for (const run of step.tags) {
        await repo.compareAndSwapRef(tagRef(plan.tuning, run), commits[i]!, null);
        tagged.push([tagRef(plan.tuning, run), commits[i]!]);
      }
    }
  } catch (err) {
    for (const [t, oid] of tagged) await repo.deleteRef(t, oid).catch(() => undefined);
    await repo.deleteRef(ref, tip).catch(() => undefined);
    await clearJournal(repo, plan.tuning);
    throw err;
  }
  await crashPoint('import:after-tags');
  await repo.setHeadRef(ref);
  await crashPoint('import:after-head');
  await repo.checkoutPaths(tip, [...paths]);
  await clearJournal(repo, plan.tuning);
  return { tip, commits, tags: plan.tags.map((run) => tagName(plan.tuning, run)) };
}
