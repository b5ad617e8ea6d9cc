import * as z from 'zod';
import { parseAims } from '../../core/edit.js';
import type { CallUsage, ChatMessage, ChatRequest, Model } from './llm/types.js';
import { applyModelPatch } from './patch.js';
import { fenced, issuesText } from './prompt-text.js';
import { proseSection } from './judge-logic.js';
import { normalizeProsePath, type ProseFile } from './prose-files.js';
import { wireSchema } from './wire-schema.js';

/**
 * The editor preset's logic (docs/contracts.md, the editor; docs/presets.md): the
 * findings of a graded run, the judge's merged proposals and the prose files
 * become one request for structured `edits`: a unified diff per file,
 * changes.md's text and the case ids the edit aims at. Each patch is applied
 * with the `diff` library to the file as shown; a patch that does not apply,
 * or names a file this half may not change, is asked for again once with
 * the reason and the file's text; still failing, the editor fails with the
 * reason. Nothing is written here: the program (editor-api.ts) writes the
 * files once every patch applied.
 */

/** One merged proposal as git-tune writes TUNE_PROPOSALS (src/app/editor.ts). */
export const editorProposalSchema = z.looseObject({
  file: z.string(),
  change: z.string(),
  why: z.string().default(''),
  expect: z.string().default(''),
  cases: z.array(z.string()).default([]),
});
export type EditorProposal = z.infer<typeof editorProposalSchema>;

export interface EditorInput {
  /** The findings of the graded run (markdown). */
  findings: string;
  proposals: readonly EditorProposal[];
  half: 'nomem' | 'mem';
  /** Every prose and memory-policy file, editable or not (the model reads them all). */
  prose: readonly ProseFile[];
  /** Whether this half may change a file (the prose and memory-policy globs; memory-policy alone in a with-memory half). */
  mayEdit: (file: string) => boolean;
}

export interface EditorPlan {
  /** The files to write, with their new text (only those that differ). */
  files: Array<{ path: string; text: string }>;
  /** changes.md's text for this edit, with its `Aims:` line when the proposals name cases. */
  changes: string;
  aims: string[];
  usage: CallUsage[];
  calls: number;
}

/** The editor could not produce edits that apply; the program exits non-zero with this reason. */
export class EditorReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EditorReplyError';
  }
}

/** The name of the structured output the editor asks for. */
export const EDITS = 'edits';

/** The edits' schema: strict for the wire, with the editable files named. */
export function editsSchema(editable: readonly string[]) {
  const file = editable.length > 0 ? z.enum(editable as [string, ...string[]]) : z.string();
  return z.strictObject({
    edits: z.array(z.strictObject({
      file: file.describe('the prose file to change, exactly as listed as editable'),
      patch: z.string().describe('a unified diff against the file as shown: hunks starting with "@@", context lines copied exactly and starting with one space, removed lines with "-", added lines with "+"'),
    })).describe('one entry per file to change; empty when nothing should change'),
    changes: z.string().describe('markdown for changes.md: what changed in which file and why'),
    aims: z.array(z.string()).describe('the case ids this edit is meant to fix, taken from the proposals\' cases'),
  });
}

/** How a reply is read: the same fields, lenient where a model may leave one out. */
const replySchema = z.object({
  edits: z.array(z.object({ file: z.string().min(1, 'must name a file'), patch: z.string().min(1, 'must hold a unified diff') })).default([]),
  changes: z.string().default(''),
  aims: z.union([z.array(z.string()), z.string().transform((s) => s.split(/[\s,]+/).filter(Boolean))]).default([]),
});
type Reply = z.infer<typeof replySchema>;

function system(half: 'nomem' | 'mem'): string {
  return [
    'You are the editor of an LLM agent that is being tuned by editing its prose (its prompts and rules).',
    'You get the findings of a graded run of the agent on a batch of cases, the judge\'s proposals (merged), and the prose files.',
    'Make the smallest edits to the editable prose files that fix what the findings and the proposals show; skip a proposal',
    'that would not help or that contradicts another, and say so in `changes`.',
    half === 'mem'
      ? 'This is the with-memory half: only the memory-policy files may change (they say what the agent saves and reads). The findings\' "Memory review" says what is short: too little saved, or a fact saved twice.'
      : 'Only the files marked editable may change. A run with every case right can still have cost to cut: the findings\' "Cost review" says where.',
    '',
    'Each edit is a unified diff against the file exactly as shown:',
    '- hunks start with a line "@@ -<line>,<count> +<line>,<count> @@" (the numbers may be approximate: the context finds the place);',
    '- unchanged context lines start with one space and are copied exactly (a markdown list line "- rule" kept as context is " - rule");',
    '- removed lines start with "-", added lines with "+"; give one to three lines of context around each change.',
    'Never name a case id and never quote a case input in prose: the prose must generalise beyond the cases.',
    'When nothing should change, answer with no edits.',
    '`changes`: markdown for changes.md: what changed in which file and why. `aims`: the case ids the edit is meant to fix,',
    'from the proposals\' `cases`.',
    `Answer with the structured output \`${EDITS}\` only.`,
  ].join('\n');
}

/** The first request: findings, proposals, prose. */
export function editorRequest(input: EditorInput): ChatRequest {
  const editable = input.prose.filter((f) => input.mayEdit(f.path)).map((f) => f.path);
  const parts = [
    `## The findings of the graded run\n\n${fenced(input.findings.trim() || '(no findings text)', 'markdown')}`,
    `## The judge's proposals, merged\n\n${input.proposals.length ? fenced(JSON.stringify(input.proposals, null, 2), 'json') : '(none: edit from the findings, or make no edit)'}`,
    proseSection(input.prose, '## The prose files', (f) => (input.mayEdit(f.path) ? ' (editable)' : ' (read only in this half)')),
  ];
  return {
    messages: [{ role: 'system', content: system(input.half) }, { role: 'user', content: parts.join('\n\n') }],
    output: { name: EDITS, schema: wireSchema(editsSchema(editable)) },
  };
}

interface Failure {
  file: string;
  reason: string;
}

/** A repository-relative path that stays inside it and out of .git (globs like `**` would take `/etc/x.md`). */
const insideRepository = (file: string) => {
  const parts = file.split('/');
  return file !== '' && !file.startsWith('/') && !/^[A-Za-z]:/.test(file) && !parts.some((p) => p === '' || p === '..' || p === '.' || p === '.git');
};

/** Applies a reply's edits to `texts` (path → current text; changed in place for the edits that apply) and says which failed. */
function applyEdits(reply: Reply, texts: Map<string, string>, input: EditorInput): Failure[] {
  const failures: Failure[] = [];
  for (const edit of reply.edits) {
    const file = normalizeProsePath(edit.file);
    if (!insideRepository(file)) {
      failures.push({ file: edit.file, reason: `${edit.file} is not a path inside the repository (a prose file is named relative to its root, e.g. agents/prompts/billing.md)` });
      continue;
    }
    if (!input.mayEdit(file)) {
      failures.push({
        file: edit.file,
        reason: input.half === 'mem' && input.prose.some((f) => f.path === file)
          ? `${file} may not change in the with-memory half (only memory-policy files: ${input.prose.filter((f) => input.mayEdit(f.path)).map((f) => f.path).join(', ') || 'none'})`
          : `${file} is not a prose file this editor may change (editable: ${input.prose.filter((f) => input.mayEdit(f.path)).map((f) => f.path).join(', ') || 'none'})`,
      });
      continue;
    }
    const applied = applyModelPatch(file, texts.get(file) ?? '', edit.patch);
    if (applied.ok) texts.set(file, applied.text);
    else failures.push({ file, reason: `the patch does not apply: ${applied.reason}` });
  }
  return failures;
}

function retryMessage(failures: readonly Failure[], texts: Map<string, string>, kept: readonly string[]): string {
  const lines = ['Some edits failed:', ''];
  for (const f of failures) lines.push(`- ${f.file}: ${f.reason}`);
  if (kept.length) lines.push('', `The edits of ${kept.join(', ')} applied and are kept: do not repeat them.`);
  const shown = [...new Set(failures.map((f) => normalizeProsePath(f.file)))].filter((f) => texts.has(f));
  for (const file of shown) lines.push('', `The current text of ${file}:`, '', fenced(texts.get(file)!, 'markdown'));
  lines.push('', `Answer again with the \`${EDITS}\` still to make (the failed ones, fixed, or none), and with \`changes\` and \`aims\` for the whole edit.`);
  return lines.join('\n');
}

/**
 * Asks the model for edits and applies them, in memory: the files that
 * change and changes.md's text, or null when the editor has nothing to offer
 * (no edit, or edits that change nothing). Throws EditorReplyError, or the
 * model's ModelError.
 */
export async function editProse(model: Model, input: EditorInput): Promise<EditorPlan | null> {
  if (!input.prose.some((f) => input.mayEdit(f.path))) return null;
  const original = new Map(input.prose.map((f) => [f.path, f.text]));
  const texts = new Map(original);
  const request = editorRequest(input);
  const usage: CallUsage[] = [];
  let messages: ChatMessage[] = request.messages;
  let answer: Reply | null = null;
  for (let call = 1; call <= 2; call++) {
    const reply = await model.chat({ ...request, messages });
    usage.push(reply.usage);
    const said = reply.json !== undefined ? JSON.stringify(reply.json) : reply.text;
    const parsed = replySchema.safeParse(reply.json);
    let failures: Failure[];
    if (!parsed.success) {
      failures = [{ file: '(the reply)', reason: `the ${EDITS} do not match the schema: ${issuesText(parsed.error)}` }];
    } else {
      failures = applyEdits(parsed.data, texts, input);
      // The later answer describes the whole edit; an empty one keeps the earlier text.
      const earlier = answer as Reply | null;
      answer = { edits: [], changes: parsed.data.changes.trim() || earlier?.changes || '', aims: parsed.data.aims.length ? parsed.data.aims : earlier?.aims ?? [] };
    }
    if (failures.length === 0) return plan(input, original, texts, answer!, usage, call);
    if (call === 2) {
      throw new EditorReplyError(`the editor's patches failed twice (asked again once): ${failures.map((f) => `${f.file}: ${f.reason}`).join('; ')}`);
    }
    const kept = [...texts.keys()].filter((f) => texts.get(f) !== original.get(f));
    messages = [...messages, { role: 'assistant', content: said }, { role: 'user', content: retryMessage(failures, texts, kept) }];
  }
  throw new EditorReplyError('unreachable');
}

function plan(input: EditorInput, original: Map<string, string>, texts: Map<string, string>, answer: Reply, usage: CallUsage[], calls: number): EditorPlan | null {
  const files = [...texts].filter(([file, text]) => original.get(file) !== text || !original.has(file)).map(([path, text]) => ({ path, text }));
  if (files.length === 0) return null;
  const aims = aimsOf(answer.aims, input.proposals);
  return { files, changes: changesText(answer.changes, files.map((f) => f.path), aims), aims, usage, calls };
}

/**
 * The case ids the edit aims at: the model's, kept only when a proposal
 * names them (`git tune edit` refuses an Aims line naming a case that is not
 * in the dataset); none of them known, every case the proposals name.
 */
export function aimsOf(said: readonly string[], proposals: readonly EditorProposal[]): string[] {
  const known = [...new Set(proposals.flatMap((p) => p.cases))];
  const kept = [...new Set(said.map((s) => s.trim()))].filter((id) => known.includes(id));
  return kept.length > 0 ? kept : known;
}

/**
 * changes.md's text: the model's markdown, under a heading, with one `Aims:`
 * line of ours (an Aims line of the model's, which might name anything, is
 * left out), or a line naming the files when the model wrote nothing.
 */
export function changesText(body: string, files: readonly string[], aims: readonly string[]): string {
  const lines = body.replace(/\r\n/g, '\n').trim().split('\n').filter((l) => parseAims(l) === null);
  let text = lines.join('\n').trim();
  if (!text) text = `The editor preset changed ${files.join(', ')}.`;
  if (!/^#\s/.test(text)) text = `# Changes\n\n${text}`;
  return `${text}\n${aims.length ? `\nAims: ${aims.join(', ')}\n` : ''}`;
}
