import { VERDICTS } from '../steps.js';
import { normKey, rightWord, splitIds } from './values.js';

/**
 * A run's findings.md as a folder holds it: the verdict is its first level-2
 * heading (`## PASSED`, `## Verdict: NO CHANGE`, `## no_change`); the review a
 * PASSED needs is `## Cost review` (no memory) or `## Memory review` (with
 * memory); wrong cases come from a `Wrong: id, id` line or a table with an id
 * column and a right column. Pure.
 */
export interface Findings {
  heading: string | null;
  verdict: string | null;
  /** Level-2 headings that name a review, lower-cased: `cost review`, `memory review`. */
  reviews: string[];
  wrongLine: string[] | null;
  table: Map<string, boolean>;
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

export function readFindings(text: string): Findings {
  const lines = markdownLines(text);
  const headings = lines.map((l) => /^##(?!#)\s*(.*?)\s*#*\s*$/.exec(l)?.[1]).filter((h): h is string => h !== undefined);
  let heading = headings[0] ?? null;
  if (heading !== null && verdictOf(heading) === 'VERDICT') {
    // `## Verdict` with the verdict on the next line
    const at = lines.findIndex((l) => /^##(?!#)/.test(l));
    heading = lines.slice(at + 1).find((l) => l.trim() !== '')?.trim() ?? heading;
  }
  const reviews = headings.filter((h) => /review/i.test(h)).map((h) => h.replace(/[*_`]/g, '').trim().toLowerCase());
  let wrongLine: string[] | null = null;
  for (const line of lines) {
    const m = /^\s*(?:[-*]\s+)?\**\s*wrong(?:\s+cases)?\s*\**\s*:\s*\**\s*(.*)$/i.exec(line);
    if (m && !line.trim().startsWith('|')) {
      wrongLine = splitIds(m[1]!.replace(/\*+$/, ''));
      break;
    }
  }
  return { heading, verdict: heading === null ? null : verdictOf(heading), reviews, wrongLine, table: findingsTable(lines) };
}

/**
 * Whether the findings hold the review a PASSED of this half needs
 * (docs/method.md#grading): `## Cost review` without memory, `## Memory review` with it. A
 * heading that says only "review" is taken for either (folders written
 * before the halves had their own reviews).
 */
export function hasReview(findings: Findings, half: 'nomem' | 'mem' | null): boolean {
  const want = half === 'mem' ? 'memory review' : 'cost review';
  const other = half === 'mem' ? 'cost review' : 'memory review';
  return findings.reviews.some((h) => h.startsWith(want) || (!h.startsWith(other) && !/^(cost|memory)\b/.test(h)));
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
    const header = cells(lines[i]!).map((h) => normKey(h.replace(/[*`]/g, '')));
    const idCol = header.findIndex((h) => ID_COLUMNS.map(normKey).includes(h));
    let rightCol = -1;
    for (const name of RIGHT_COLUMNS) {
      rightCol = header.indexOf(normKey(name));
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
