import { DIFFICULT_REASONS, type BatchPlan, type DifficultReason } from '../../contracts/files.js';
import { describeValue } from '../../contracts/problems.js';
import type { DifficultChange } from '../steps.js';
import type { FolderReader } from './folder.js';
import { batchCasesOf, type Batches } from './runs.js';
import { batchNumberOf, field, hasField, isObject, listOf } from './values.js';

/** The folder's difficult list, and the batch each of its adds and fixes belongs to in the replay. Pure. */
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
 * was added in (the fold attributes it to the batch planned last, and docs/method.md#batches has its
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
