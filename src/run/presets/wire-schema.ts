import * as z from 'zod';
import type { JsonSchema } from './llm/types.js';

/**
 * A zod schema as the structured-output features of the wire formats take
 * it: OpenAI's strict `json_schema` wants every property required, no
 * additional properties, and refuses keywords it does not support (`default`,
 * `$schema`, and on some models string and array bounds); the Anthropic tool
 * input takes the same subset. Built from zod's own JSON Schema (the output
 * side, where defaulted fields are required). The bounds left out here are
 * still checked: every reply is validated with the zod schema itself.
 */
export function wireSchema(schema: z.ZodType): JsonSchema {
  return clean(z.toJSONSchema(schema, { io: 'output' })) as JsonSchema;
}

const DROPPED = new Set(['$schema', 'default', 'minLength', 'maxLength', 'minItems', 'maxItems']);

function clean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(clean);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    out[key] = clean(value);
  }
  if (out.type === 'object' && out.properties && !out.required) out.required = [];
  return out;
}
