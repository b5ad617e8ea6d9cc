import * as z from 'zod';
import { judgeOutputSchema, proposalSchema, RUBRIC_MARKS, type JudgeOutput } from '../../contracts/judge.js';
import type { CaseStory, StoryEdit } from '../../core/case-story.js';
import type { CallUsage, ChatMessage, ChatRequest, Model } from './llm/types.js';
import { normalizeProsePath, type ProseFile } from './prose-files.js';
import { fenced, issuesText } from './prompt-text.js';
import { wireSchema } from './wire-schema.js';

/**
 * The judge preset's logic (docs/contracts.md, the judge; docs/presets.md): one
 * case, its runner's result and the prose the agent ran with become one
 * request for a structured `verdict`; the reply is validated with the
 * judge contract's schema, never read out of free text. A reply that does
 * not validate is asked for again once, with what was wrong; proposals that
 * name a file that is not prose are dropped and listed. The program around
 * it (judge-api.ts) reads the files and writes TUNE_OUTPUT.
 */

export interface JudgeCaseInput {
  /** The case as git-tune wrote it to TUNE_CASE. */
  item: { id: string; input: unknown; rubric?: Array<{ id: string; text: string }>; expected?: unknown; [k: string]: unknown };
  /** The runner's result as git-tune wrote it to TUNE_RESULT (answer, usage, llmCalls, …; checks when present). */
  result: Record<string, unknown>;
  /** The prose files the agent ran with, the only files a proposal may name. */
  prose: readonly ProseFile[];
  /** The runner's transcript of the case, when it wrote one. */
  transcript?: string | null;
  /** The case's story before this run (TUNE_HISTORY), when git-tune gave one. */
  history?: CaseStory | null;
}

/** A proposal the judge made for a file it may not name, kept out of the verdict and listed beside it. */
export interface DroppedProposal {
  file: string;
  change: string;
  reason: string;
}

export interface JudgeCaseOutcome {
  /** What the judge preset writes to TUNE_OUTPUT (the judge contract, with `droppedProposals` and `usage` beside it). */
  output: JudgeOutput & { droppedProposals?: DroppedProposal[]; usage: CallUsage[] };
  /** Model calls made (2 when the first reply did not validate). */
  calls: number;
}

/** The judge could not produce a verdict that validates; the program exits non-zero with this reason. */
export class JudgeReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JudgeReplyError';
  }
}

/** The name of the structured output the judge asks for. */
export const VERDICT = 'verdict';

/** How much prose and transcript one request carries at most (characters); the rest is cut and said so. */
const MAX_PROSE_CHARS = 200_000;
const MAX_TRANSCRIPT_CHARS = 40_000;

const rubricIdsOf = (input: JudgeCaseInput) => (input.item.rubric ?? []).map((r) => r.id);

/**
 * The verdict's schema for one case, derived from the judge contract's
 * (src/contracts/judge.ts) made strict for structured output: every rubric
 * id of the case marked and given evidence, proposals only for the prose files.
 */
export function verdictSchema(rubricIds: readonly string[], proseFiles: readonly string[]) {
  const shape = judgeOutputSchema.shape;
  const file = proseFiles.length > 0 ? z.enum(proseFiles as [string, ...string[]]) : proposalSchema.shape.file;
  return z.strictObject({
    right: shape.right.describe('true only when the answer is correct for the input: agrees with the reference answer (when given), meets every rubric item, and passed its checks'),
    rubric: z.strictObject(Object.fromEntries(rubricIds.map((id) => [id, z.enum(RUBRIC_MARKS)]))).describe('every rubric item of the case by its id: met, partial or missed'),
    evidence: z.strictObject(Object.fromEntries(rubricIds.map((id) => [id, z.string()]))).describe('per rubric id: what in the answer shows the mark (a short quote or reason)'),
    summary: z.string().describe('one line: what the answer got right or wrong'),
    caseOnly: shape.caseOnly.unwrap().describe('true when the fault is in the case itself (its reference answer, rubric or checks), so no prose change can fix it'),
    proposals: z.array(z.strictObject({
      file: file.describe('the prose file to change, exactly as listed'),
      change: proposalSchema.shape.change.describe('the concrete change: the text to add or to replace, written as the file writes its rules'),
      why: z.string().describe('what went wrong that this change fixes'),
      expect: z.string().describe('what should change in the answers (e.g. "r2 met")'),
    })).describe('concrete changes to named prose files; empty when the answer is right and cheap, or caseOnly'),
  });
}

const SYSTEM = [
  'You are the judge of an LLM agent that is being tuned by editing its prose (its prompts and rules).',
  'You grade one case: the agent\'s answer against the case\'s reference answer (`expected`) and its rubric items.',
  'Then you read the prose files the agent ran with and propose concrete changes to named prose files that would make',
  'the agent right on cases like this one, or cheaper when it is right but spent more calls or tokens than the task needs.',
  '',
  'Rules:',
  '- right: true only when the answer is correct for the input; a failed check makes it wrong.',
  '- rubric: mark every rubric item by its id (met, partial, missed); evidence: per id, a short quote from the answer or the reason.',
  '- proposals: only for the prose files listed, by their exact path. Say the change concretely: the rule text to add or the',
  '  text to replace, in the style of the file. Never name the case id and never quote the case input in a change: prose',
  '  must generalise beyond this case.',
  '- caseOnly: true when the case itself is at fault (its reference answer, rubric or checks contradict each other or the',
  '  input), so no prose change could make it right; then propose nothing.',
  '- When the case\'s earlier runs in the tuning are given: say in the summary when it turned (e.g. "right before the edit',
  '  after run 2, wrong since"), weigh its cost against those runs, and do not propose again what an edit that was',
  '  reverted already tried.',
  '- summary: one line.',
  `Answer with the structured output \`${VERDICT}\` only.`,
].join('\n');

function caseSection(item: JudgeCaseInput['item']): string {
  const { rev: _rev, ...shown } = item;
  return `## The case\n\n${fenced(JSON.stringify(shown, null, 2), 'json')}`;
}

function resultSection(result: Record<string, unknown>): string {
  const lines = ['## The agent\'s result', ''];
  const answer = result.answer;
  lines.push('Answer:', '', fenced(typeof answer === 'string' ? answer : JSON.stringify(answer ?? null, null, 2), typeof answer === 'string' ? 'text' : 'json'), '');
  if (typeof result.error === 'string') lines.push(`The runner reported an error: ${result.error}`, '');
  if (Array.isArray(result.checks) && result.checks.length > 0) {
    lines.push('Its checks (run by git-tune):', '', fenced(JSON.stringify(result.checks, null, 2), 'json'), '');
  }
  // The cost review: what the answer took, so a right but costly answer gets a proposal too.
  const cost: Record<string, unknown> = {};
  for (const key of ['llmCalls', 'toolCalls', 'memoryReads', 'durationMs', 'usage']) if (result[key] !== undefined) cost[key] = result[key];
  if (Object.keys(cost).length > 0) lines.push('What it cost:', '', fenced(JSON.stringify(cost, null, 2), 'json'), '');
  return lines.join('\n').trimEnd();
}

/** The prose files, each under its path, cut (and said so) past MAX_PROSE_CHARS in all. */
export function proseSection(prose: readonly ProseFile[], title: string, note: (f: ProseFile) => string = () => ''): string {
  const lines = [title, ''];
  if (prose.length === 0) lines.push('(none: the tuning\'s prose globs match no file)');
  let left = MAX_PROSE_CHARS;
  for (const f of prose) {
    const text = f.text.length > left ? `${f.text.slice(0, Math.max(0, left))}\n… (cut: the file goes on for ${f.text.length - left} more characters)` : f.text;
    left = Math.max(0, left - f.text.length);
    lines.push(`### ${f.path}${note(f)}`, '', fenced(text, 'markdown'), '');
  }
  return lines.join('\n').trimEnd();
}

const editText = (e: StoryEdit) => `edit ${e.oid.slice(0, 7)}${e.aimsHere ? ' (aimed at this case)' : ''}: ${e.fate}`;

/**
 * The case's earlier runs in the tuning, short: run, right or wrong, tokens,
 * calls, and the edits between, so the judge can tell "right before the edit
 * after run 2, wrong since" and weigh the cost against earlier tries.
 */
export function historySection(story: CaseStory): string {
  const runs = Array.isArray(story.runs) ? story.runs : [];
  const since = Array.isArray(story.editsSince) ? story.editsSince : [];
  const lines = ['## This case earlier in the tuning', ''];
  if (runs.length === 0) lines.push('No earlier run held this case.');
  for (const r of runs) {
    for (const e of r.editsBefore ?? []) lines.push(`  then ${editText(e)}`);
    const cost = [r.tokens !== undefined ? `${r.tokens} tokens` : '', r.llmCalls !== undefined ? `${r.llmCalls} llm call${r.llmCalls === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ');
    lines.push(`- ${r.run}: ${r.outcome}${cost ? ` (${cost})` : ''}${r.turned ? ` (turned ${r.turned})` : ''}`);
  }
  if (since.length > 0) {
    lines.push('', 'Edits since, which the prose below holds:');
    for (const e of since) lines.push(`- ${editText(e)}`);
  }
  for (const d of Array.isArray(story.difficult) ? story.difficult : []) lines.push(`On the difficult list since batch ${d.batch} (${d.reason})${d.fixed ? ', fixed since' : ''}.`);
  return lines.join('\n');
}

/** The request for one case's verdict. */
export function judgeRequest(input: JudgeCaseInput): ChatRequest {
  const parts = [caseSection(input.item), resultSection(input.result)];
  if (input.transcript) {
    const t = input.transcript.length > MAX_TRANSCRIPT_CHARS ? `${input.transcript.slice(0, MAX_TRANSCRIPT_CHARS)}\n… (cut)` : input.transcript;
    parts.push(`## What the agent did (its transcript)\n\n${fenced(t, 'text')}`);
  }
  if (input.history) parts.push(historySection(input.history));
  parts.push(proseSection(input.prose, '## The prose files (the only files a proposal may name)', (f) => (f.memoryPolicy ? ' (memory policy)' : '')));
  return {
    messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: parts.join('\n\n') }],
    output: { name: VERDICT, schema: wireSchema(verdictSchema(rubricIdsOf(input), input.prose.map((f) => f.path))) },
  };
}

/**
 * A reply's structured object as the judge contract takes it, or why not:
 * the contract's schema, every rubric id of the case marked, and proposals
 * for files that are not prose dropped (listed, not a reason to ask again).
 */
export function checkVerdict(json: unknown, input: JudgeCaseInput): { ok: true; output: JudgeOutput; dropped: DroppedProposal[] } | { ok: false; error: string } {
  if (json === undefined || json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { ok: false, error: `the reply holds no ${VERDICT} object` };
  }
  const parsed = judgeOutputSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: issuesText(parsed.error) };
  const ids = rubricIdsOf(input);
  const unmarked = ids.filter((id) => parsed.data.rubric[id] === undefined);
  if (unmarked.length > 0) return { ok: false, error: `rubric: every rubric id must be marked; missing: ${unmarked.join(', ')}` };
  const known = new Set(ids);
  const prose = new Set(input.prose.map((f) => f.path));
  const dropped: DroppedProposal[] = [];
  const proposals = [];
  for (const p of parsed.data.proposals) {
    const file = normalizeProsePath(p.file);
    if (prose.has(file)) proposals.push({ ...p, file });
    else dropped.push({ file: p.file, change: p.change, reason: `not one of the prose files (${[...prose].join(', ') || 'none'})` });
  }
  const only = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).filter(([id]) => known.has(id)));
  return {
    ok: true,
    // A fault in the case is not the prose's: no proposal to act on (the editor would learn nothing).
    output: { ...parsed.data, rubric: only(parsed.data.rubric), evidence: only(parsed.data.evidence), proposals: parsed.data.caseOnly ? [] : proposals },
    dropped,
  };
}

/** Grades one case: the verdict, asked again once when the first reply does not validate. Throws JudgeReplyError, or the model's ModelError. */
export async function judgeCase(model: Model, input: JudgeCaseInput): Promise<JudgeCaseOutcome> {
  const request = judgeRequest(input);
  const usage: CallUsage[] = [];
  let messages: ChatMessage[] = request.messages;
  let lastError = '';
  for (let call = 1; call <= 2; call++) {
    const reply = await model.chat({ ...request, messages });
    usage.push(reply.usage);
    const checked = checkVerdict(reply.json, input);
    if (checked.ok) {
      return {
        output: { ...checked.output, ...(checked.dropped.length > 0 ? { droppedProposals: checked.dropped } : {}), usage },
        calls: call,
      };
    }
    lastError = checked.error;
    messages = [
      ...request.messages,
      { role: 'assistant', content: reply.json !== undefined ? JSON.stringify(reply.json) : reply.text },
      { role: 'user', content: `That ${VERDICT} does not match the judge contract: ${checked.error}. Answer again with the whole ${VERDICT}, fixed.` },
    ];
  }
  throw new JudgeReplyError(`the model's ${VERDICT} did not validate twice (asked again once): ${lastError}`);
}
