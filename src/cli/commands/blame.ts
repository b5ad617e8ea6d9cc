import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { CaseStory, StoryEdit } from '../../core/case-story.js';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('blame <case>')
      .description("a case's story from the history alone: every run that held it, the edits between, its difficult-list entries; the edit that turned it is marked")
      .addOption(json())
      .addOption(tuningOpt())
      .addHelpText('after', `\nExamples:\n  git tune blame billing-refund-03\n  git tune blame billing-refund-03 --json`),
    run,
  );
}

async function run(io: CommandIO, caseId: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ readCaseStory }, { openTuning }] = await Promise.all([import('../../app/blame.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const story = await readCaseStory(tuning, caseId);
  if (opts.json) printJson(io, { tuning: tuning.name, ...story });
  else io.out(renderStory(story));
}

const answerText = (answer: unknown): string => {
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
};

const editLine = (e: StoryEdit, blamed: boolean): string =>
  `  ${blamed ? '>' : ' '} edit ${e.oid.slice(0, 7)}${e.hand ? ' (by hand)' : ''} after ${e.after}${e.aimsHere ? ', aimed at this case' : ''}: ${e.fate}`;

/** Oldest first, newest last: a turn is marked on its run, and the edits before it with `>`. */
export function renderStory(story: CaseStory): string {
  const lines = [`${story.case}: ${story.runs.length} run${story.runs.length === 1 ? '' : 's'} held it, oldest first`];
  if (story.runs.length === 0) lines.push('  no run has held it yet');
  for (const r of story.runs) {
    for (const e of r.editsBefore) lines.push(editLine(e, r.turned !== undefined));
    const cost = [r.tokens !== undefined ? `${r.tokens} tokens` : null, r.llmCalls !== undefined ? `${r.llmCalls} llm call${r.llmCalls === 1 ? '' : 's'}` : null].filter(Boolean).join(', ');
    const turn = r.turned ? `   <- turned ${r.turned}${r.editsBefore.length ? ' after the edits above' : ''}` : '';
    lines.push(`${r.run}  ${r.outcome}${cost ? `  (${cost})` : ''}${turn}`);
    if (r.answer !== undefined) lines.push(`    answer: ${answerText(r.answer)}`);
    if (r.answers) lines.push(`    re-run in this run: ${r.answers.join(', ')} (the majority decides)`);
  }
  if (story.editsSince.length) {
    lines.push('since its last run (not tried on it yet):');
    for (const e of story.editsSince) lines.push(editLine(e, false));
  }
  for (const d of story.difficult) lines.push(`difficult list: added in batch ${d.batch} (${d.reason})${d.fixed ? ', fixed since' : ''}`);
  if (story.noise) lines.push(noiseText(story.noise));
  return lines.join('\n');
}

/** The case's right-rate and token spread over every recorded answer (docs/method.md#noise). */
function noiseText(n: NonNullable<CaseStory['noise']>): string {
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const rate = n.rate === null ? 'no answer graded' : `${n.right}/${n.n} answers right (${Math.round(n.rate * 100)}%)`;
  const tokens = n.tokens ? `; tokens median ${fmt(n.tokens.median)}${n.tokens.n > 1 ? `, ${fmt(n.tokens.min)}–${fmt(n.tokens.max)}` : ''}` : '';
  return `noise: ${rate} over ${n.runs} run${n.runs === 1 ? '' : 's'}${tokens}${n.slips ? '; its answers disagreed on the same prose and memory (it slips)' : ''}`;
}
