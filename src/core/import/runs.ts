import type { BatchPlan } from '../../contracts/files.js';
import { describeValue } from '../../contracts/problems.js';
import { formatRunName, type Half, type RunId } from '../names.js';
import { VERDICTS, type Verdict } from '../steps.js';
import { hasReview, readFindings, type Findings } from './findings.js';
import type { FolderReader } from './folder.js';
import { readResults, type RunResults } from './results.js';
import { batchIdsOf, batchNumberOf, field, hasField, idsOf, isObject, num, parseRunFolderName, splitIds } from './values.js';

/**
 * A folder's run folders: what each holds (cases, results, findings,
 * changes), the batches and halves they claim, each batch's plan, and the
 * verdict and wrong cases of each graded run. Pure.
 */
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

/** Verdicts and wrong cases of the graded runs (docs/method.md#grading), and the order the runs claim. */
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

