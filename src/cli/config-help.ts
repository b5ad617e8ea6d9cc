import { readFileSync } from 'node:fs';

/**
 * `git tune config set --help`'s list of settings, read when the help is
 * shown from the JSON Schema the zod schema generates (schema/config.schema.json,
 * kept equal to it by a test): the help loads no schema library.
 */
type JsonSchema = { description?: string; properties?: Record<string, JsonSchema>; anyOf?: JsonSchema[] };

export function configKeysHelp(): string {
  let schema: JsonSchema;
  try {
    schema = JSON.parse(readFileSync(new URL('../../schema/config.schema.json', import.meta.url), 'utf8')) as JsonSchema;
  } catch {
    return '';
  }
  const rows: Array<[string, string]> = [];
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    rows.push([key, field.description ?? '']);
    const object = [field, ...(field.anyOf ?? [])].find((s) => s.properties);
    for (const [sub, inner] of Object.entries(object?.properties ?? {})) rows.push([`${key}.${sub}`, inner.description ?? '']);
  }
  const width = Math.max(...rows.map(([key]) => key.length)) + 2;
  return `\nSettings:\n${rows.map(([key, doc]) => `  ${key.padEnd(width)}${doc}`).join('\n')}`;
}
