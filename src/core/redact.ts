/**
 * Secrets reach runners, judges and editors only through the environment;
 * none is ever written to the repository, a log or a report (docs/contracts.md#secrets). The
 * values of variables named like secrets (`OPENAI_API_KEY`, `GH_TOKEN`,
 * `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, …) are replaced by
 * `[redacted:NAME]` in everything a process printed or returned before it is
 * stored, and a step whose files still hold one is refused. Pure.
 */
export interface Secret {
  name: string;
  value: string;
}

/** Shorter values (`1`, `true`, `prod`) are too common to replace without mangling text. */
export const MIN_SECRET_LENGTH = 6;

const SECRET_PART = /^(?:[A-Z0-9]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL)S?|PAT|PWD)$/;
/** Named like a secret but never one: paths the shell and git set. */
const NOT_SECRET = new Set(['PWD', 'OLDPWD', 'GPG_TTY', 'SSH_AUTH_SOCK', 'KEYTIMEOUT']);

export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRET.has(upper)) return false;
  if (/PASSWORD|SECRET|API_?KEY|ACCESS_?TOKEN|PRIVATE_?KEY/.test(upper)) return true;
  return upper.split(/[_\-.]+/).some((part) => SECRET_PART.test(part));
}

/** The secrets among environment variables, longest value first (so a value inside another is replaced after it). */
export function secretsOf(...envs: Array<Record<string, string | undefined> | undefined>): Secret[] {
  const byValue = new Map<string, string>();
  for (const env of envs) {
    for (const [name, value] of Object.entries(env ?? {})) {
      if (value === undefined || value.trim().length < MIN_SECRET_LENGTH || !isSecretName(name)) continue;
      if (!byValue.has(value)) byValue.set(value, name);
    }
  }
  return [...byValue].map(([value, name]) => ({ name, value })).sort((a, b) => b.value.length - a.value.length);
}

/** The forms a value takes in text: as is, escaped inside a JSON string, URL-encoded. */
function formsOf(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

export function redactText(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const s of secrets) {
    for (const form of formsOf(s.value)) if (out.includes(form)) out = out.split(form).join(`[redacted:${s.name}]`);
  }
  return out;
}

/** Every string in a JSON value (keys too) with secrets replaced. */
export function redactJson<T>(value: T, secrets: readonly Secret[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [redactText(k, secrets), walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** The names of the secrets a text holds (to refuse writing it). */
export function secretsIn(data: Uint8Array | string, secrets: readonly Secret[]): string[] {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return secrets.filter((s) => formsOf(s.value).some((form) => buf.includes(form))).map((s) => s.name);
}
