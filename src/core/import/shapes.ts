import { configSchema, withDefaults, type Config } from '../../contracts/config.js';
import { datasetRev } from '../../contracts/dataset.js';
import { DIFFICULT_REASONS, type BatchPlan, type DifficultReason, type Selection } from '../../contracts/files.js';
import { describeValue, pathText } from '../../contracts/problems.js';
import { splitArgs } from '../argv.js';
import { formatRunName, type Half, type RunId } from '../names.js';
import { selectCases } from '../select.js';
import { VERDICTS, type DifficultChange, type Verdict } from '../steps.js';
import { hasReview, readFindings, type Findings } from './findings.js';
import type { FolderReader } from './folder.js';
import { readResults, type RunResults } from './results.js';
import {
  batchIdsOf, batchNumberOf, field, hasField, idsOf, isObject, listOf, normKey, num, parseRunFolderName, splitIds,
} from './values.js';

/**
 * Each file of a `finetune/` folder read into what the replay needs, in the
 * shapes the folder method's scripts write (`next.mjs`, `batch.mjs`) and the
 * others folders use. Every problem is reported to the reader; nothing here
 * throws on a bad file. Pure.
 */

/** `git tune init`'s flags, which fill what a folder never names (prose globs, the runner). */
export interface InitFlags {
  prose?: string[];
  memoryPolicy?: string[];
  runner?: { command: string[] };
  judge?: { command: string[] };
  editor?: { command: string[] };
}

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
/** The concurrency the folder method runs at when config.json names none (next.mjs). */
export const FOLDER_CONCURRENCY = 16;

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

export interface ReadConfig {
  config: Config;
  /** The values config.yaml is rendered from. */
  values: Record<string, unknown>;
  /** The concurrency the folder's runs ran at when their batch.json does not say. */
  folderConcurrency: number;
}

/** config.json → the values of config.yaml, over the defaults `git tune init` writes; init's flags win. */
export function readConfig(r: FolderReader, flags: InitFlags): ReadConfig {
  const file = r.shown('config.json');
  const values: Record<string, unknown> = structuredClone(INIT_VALUES);
  const raw = r.json('config.json');
  if (!r.input.files.has('config.json')) r.warnings.push(`${file} is missing: the settings are git tune init's defaults`);
  else if (raw !== undefined && !isObject(raw)) {
    r.problems.push({ file, message: 'must be an object of settings, e.g. {"maxBatch": 10}', received: describeValue(raw) });
  } else if (isObject(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      const known = CONFIG_TOP_KEYS.find((k) => normKey(k) === normKey(key));
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
  for (const key of ['prose', 'memoryPolicy', 'runner', 'judge', 'editor'] as const) {
    if (flags[key] !== undefined) values[key] = flags[key];
  }
  const concurrency = num(values.concurrency);
  const folderConcurrency = concurrency !== null && concurrency >= 1 ? concurrency : FOLDER_CONCURRENCY;
  const parsed = configSchema.safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      let received: unknown = values;
      for (const part of issue.path) received = (received as Record<PropertyKey, unknown> | undefined)?.[part];
      r.problems.push({ file, field: pathText(issue.path) || undefined, message: issue.message, received: describeValue(received) });
    }
    return { config: withDefaults(configSchema.parse(INIT_VALUES)), values, folderConcurrency };
  }
  return { config: withDefaults(parsed.data), values, folderConcurrency };
}

/**
 * selection.json (`{batch: [{id, …}]}`, a list of ids, `{ids: [...]}`) in the
 * folder's order. Without one: no selection yet (`next` says select), unless
 * runs follow, which ran from `git tune select`'s order.
 */
export function readSelection(r: FolderReader, config: Config, hasRuns: boolean): Selection | null {
  const file = r.shown('selection.json');
  const cases = r.input.cases;
  let ids: string[] = [];
  const raw = r.json('selection.json');
  if (raw === undefined) {
    if (r.input.files.has('selection.json')) return null; // not JSON: a problem already
    if (!hasRuns) return null;
    ids = selectCases(cases, config.seed, config.limit);
    r.warnings.push(`${file} is missing: the selection is git tune select's order`);
  } else {
    const list = batchIdsOf(raw, ['ids', 'selection', 'cases']);
    if (list === null) r.problems.push({ file, message: 'must be {"batch": [{"id": …}, …]}, a list of case ids, or {"ids": [...]}', received: describeValue(raw) });
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

export interface RunPlan {
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
  review: boolean;
  wrong: string[];
  changes: { aims: string[] | null } | null;
}

export const halfOf = (run: RunPlan): Half | null => (run.id.kind === 'batch' ? run.id.half : null);
export const batchOf = (run: RunPlan): number => (run.id.kind === 'batch' ? run.id.batch : 0);

/** Every run folder: its cases, results, findings and changes, in the order runs happen. */
export function readRuns(r: FolderReader): { runs: RunPlan[]; final: RunPlan | null } {
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
      // The folder method counts its final-check folder as the final check under way (next.mjs).
      started: folder.hasBatchDir || id.kind === 'final', finished: folder.files.includes('batch/batch.json'),
      results: null, findings: null, verdict: null, review: false, wrong: [], changes: null,
    };
    const rawCases = r.json(`${base}/cases.json`);
    if (rawCases !== undefined) {
      const list = batchIdsOf(rawCases, ['cases', 'ids']);
      if (list === null) r.problems.push({ file: r.shown(`${base}/cases.json`), message: 'must be {"batch": [{"id": …}, …]}, a list of case ids or cases, or {"cases": [...]}', received: describeValue(rawCases) });
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

export interface Batches {
  numbers: number[];
  last: number;
  runs: Map<number, RunPlan[]>;
}

/** Batches numbered 1..N, runs of a half numbered 1..k: the history the folder claims. */
export function groupBatches(r: FolderReader, runs: readonly RunPlan[]): Batches {
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
export function passingRun(batches: Batches, batch: number, half: Half): RunPlan | null {
  const list = (batches.runs.get(batch) ?? []).filter((x) => halfOf(x) === half && x.verdict === 'PASSED');
  return list[list.length - 1] ?? null;
}

export function batchCasesOf(plan: BatchPlan): string[] {
  return [...plan.new, ...plan.recheck];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((id) => y.has(id));
}

/** Each batch's plan: from plan.json, else from cases.json; every run of the batch must hold its cases. */
export function readPlans(r: FolderReader, batches: Batches, inSelection: ReadonlySet<string>): Map<number, BatchPlan> {
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
export function gradeRuns(r: FolderReader, runs: readonly RunPlan[], final: RunPlan | null, selection: readonly string[]): void {
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
  run.review = hasReview(f, halfOf(run));
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

export interface MemoryPointers {
  /** The run memory/candidate.json names. */
  candidateRun: string | null;
  /** The highest batch memory/last-good.json holds (0: none). */
  lastGood: number;
}

/**
 * memory/candidate.json names the run the candidate came from (`{from:
 * "<run>"}`, also `{run|source}`, a run name, or `{batch: n}`);
 * memory/last-good.json the batches it holds (`{batches: [n, …]}`, also
 * `{batch}`, `batch03`, a run name, or a number).
 */
export function readMemoryPointers(r: FolderReader, runs: readonly RunPlan[], batches: Batches): MemoryPointers {
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
    const named = typeof rawCandidate === 'string' ? rawCandidate : isObject(rawCandidate) ? field(rawCandidate, 'from', 'run', 'source', 'fromRun', 'name') : undefined;
    const batchOnly = isObject(rawCandidate) ? batchNumberOf(field(rawCandidate, 'batch')) : null;
    if (typeof named === 'string') {
      const id = parseRunFolderName(named);
      const run = id?.kind === 'batch' ? runs.find((x) => x.name === formatRunName(id)) : undefined;
      if (!run) r.problems.push({ file, field: 'from', message: 'must name a run of the folder (batchNN-nomem-runN)', received: describeValue(named) });
      else if (halfOf(run) !== 'nomem' || run.verdict !== 'PASSED') {
        r.problems.push({ file, field: 'from', message: 'must name a no-memory run graded PASSED: the candidate is built from one', received: describeValue(named) });
      } else candidateRun = run.name;
    } else if (batchOnly !== null && batchOnly > 0) {
      const run = passingRun(batches, batchOnly, 'nomem');
      if (!run) r.problems.push({ file, field: 'batch', message: `batch ${batchOnly} has no no-memory run graded PASSED`, received: describeValue(batchOnly) });
      else candidateRun = run.name;
    } else if (!(batchOnly === 0 || (isObject(rawCandidate) && Object.keys(rawCandidate).length === 0))) {
      r.warnings.push(`${file} names no run (from, run, source or batch): no candidate is imported from it`);
    }
  }
  let lastGood = 0;
  const rawLastGood = r.json('memory/last-good.json');
  if (rawLastGood !== undefined && rawLastGood !== null) {
    const file = r.shown('memory/last-good.json');
    const listed = isObject(rawLastGood) ? field(rawLastGood, 'batches') : undefined;
    const values = Array.isArray(listed) ? listed : [isObject(rawLastGood) ? field(rawLastGood, 'batch', 'run', 'from', 'source', 'name') : rawLastGood];
    values.forEach((v, i) => {
      const n = batchNumberOf(v);
      const fieldName = Array.isArray(listed) ? `batches[${i}]` : 'batch';
      if (n === null) r.warnings.push(`${file}: ${Array.isArray(listed) ? `${fieldName} ` : ''}names no batch (batches, batch, run, or a name like batch03): no checkpoint is imported from it`);
      else if (n > 0 && (n > batches.last || !passingRun(batches, n, 'mem'))) {
        r.problems.push({ file, field: fieldName, message: `names batch ${n}, which has no with-memory run graded PASSED: a checkpoint holds a batch that passed with memory`, received: describeValue(v) });
      } else lastGood = Math.max(lastGood, n);
    });
  }
  return { candidateRun, lastGood };
}

export interface DifficultIn {
  id: string;
  reason: DifficultReason;
  batch: number;
  fixed: boolean;
  fixedIn: number | null;
  notes: string[];
  index: number;
}

/** The worst of several reasons (the order the batch plan ranks them in), or null when one is not a reason. */
function worstReason(values: unknown[]): DifficultReason | null {
  const ranks = values.map((v) => (typeof v === 'string' ? (DIFFICULT_REASONS as readonly string[]).indexOf(v.trim().toLowerCase()) : -1));
  if (ranks.length === 0 || ranks.some((x) => x < 0)) return null;
  return DIFFICULT_REASONS[Math.min(...ranks)]!;
}

/**
 * difficult.json: `{cases: [{id, reasons: [...], added: "<run>", fixed?:
 * "<run>"}]}` as the folder method writes it (the worst reason orders
 * rechecks), also a list or `{entries|difficult: [...]}` of `{id, reason|why,
 * batch|addedIn, fixed: bool, fixedIn, notes}`.
 */
export function readDifficult(r: FolderReader, lastBatch: number): DifficultIn[] {
  const out: DifficultIn[] = [];
  const raw = r.json('difficult.json');
  if (raw === undefined) return out;
  const file = r.shown('difficult.json');
  let list = listOf(raw, ['entries', 'difficult', 'cases', 'items']);
  if (list === null && isObject(raw)) list = Object.entries(raw).map(([id, e]) => (isObject(e) ? { id, ...e } : e));
  if (list === null) r.problems.push({ file, message: 'must be {"cases": [{id, reasons, added, fixed}]}, or a list of entries', received: describeValue(raw) });
  (list ?? []).forEach((e, i) => {
    const where = `entry ${i}`;
    if (!isObject(e)) {
      r.problems.push({ file, where, message: 'must be an object {id, reasons, added, fixed}', received: describeValue(e) });
      return;
    }
    const id = field(e, 'id', 'case', 'caseId');
    const reasonsRaw = field(e, 'reasons');
    const reasonRaw = reasonsRaw !== undefined ? reasonsRaw : field(e, 'reason', 'why');
    const reason = Array.isArray(reasonRaw) ? worstReason(reasonRaw) : worstReason([reasonRaw]);
    const batchRaw = field(e, 'batch', 'addedIn', 'added', 'addedBatch');
    const batch = batchNumberOf(batchRaw);
    const status = field(e, 'status');
    const fixedRaw = field(e, 'fixed');
    // `fixed: "<run>"` names the run that fixed it; `fixed: true` says only that.
    const fixedRun = typeof fixedRaw === 'string' && fixedRaw.trim() !== '' ? batchNumberOf(fixedRaw) : null;
    const fixed = fixedRaw === true || (typeof fixedRaw === 'string' && fixedRaw.trim() !== '') || (typeof status === 'string' && status.toLowerCase() === 'fixed');
    if (fixedRaw !== undefined && fixedRaw !== null && typeof fixedRaw !== 'boolean' && !(typeof fixedRaw === 'string' && (fixedRaw.trim() === '' || fixedRun !== null))) {
      r.problems.push({ file, where, field: 'fixed', message: 'must name the run that fixed it (e.g. "batch03-nomem-run2"), or be true or false', received: describeValue(fixedRaw) });
    }
    const notesRaw = field(e, 'notes', 'note');
    const notes = typeof notesRaw === 'string' ? [notesRaw] : Array.isArray(notesRaw) ? notesRaw.map(String) : [];
    let ok = true;
    if (typeof id !== 'string' || (r.input.problems.length === 0 && !r.caseIds.has(id))) {
      r.problems.push({ file, where, field: 'id', message: 'must name a case of the dataset', received: describeValue(id) });
      ok = false;
    }
    if (reason === null) {
      r.problems.push({
        file, where, field: reasonsRaw !== undefined ? 'reasons' : 'reason',
        message: `must be ${reasonsRaw !== undefined ? 'a list of reasons, each ' : ''}one of ${DIFFICULT_REASONS.join(', ')}`,
        received: describeValue(Array.isArray(reasonRaw) ? reasonRaw.find((x) => worstReason([x]) === null) : reasonRaw),
      });
      ok = false;
    }
    if (batch === null || batch > lastBatch) {
      r.problems.push({
        file, where, field: hasField(e, 'added') ? 'added' : 'batch',
        message: batch === null
          ? 'must be the batch the entry was added in (a run name such as "batch02-nomem-run1", or a number; 0 = before batch 1)'
          : `names batch ${batch}, but the folder's last batch is ${lastBatch}`,
        received: describeValue(batchRaw),
      });
      ok = false;
    }
    if (ok) {
      const fixedIn = fixedRun ?? batchNumberOf(field(e, 'fixedIn', 'fixedBatch'));
      out.push({ id: id as string, reason: reason!, batch: batch!, fixed, fixedIn, notes, index: i });
    }
  });
  return out;
}

export interface DifficultPlacement {
  changes: Map<number, DifficultChange[]>;
  notes: Map<number, string[]>;
}

/**
 * The batch each difficult change belongs to: an add in the batch the entry
 * was added in (the fold attributes it to the batch planned last, SPEC 3.2's
 * retries count from it); a fix in the batch of the run that fixed it, else
 * the last batch holding the case (a case is proposed fixed from a run that
 * got it right), never after the same case is added again.
 */
export function placeDifficult(r: FolderReader, entries: readonly DifficultIn[], plans: ReadonlyMap<number, BatchPlan>, batches: Batches): DifficultPlacement {
  const fixBatch = (e: DifficultIn): number => {
    const holding = batches.numbers.filter((b) => b >= e.batch && (plans.get(b) ? batchCasesOf(plans.get(b)!) : []).includes(e.id));
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
