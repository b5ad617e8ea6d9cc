/**
 * The "model" behind test/helpers/model-server.ts: a pure, deterministic
 * function from a request (normalized from either wire format) to a reply.
 * It behaves like a model that follows its prose, so an edit of the prose
 * really changes what it answers.
 *
 * The brain dispatches on the request: a request for structured output
 * named `verdict` is the judge's, one named `edits` the editor's (roles
 * other brains add), anything else the runner's.
 *
 * THE RUNNER follows rules written in its system prompt (the prose files
 * and the memory the runner preset puts there), one per line:
 *
 *   - When asked about <topic>, answer: <answer>
 *       a question (the user's message) that mentions <topic> (any case) is
 *       answered with exactly <answer>; the longest topic mentioned wins;
 *   - When told to remember something, save it to memory.
 *       a user message line `Remember: when asked about <topic>, answer:
 *       <answer>` is saved through the `save_memory` tool (when it is offered)
 *       as a file `<topic-slug>.md` holding that rule, unless the system
 *       prompt already holds it; `Always save ...` saves it even then (a
 *       model that saves twice).
 *
 * A `Remember:` line also answers the question it comes with. With no rule
 * for the question it answers "I don't know." (wrong for any case that
 * expects an answer).
 */
import { editorBrain, judgeBrain } from './model-brain-roles.js';

export type Wire = 'openai' | 'anthropic';

export interface BrainToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type BrainMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: BrainToolCall[] }
  | { role: 'tool'; toolCallId: string; text: string };

export interface BrainTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A request as the brain sees it, whichever wire it came over. */
export interface BrainRequest {
  wire: Wire;
  model: string;
  /** Every system text, joined (OpenAI system messages; Anthropic's `system`). */
  system: string;
  messages: BrainMessage[];
  /** The tools offered (on Anthropic, without the one forced for structured output). */
  tools: BrainTool[];
  /** Structured output asked for: its name and schema. */
  output?: { name: string; schema: Record<string, unknown> };
}

export type BrainReply =
  | { kind: 'text'; text: string }
  | { kind: 'tools'; text?: string; calls: Array<{ name: string; arguments: Record<string, unknown> }> }
  | { kind: 'json'; json: unknown };

export type Brain = (request: BrainRequest) => BrainReply;

/** The default brain: a dispatch on the role the request is for. */
export const brain: Brain = (request) => {
  switch (request.output?.name) {
    case 'verdict':
      return judgeBrain(request);
    case 'edits':
      return editorBrain(request);
    default:
      return runnerBrain(request);
  }
};

export const DONT_KNOW = "I don't know.";

export interface Rule {
  topic: string;
  answer: string;
}

const RULE = /^\s*-?\s*when asked about (.+?), answer:\s*(.+?)\s*$/i;
const REMEMBER = /^\s*remember:\s*(when asked about .+?, answer:.+)$/i;

/** The `When asked about <topic>, answer: <answer>` rules in a text, in order. */
export function rulesIn(text: string): Rule[] {
  return text.split('\n').flatMap((line) => {
    const m = RULE.exec(line);
    return m ? [{ topic: m[1]!.trim(), answer: m[2]!.trim() }] : [];
  });
}

/** What a user message asks the model to remember. */
export function toRemember(text: string): Rule[] {
  return text.split('\n').flatMap((line) => {
    const m = REMEMBER.exec(line);
    return m ? rulesIn(m[1]!) : [];
  });
}

export const ruleLine = (r: Rule) => `- When asked about ${r.topic}, answer: ${r.answer}`;
export const slug = (topic: string) => topic.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'fact';

/** The answer the rules give a question, or null. */
export function answerFrom(rules: readonly Rule[], question: string): string | null {
  const q = question.toLowerCase();
  const hits = rules.filter((r) => q.includes(r.topic.toLowerCase())).sort((a, b) => b.topic.length - a.topic.length);
  return hits[0]?.answer ?? null;
}

export function runnerBrain(request: BrainRequest): BrainReply {
  const users = request.messages.filter((m): m is Extract<BrainMessage, { role: 'user' }> => m.role === 'user');
  const userText = users.map((m) => m.text).join('\n');
  const told = toRemember(userText);
  const question = userText.split('\n').filter((l) => !REMEMBER.test(l)).join('\n');
  const known = rulesIn(request.system);

  const saveLine = request.system.split('\n').find((l) => /\bsave\b/i.test(l) && /\bremember\b/i.test(l));
  const alreadyCalled = request.messages.some((m) => m.role === 'assistant' && m.toolCalls.length > 0);
  if (saveLine && !alreadyCalled && request.tools.some((t) => t.name === 'save_memory')) {
    const always = /\balways\b/i.test(saveLine);
    const isKnown = (r: Rule) => known.some((k) => k.topic.toLowerCase() === r.topic.toLowerCase() && k.answer === r.answer);
    const toSave = told.filter((r) => always || !isKnown(r));
    if (toSave.length > 0) {
      return { kind: 'tools', calls: toSave.map((r) => ({ name: 'save_memory', arguments: { name: `${slug(r.topic)}.md`, content: `${ruleLine(r)}\n` } })) };
    }
  }
  return { kind: 'text', text: answerFrom([...told, ...known], question) ?? DONT_KNOW };
}
