import { describeValue } from '../../contracts/problems.js';
import { formatRunName } from '../names.js';
import type { FolderReader } from './folder.js';
import { halfOf, passingRun, type Batches, type RunPlan } from './runs.js';
import { batchNumberOf, field, isObject, parseRunFolderName } from './values.js';

/** The folder's memory pointers: which run the candidate came from, which batches the last good memory holds. Pure. */
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

