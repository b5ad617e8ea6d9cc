import { DIFFICULT_REASONS, type DifficultReason } from '../contracts/values.js';
import type { DifficultEntry } from './fold.js';
import { isValidCaseId } from './names.js';
import type { DifficultChange } from './steps.js';

/**
 * Changes to the difficult list: the rules each one follows (the decisions
 * are listed in src/app/difficult.ts), and the `## Difficult` lines of a
 * findings file, which `git tune grade` applies in its own commit.
 */
export interface DifficultLines {
  changes: DifficultChange[];
  problems: string[];
  /** Notes after ` — ` (or ` -- `, ` # `) on a line, by id. */
  notes: Map<string, string[]>;
}

const NOTE_SEPARATOR = /\s+(?:(?:—|–|--|-)(?:\s+|$)|#\s*)/;
const PLACEHOLDER = /^\(?(?:none|nothing|n\/a)\b[^()]*\)?\.?$/i;
const EXAMPLE = '(e.g. `add billing-03 wrong — still quotes 14 days` or `fix billing-03`)';

/**
 * Reads the lines under the `## Difficult` level-2 heading(s) of a findings
 * file: `add <id> <reason>` and `fix <id>`, each optionally a list item
 * (`- `, `* `) and followed by a note after ` — ` (also ` -- `, ` - `, ` # `).
 * Blank lines, html comments, deeper headings, fenced code (examples) and a
 * `(none)` placeholder are ignored. Problems name the file line (1-based). Pure.
 */
export function parseDifficultLines(markdown: string): DifficultLines {
  // Comments go, their newlines stay, so line numbers still match the file.
  const text = markdown.replace(/<!--[\s\S]*?(?:-->|$)/g, (c) => c.replace(/[^\n]/g, ''));
  const changes: DifficultChange[] = [];
  const problems: string[] = [];
  const notes = new Map<string, string[]>();
  let inSection = false;
  let inFence = false;
  text.split(/\r?\n/).forEach((raw, i) => {
    const lineNo = i + 1;
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      inFence = !inFence;
      return;
    }
    if (inFence) return; // examples, not lines to apply
    if (/^#{1,2}(\s|$)/.test(line)) {
      inSection = /^##\s+difficult\b/i.test(line);
      return;
    }
    if (!inSection || line === '' || /^#{3,}/.test(line)) return;
    const item = line.replace(/^(?:[-*+]|\d+[.)])\s+/, '');
    const sep = NOTE_SEPARATOR.exec(item);
    const command = (sep ? item.slice(0, sep.index) : item).replace(/^[`*_]+|[`*_]+$/g, '').trim();
    const note = sep ? item.slice(sep.index + sep[0].length).trim() : '';
    if (command === '' || PLACEHOLDER.test(command)) return;
    const tokens = command.split(/\s+/);
    const op = tokens[0]!.toLowerCase();
    const bad = (rule: string) => problems.push(`line ${lineNo}: \`${line}\`: ${rule} ${EXAMPLE}`);
    if (op !== 'add' && op !== 'fix') {
      bad('a line here must be `add <id> <reason>` or `fix <id>`; put explanations in an html comment');
      return;
    }
    const id = tokens[1];
    if (op === 'add' && tokens.length !== 3) {
      bad(`\`add\` takes a case id and a reason (${DIFFICULT_REASONS.join(', ')}); a note goes after \` — \``);
      return;
    }
    if (op === 'fix' && tokens.length !== 2) {
      bad('`fix` takes one case id; a note goes after ` — `');
      return;
    }
    if (!isValidCaseId(id!)) {
      bad(`\`${id}\` is not a case id ([A-Za-z0-9._-])`);
      return;
    }
    if (op === 'add') {
      const reason = tokens[2]!.toLowerCase();
      if (!(DIFFICULT_REASONS as readonly string[]).includes(reason)) {
        bad(`the reason must be one of ${DIFFICULT_REASONS.join(', ')} (found \`${tokens[2]}\`)`);
        return;
      }
      changes.push({ op: 'add', id: id!, reason: reason as DifficultReason });
    } else {
      changes.push({ op: 'fix', id: id! });
    }
    if (note) notes.set(id!, [...(notes.get(id!) ?? []), note]);
  });
  return { changes, problems, notes };
}


const formatChange = (c: DifficultChange) => (c.op === 'add' ? `add ${c.id} ${c.reason}` : `fix ${c.id}`);

/**
 * Checks `changes` in order, each against the list as the ones before it
 * left it (`list`: the fold's entries), and `notes`: the changes that move
 * the list (a same-reason `add` that only brings a note is dropped), and
 * every problem, named by its line. Never throws.
 */
export function checkDifficultChanges(
  list: readonly DifficultEntry[],
  dataset: ReadonlySet<string>,
  changes: readonly DifficultChange[],
  notes: ReadonlyMap<string, readonly string[]>,
): { moving: DifficultChange[]; problems: string[] } {
  // The list as the fold leaves it: the latest entry of each id.
  const latest = new Map(list.map((e) => [e.id, { reason: e.reason as string, fixed: e.fixed }]));
  const problems: string[] = [];
  const moving: DifficultChange[] = [];
  for (const change of changes) {
    const line = formatChange(change);
    if (!dataset.has(change.id)) {
      problems.push(`${line}: ${change.id} is not a case of the dataset${isValidCaseId(change.id) ? '' : ' (not even a valid case id)'}`);
      continue;
    }
    const entry = latest.get(change.id);
    if (change.op === 'add') {
      if (!(DIFFICULT_REASONS as readonly string[]).includes(change.reason)) {
        problems.push(`${line}: the reason must be one of ${DIFFICULT_REASONS.join(', ')}`);
        continue;
      }
      if (entry && !entry.fixed && entry.reason === change.reason) {
        if ((notes.get(change.id) ?? []).length === 0) {
          problems.push(`${line}: ${change.id} is already on the difficult list with reason ${change.reason}: nothing to change (drop the line, or give another reason)`);
        }
        continue;
      }
      latest.set(change.id, { reason: change.reason, fixed: false });
    } else {
      if (!entry) {
        problems.push(`${line}: ${change.id} is not on the difficult list`);
        continue;
      }
      if (entry.fixed) {
        problems.push(`${line}: ${change.id} is already fixed: nothing to change (drop the line)`);
        continue;
      }
      entry.fixed = true;
    }
    moving.push(change);
  }
  for (const [id, texts] of notes) {
    if (texts.length > 0 && !latest.has(id)) problems.push(`note for ${id}: ${id} is not on the difficult list (add it first: add ${id} <reason>)`);
  }
  return { moving, problems };
}
