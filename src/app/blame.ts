import { buildCaseStory, storyCaseIds, type CaseFacts, type CaseStory } from '../core/case-story.js';
import { usageError } from '../errors.js';
import { closest } from './config-file.js';
import { readRunResults } from './results.js';
import type { Tuning } from './tuning.js';

/**
 * A case's story (core/case-story.ts), with what each finished run recorded
 * for it (answer, tokens, llm calls) read from that run's results.json: the
 * history alone, no re-run. A case no run, difficult list or selection knows
 * is refused, naming the closest ids.
 */
export async function readCaseStory(tuning: Tuning, caseId: string): Promise<CaseStory> {
  const known = storyCaseIds(tuning.state, tuning.selection?.ids ?? []);
  if (!known.has(caseId)) {
    const guess = closest(caseId, [...known]);
    const near = [...known].filter((id) => id.includes(caseId) || caseId.includes(id)).slice(0, 5);
    const names = [...new Set([...(guess ? [guess] : []), ...near])];
    throw usageError('no-such-case', `tuning ${tuning.name} has no case ${caseId}${names.length ? `: did you mean ${names.join(', ')}?` : ''}`,
      `git tune blame ${names[0] ?? '<case>'}`);
  }
  return buildCaseStory(tuning.state, caseId, await caseFacts(tuning, caseId));
}

/** What each finished run that held the case recorded for it. */
export async function caseFacts(tuning: Tuning, caseId: string): Promise<Map<string, CaseFacts>> {
  const facts = new Map<string, CaseFacts>();
  for (const run of tuning.state.runs.values()) {
    if (!run.finished || !run.runOid || !run.cases.includes(caseId)) continue;
    const result = (await readRunResults(tuning, run.name)).results.find((r) => r.id === caseId);
    if (result) facts.set(run.name, { ...(result.answer !== undefined ? { answer: result.answer } : {}), status: result.status, tokens: result.tokens, llmCalls: result.llmCalls });
  }
  return facts;
}
