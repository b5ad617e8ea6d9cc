import { buildCaseStory, storyBefore, storyCaseIds, type CaseFacts, type CaseStory } from '../core/case-story.js';
import { usageError } from '../errors.js';
import { closest } from './config-file.js';
import { readRunJudge, readRunResults } from './results.js';
import { caseOutcome } from '../core/noise.js';
import { historyObservations, noiseOf } from './noise.js';
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
    const some = [...known].sort().slice(0, 10);
    const listed = names.length ? `: did you mean ${names.join(', ')}?` : some.length ? ` (its cases: ${some.join(', ')}${known.size > some.length ? ', …' : ''})` : '';
    throw usageError('no-such-case', `tuning ${tuning.name} has no case ${caseId}${listed}`, `git tune blame ${names[0] ?? some[0] ?? '<case>'}`);
  }
  const story = buildCaseStory(tuning.state, caseId, await caseFacts(tuning, caseId));
  // Repeats from the history (docs/method.md#noise): every recorded answer of the case, repeats included.
  const noise = noiseOf((await historyObservations(tuning)).observations).get(caseId);
  return noise ? { ...story, noise } : story;
}

/** What each finished run that held the case recorded for it. */
export async function caseFacts(tuning: Tuning, caseId: string): Promise<Map<string, CaseFacts>> {
  const runs = [...tuning.state.runs.values()].filter((r) => r.cases.includes(caseId)).map((r) => r.name);
  return factsOfCase(await runFacts(tuning, runs), caseId);
}

/** Each finished run's recorded facts per case, read once per run (results.json at its run commit). */
async function runFacts(tuning: Tuning, runs: readonly string[]): Promise<Map<string, Map<string, CaseFacts>>> {
  const out = new Map<string, Map<string, CaseFacts>>();
  for (const name of runs) {
    const run = tuning.state.runs.get(name);
    if (!run?.finished || !run.runOid) continue;
    const facts = new Map<string, CaseFacts>();
    const results = (await readRunResults(tuning, name)).results;
    const judge = results.some((r) => r.repeats?.length) ? await readRunJudge(tuning, name) : {};
    for (const r of results) {
      facts.set(r.id, {
        ...(r.answer !== undefined ? { answer: r.answer } : {}), status: r.status, tokens: r.tokens, llmCalls: r.llmCalls,
        ...(r.repeats?.length ? { answers: caseOutcome(r, judge).answers } : {}),
      });
    }
    out.set(name, facts);
  }
  return out;
}

function factsOfCase(all: ReadonlyMap<string, ReadonlyMap<string, CaseFacts>>, caseId: string): Map<string, CaseFacts> {
  const facts = new Map<string, CaseFacts>();
  for (const [run, cases] of all) {
    const f = cases.get(caseId);
    if (f) facts.set(run, f);
  }
  return facts;
}

/**
 * What the judge of `run` gets as TUNE_HISTORY per case (docs/contracts.md#judge):
 * the case's story before that run. Every earlier run's results are read
 * once, here, so the judge of each case reads nothing.
 */
export async function judgeHistory(tuning: Tuning, run: string): Promise<(caseId: string) => CaseStory> {
  const all = await runFacts(tuning, [...tuning.state.runs.keys()].filter((name) => name !== run));
  return (caseId) => storyBefore(buildCaseStory(tuning.state, caseId, factsOfCase(all, caseId)), run);
}
