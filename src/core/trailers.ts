/**
 * Commit messages of tuning steps: a subject, an optional body, and trailers
 * in the last paragraph (docs/git-model.md). Trailers are `Key: value`, one per
 * line, in the order given; a key may repeat.
 */
export type Trailer = readonly [key: string, value: string];

export interface CommitMessage {
  subject: string;
  body: string;
  trailers: Trailer[];
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]?(.*)$/;

export function formatMessage(message: CommitMessage): string {
  const parts = [message.subject.trim()];
  const body = message.body.trim();
  if (body) parts.push(body);
  if (message.trailers.length > 0) {
    for (const [key, value] of message.trailers) {
      if (!TRAILER_LINE.test(`${key}: x`) || /[\r\n]/.test(value)) {
        throw new Error(`invalid trailer ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
      }
    }
    parts.push(message.trailers.map(([key, value]) => `${key}: ${value}`).join('\n'));
  }
  // Git ends messages with a newline; a message without one hashes differently.
  return `${parts.join('\n\n')}\n`;
}

export function parseMessage(text: string): CommitMessage {
  // Split at the last blank line only: a step's message is read on every walk
  // of a long history, and only its last paragraph can hold trailers.
  const normalized = normalize(text);
  const { view, cut, trailers } = lastParagraph(normalized);
  if (cut < 0) return { subject: normalized.trim(), body: '', trailers: [] };
  const rest = trailers === null ? normalized : trimNewlines(view.slice(0, cut));
  const first = rest.search(/\n{2,}/);
  const subject = (first < 0 ? rest : rest.slice(0, first)).trim();
  const body = first < 0 ? '' : rest.slice(first).replace(/^\n+/, '').replace(/\n{3,}/g, '\n\n');
  return { subject, body, trailers: trailers ?? [] };
}

/** Only the trailers of a message (what reading a step needs): parseMessage's, without its subject and body. */
export function messageTrailers(text: string): Trailer[] {
  return lastParagraph(normalize(text)).trailers ?? [];
}

/** A message with LF line ends and no newlines at its end. */
const normalize = (text: string): string => trimNewlines(text.includes('\r') ? text.replace(/\r\n/g, '\n') : text);

/**
 * Where a normalized message's trailers are: its last paragraph above any
 * closing comment lines (`view`, cut at `cut`, -1 when it has one paragraph),
 * and the trailers there, null when one of its lines is no trailer.
 */
function lastParagraph(normalized: string): { view: string; cut: number; trailers: Trailer[] | null } {
  const view = withoutClosingComments(normalized);
  const cut = view.lastIndexOf('\n\n');
  return { view, cut, trailers: cut < 0 ? null : trailerLines(view.slice(cut + 2)) };
}

/**
 * The message without the block of comment lines (git's `#`) it may end
 * with: git reads trailers above such a block (`git interpret-trailers`,
 * `%(trailers)`), and a commit made without the editor keeps the block git
 * wrote into the message (a revert committed after a conflict with
 * `git commit --no-edit` ends with `# Conflicts:` and the files). A message
 * whose last line is no comment, every step's, is returned as it is.
 */
function withoutClosingComments(text: string): string {
  let view = text;
  for (;;) {
    const start = view.lastIndexOf('\n') + 1;
    if (view.charCodeAt(start) !== 35) return view;
    view = trimNewlines(view.slice(0, Math.max(0, start - 1)));
  }
}

/** `text` without the newlines it ends with (a loop: the regex `\n+$` tries every position). */
function trimNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** The paragraph's trailers when every one of its lines is one, else null. */
function trailerLines(paragraph: string): Trailer[] | null {
  const out: Trailer[] = [];
  const lines = paragraph.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = TRAILER_LINE.exec(lines[i]!);
    if (m === null) return null;
    out.push([m[1]!, m[2]!.trim()]);
  }
  return out;
}

export function trailerValue(trailers: readonly Trailer[], key: string): string | undefined {
  const lower = key.toLowerCase();
  for (const [k, v] of trailers) if (k.toLowerCase() === lower) return v;
  return undefined;
}

export function trailerValues(trailers: readonly Trailer[], key: string): string[] {
  const lower = key.toLowerCase();
  return trailers.filter(([k]) => k.toLowerCase() === lower).map(([, v]) => v);
}
