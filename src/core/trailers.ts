/**
 * Commit messages of tuning steps: a subject, an optional body, and trailers
 * in the last paragraph (SPEC section 4). Trailers are `Key: value`, one per
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
  const normalized = text.replace(/\r\n/g, '\n').replace(/\n+$/, '');
  const paragraphs = normalized.split(/\n{2,}/);
  const subject = (paragraphs.shift() ?? '').trim();
  let trailers: Trailer[] = [];
  const last = paragraphs[paragraphs.length - 1];
  if (last !== undefined) {
    const lines = last.split('\n');
    const parsed = lines.map((line) => TRAILER_LINE.exec(line));
    if (parsed.every((m) => m !== null)) {
      trailers = parsed.map((m) => [m![1]!, m![2]!.trim()] as const);
      paragraphs.pop();
    }
  }
  return { subject, body: paragraphs.join('\n\n'), trailers };
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
