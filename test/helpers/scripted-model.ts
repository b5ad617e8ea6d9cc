import type { ChatReply, ChatRequest, Model } from '../../src/run/presets/llm/types.js';

/**
 * A Model that answers from a script, in process (no HTTP): each call takes
 * the next answer, a structured object (`json`) or a function of the request.
 * It records every request, so a test sees what the preset asked.
 */
export type ScriptedAnswer = unknown | ((request: ChatRequest) => unknown);

export class ScriptedModel implements Model {
  readonly name = 'scripted';
  readonly requests: ChatRequest[] = [];
  constructor(private readonly answers: ScriptedAnswer[]) {}

  async chat(request: ChatRequest): Promise<ChatReply> {
    this.requests.push(structuredClone(request));
    if (this.answers.length === 0) throw new Error(`the script has no answer left for call ${this.requests.length}`);
    const next = this.answers.shift();
    const value = typeof next === 'function' ? (next as (r: ChatRequest) => unknown)(request) : next;
    if (value instanceof Error) throw value;
    return {
      text: '', toolCalls: [], json: value, stopReason: 'stop',
      usage: { model: this.name, inputTokens: 100, outputTokens: 20, cachedTokens: 0, costUsd: 0.001 },
    };
  }
}

/** The user-visible text of a request's messages, joined. */
export const said = (request: ChatRequest) => request.messages.map((m) => m.content).join('\n');
