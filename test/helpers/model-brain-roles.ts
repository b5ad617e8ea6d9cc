import { createPatch } from 'diff';
import { ruleLine, rulesIn, type BrainMessage, type BrainReply, type BrainRequest } from './model-brain.js';

/**
 * The judge's and the editor's parts of the loopback model's brain
 * (./model-brain.ts dispatches to them by the structured output asked for:
 * `verdict`, `edits`). They read the requests the judge and editor presets
 * write (src/run/presets/judge-logic.ts, editor-logic.ts): the case, the
 * answer and the prose files in fenced blocks under their headings. Being a
 * test model, they may read that text; the presets never read a reply's text.
 *
 * THE JUDGE: an answer is right when it equals the case's `expected` (trimmed,
 * any case, a final full stop aside). Every rubric item is met when right,
 * missed when wrong. A wrong answer gets one proposal: the rule line
 * `- When asked about <topic>, answer: <expected>` (the runner brain's
 * format) for the prose file named after the case's class (else the first
 * that is not memory policy), where <topic> is the case's `topic` (an extra
 * key a case may carry).
 *
 * THE EDITOR: each proposal whose change holds rule lines and whose file is
 * editable gets those lines added at the end of the file (when not there
 * yet), as a unified diff made by the `diff` library; changes.md lists them,
 * and the aims are the proposals' cases.
 */

const userText = (messages: readonly BrainMessage[]) =>
  messages.filter((m): m is Extract<BrainMessage, { role: 'user' }> => m.role === 'user').map((m) => m.text).join('\n');

/** The text of the fenced block starting at or after line `from`, and the line after it. */
function fencedAt(lines: readonly string[], from: number): { text: string; next: number } | null {
  let i = from;
  while (i < lines.length && !/^`{3,}/.test(lines[i]!)) i++;
  if (i >= lines.length) return null;
  const fence = /^`{3,}/.exec(lines[i]!)![0];
  const body: string[] = [];
  for (let j = i + 1; j < lines.length; j++) {
    if (lines[j] === fence) return { text: `${body.join('\n')}\n`, next: j + 1 };
    body.push(lines[j]!);
  }
  return null;
}

/** The fenced block after the first line equal to `heading`. */
function blockAfter(text: string, heading: string): string | null {
  const lines = text.split('\n');
  const at = lines.indexOf(heading);
  return at < 0 ? null : fencedAt(lines, at + 1)?.text ?? null;
}

interface ShownFile {
  path: string;
  text: string;
  note: string;
}

/** The files shown under `### <path> (<note>)` headings. */
function shownFiles(text: string): ShownFile[] {
  const lines = text.split('\n');
  const files: ShownFile[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^### (\S+)(?: \((.+)\))?$/.exec(lines[i]!);
    if (!m) continue;
    const block = fencedAt(lines, i + 1);
    if (!block) continue;
    files.push({ path: m[1]!, note: m[2] ?? '', text: block.text });
    i = block.next - 1;
  }
  return files;
}

const same = (a: string, b: string) => a.trim().toLowerCase().replace(/\.$/, '') === b.trim().toLowerCase().replace(/\.$/, '');

export function judgeBrain(request: BrainRequest): BrainReply {
  const text = userText(request.messages);
  const item = JSON.parse(blockAfter(text, '## The case') ?? '{}') as { class?: string; expected?: unknown; topic?: unknown; input?: unknown; rubric?: Array<{ id: string }> };
  const answer = (blockAfter(text, 'Answer:') ?? '').replace(/\n$/, '');
  const expected = typeof item.expected === 'string' ? item.expected : item.expected === undefined ? null : JSON.stringify(item.expected);
  const right = expected !== null && same(answer, expected);
  const ids = (item.rubric ?? []).map((r) => r.id);
  const files = shownFiles(text);
  const proposals = [];
  if (!right && expected !== null && typeof item.topic === 'string') {
    const target = files.find((f) => item.class && f.path.includes(item.class)) ?? files.find((f) => f.note !== 'memory policy') ?? files[0];
    const line = ruleLine({ topic: item.topic, answer: expected });
    if (target && !target.text.split('\n').includes(line)) {
      proposals.push({ file: target.path, change: line, why: `the answer was ${JSON.stringify(answer)}, not ${JSON.stringify(expected)}`, expect: ids.length ? `${ids.join(', ')} met` : 'right' });
    }
  }
  return {
    kind: 'json',
    json: {
      right,
      rubric: Object.fromEntries(ids.map((id) => [id, right ? 'met' : 'missed'])),
      evidence: Object.fromEntries(ids.map((id) => [id, right ? 'matches the reference answer' : `says ${JSON.stringify(answer)}`])),
      summary: right ? 'matches the reference answer' : `says ${JSON.stringify(answer)} where ${JSON.stringify(expected)} is right`,
      caseOnly: false,
      proposals,
    },
  };
}

export function editorBrain(request: BrainRequest): BrainReply {
  const text = userText(request.messages);
  const proposals = JSON.parse(blockAfter(text, "## The judge's proposals, merged") ?? '[]') as Array<{ file: string; change: string; why?: string; cases?: string[] }>;
  const files = new Map(shownFiles(text).filter((f) => f.note === 'editable').map((f) => [f.path, f.text]));
  const changed = new Map<string, string>();
  const done: string[] = [];
  const aims = new Set<string>();
  for (const p of proposals) {
    const before = changed.get(p.file) ?? files.get(p.file);
    if (before === undefined) continue;
    let after = before;
    for (const rule of rulesIn(p.change)) {
      const line = ruleLine(rule);
      if (after.split('\n').includes(line)) continue;
      after = `${after}${after.endsWith('\n') || after === '' ? '' : '\n'}${line}\n`;
      done.push(`- \`${p.file}\`: added \`${line}\`${p.why ? ` (${p.why})` : ''}`);
    }
    if (after !== before) {
      changed.set(p.file, after);
      for (const id of p.cases ?? []) aims.add(id);
    }
  }
  return {
    kind: 'json',
    json: {
      edits: [...changed].map(([file, after]) => ({ file, patch: createPatch(file, files.get(file)!, after) })),
      changes: done.length ? `Rules added from the judge's proposals:\n\n${done.join('\n')}` : 'No proposal holds a rule to add.',
      aims: [...aims],
    },
  };
}
