/**
 * The one interface every API preset (runner, judge, editor) talks to a model
 * through, whatever the wire format behind it (an OpenAI-compatible
 * chat-completions endpoint or the Anthropic Messages API). The presets'
 * logic takes a `Model`, so it is tested with a scripted one; the clients in
 * ./client.ts implement it over HTTP with retries, errors and prices.
 */

/** A JSON Schema, as the wire formats take it (tools' parameters, structured output). */
export type JsonSchema = Record<string, unknown>;

export interface ToolCall {
  /** The provider's id for the call; a tool result answers it by this id. */
  id: string;
  name: string;
  /** The parsed arguments (the wire carries a JSON string or object). */
  arguments: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /**
   * Structured output: the reply's `json` is an object matching this schema
   * (OpenAI: `response_format: json_schema`; Anthropic: one forced tool whose
   * input is the object). Never free text parsed by a regular expression.
   */
  output?: { name: string; schema: JsonSchema };
  maxTokens?: number;
  temperature?: number;
}

/** One call's usage, as the runner result's `usage` items carry it. */
export interface CallUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costUsd: number;
}

export interface ChatReply {
  text: string;
  toolCalls: ToolCall[];
  /** With `output`: the structured object (already parsed, not yet validated by the caller's zod schema). */
  json?: unknown;
  usage: CallUsage;
  /** Why the model stopped, as the provider says it (stop, tool_calls, length, end_turn, tool_use, …). */
  stopReason: string;
}

export interface Model {
  /** The model's name as configured (the provider may answer with a longer one in `usage.model`). */
  readonly name: string;
  chat(request: ChatRequest): Promise<ChatReply>;
}

/**
 * Why a call failed, after the client's own retries:
 * - `auth`: 401/403, the key is refused; every later call would fail the same way (runner: `sandboxDown`);
 * - `unavailable`: 429/5xx/timeouts/network past the retries (runner: the case is VOID; judge: retried, then VOID);
 * - `refused`: any other 4xx or a reply that does not parse (runner: the case's `error`).
 * The message never holds a key.
 */
export type ModelErrorKind = 'auth' | 'unavailable' | 'refused';

export class ModelError extends Error {
  constructor(readonly kind: ModelErrorKind, message: string, readonly status?: number) {
    super(message);
    this.name = 'ModelError';
  }
}
