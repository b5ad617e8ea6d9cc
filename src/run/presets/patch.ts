import { applyPatch, parsePatch, type StructuredPatch } from 'diff';

/**
 * A unified diff as a model writes it, applied to one file with the `diff`
 * library. Models get the diff's framing wrong more often than its content,
 * so the framing is rebuilt before parsing: the file headers are ours, a
 * hunk's line counts are counted from its body (models miscount them), an
 * empty line inside a hunk is an empty context line, and a hunk header's
 * line numbers are only where the search starts (the library looks for the
 * hunk's context anywhere in the file). The content is never guessed: a
 * hunk whose context or removed lines are not in the file does not apply,
 * and the reason says which one.
 */

export type PatchOutcome = { ok: true; text: string } | { ok: false; reason: string };

/** Mismatched context lines a hunk may have and still apply (removed lines always match exactly). */
export const FUZZ_FACTOR = 2;

const HUNK_HEADER = /^@@(?:\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?\s*@@)?/;
const stripPrefix = (name: string) => name.trim().split(/\s+/)[0]!.replace(/^[ab]\//, '');

/** The patch with our file headers and recounted hunks, or why it cannot be read. */
export function normalizePatch(file: string, patch: string): { ok: true; patch: string } | { ok: false; reason: string } {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  // A fence around the whole patch (```diff … ```) is the model's markdown habit, not the patch.
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines[0]?.startsWith('```')) lines.shift();
  if (lines[lines.length - 1]?.startsWith('```')) lines.pop();

  const out = [`--- a/${file}`, `+++ b/${file}`];
  let hunk: { start: number; newStart: number; body: string[] } | null = null;
  const hunks: Array<{ start: number; newStart: number; body: string[] }> = [];
  for (const [i, line] of lines.entries()) {
    if (hunk === null) {
      const header = HUNK_HEADER.exec(line);
      if (header) {
        hunk = { start: Number(header[1] ?? 1), newStart: Number(header[2] ?? header[1] ?? 1), body: [] };
        hunks.push(hunk);
        continue;
      }
      if (line.startsWith('--- ') || line.startsWith('+++ ')) {
        const named = stripPrefix(line.slice(4));
        if (named !== '/dev/null' && named !== file) return { ok: false, reason: `its header names ${named}, not ${file}` };
        continue;
      }
      // diff --git, index, mode lines and the like carry nothing the patch needs.
      continue;
    }
    const header = HUNK_HEADER.exec(line);
    if (header) {
      hunk = { start: Number(header[1] ?? 1), newStart: Number(header[2] ?? header[1] ?? 1), body: [] };
      hunks.push(hunk);
      continue;
    }
    if (line === '') hunk.body.push(' ');
    else if (' +-\\'.includes(line[0]!)) hunk.body.push(line);
    else return { ok: false, reason: `line ${i + 1} of the patch starts with neither " " (context), "+" (added) nor "-" (removed): ${JSON.stringify(line.slice(0, 80))}` };
  }
  if (hunks.length === 0) return { ok: false, reason: 'it holds no hunk (no line starting with "@@")' };
  for (const h of hunks) {
    const oldCount = h.body.filter((l) => l[0] === ' ' || l[0] === '-').length;
    const newCount = h.body.filter((l) => l[0] === ' ' || l[0] === '+').length;
    if (oldCount + newCount === 0) return { ok: false, reason: 'a hunk is empty' };
    const oldStart = oldCount === 0 ? Math.max(0, h.start) : Math.max(1, h.start);
    const newStart = newCount === 0 ? Math.max(0, h.newStart) : Math.max(1, h.newStart);
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`, ...h.body);
  }
  return { ok: true, patch: `${out.join('\n')}\n` };
}

/** Applies a model's unified diff to `source` (the file's current text). */
export function applyModelPatch(file: string, source: string, patch: string): PatchOutcome {
  const normal = normalizePatch(file, patch);
  if (!normal.ok) return normal;
  let parsed: StructuredPatch[];
  try {
    parsed = parsePatch(normal.patch);
  } catch (err) {
    return { ok: false, reason: `it does not parse as a unified diff: ${(err as Error).message}` };
  }
  const structured = parsed[0]!;
  const text = applyPatch(source, structured, { fuzzFactor: FUZZ_FACTOR });
  if (text !== false) return { ok: true, text };
  // Which hunk does not fit: the first that fits nowhere in the file on its own.
  const bad = structured.hunks.findIndex((h) => applyPatch(source, { ...structured, hunks: [h] }, { fuzzFactor: FUZZ_FACTOR }) === false);
  const which = bad >= 0 ? `hunk ${bad + 1} of ${structured.hunks.length}` : 'its hunks, in order,';
  const removed = bad >= 0 ? structured.hunks[bad]!.lines.filter((l) => l[0] === '-').map((l) => l.slice(1)) : [];
  const fileLines = source.split('\n');
  const missing = removed.filter((l) => !fileLines.includes(l));
  // A markdown list line kept as context needs its space: ` - rule`, not `- rule` (which removes ` rule`).
  const unspaced = missing.filter((l) => fileLines.includes(`-${l}`));
  return {
    ok: false,
    reason: `${which} does not match the file's text${missing.length ? ` (it removes lines the file does not hold: ${missing.slice(0, 3).map((l) => JSON.stringify(l)).join(', ')})` : ' (its context lines are not there, or not in that order)'}${
      unspaced.length ? `; to keep ${JSON.stringify(`-${unspaced[0]}`)} as context, start its patch line with a space: ${JSON.stringify(` -${unspaced[0]}`)}` : ''}`,
  };
}
