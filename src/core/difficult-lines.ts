import { DIFFICULT_REASONS, type DifficultReason } from '../contracts/values.js';
import { isValidCaseId } from './names.js';
import type { DifficultChange } from './steps.js';

/**
 * The `## Difficult` lines of a findings file, which `git tune grade`
 * applies in its own commit (the rules they follow: src/app/difficult.ts).
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

