import type { DifficultReason } from '../contracts/files.js';
import { editFate } from './edits.js';
import type { CaseNoise } from './noise.js';
import { isVoidRun, type EditStatus, type RunState, type TuningState } from './fold.js';

/**
 * A case's story in the tuning, from the history alone (no re-run): every
 * run that held it, oldest first, with its outcome and cost, the edits made
 * between one of those runs and the next with where they stand, and the
 * difficult-list entries for it. `git tune blame` prints it; the judge reads
 * it as TUNE_HISTORY (docs/contracts.md#judge). Pure.
 */
export type CaseOutcome = 'right' | 'wrong' | 'void' | 'not graded';

/** What a run's results.json recorded for the case (read per run by the app layer). */
export interface CaseFacts {
  answer?: unknown;
  status: 'ok' | 'error' | 'void';
  tokens: number;
  llmCalls: number;
  /** Each answer's verdict when the case was re-run in that run (docs/method.md#noise), first answer first. */
  answers?: string[];
}

export interface StoryEdit {
  oid: string;
  /** The graded run it responds to. */
  after: string;
  status: EditStatus;
  fate: string;
  /** It aims at this case (its changes.md names it, or the case was wrong in the run it responds to). */
  aimsHere: boolean;
  hand: boolean;
}

export interface StoryRun {
  run: string;
  outcome: CaseOutcome;
  answer?: unknown;
  tokens?: number;
  llmCalls?: number;
  /** Edits made after the previous run that held the case (or the start) and before this run started. */
  editsBefore: StoryEdit[];
  /** Set on a run whose outcome flipped from the previous graded, not void one: the edits before it are the ones to blame. */
  turned?: 'right' | 'wrong';
  /** Its answers in that run, first answer first, when it was re-run there (docs/method.md#noise). */
  answers?: string[];
}

export interface CaseStory {
  case: string;
  runs: StoryRun[];
  /** Edits made after the last run that held it: no run has shown what they did to it. */
  editsSince: StoryEdit[];
  difficult: Array<{ reason: DifficultReason; batch: number; fixed: boolean }>;
  /** Its right-rate and token spread over every recorded answer, repeats included (docs/method.md#noise); set by the app when read. */
  noise?: CaseNoise;
}

/** Runs in the order they started: batch runs, then the final check's. */
function runsInOrder(state: TuningState): RunState[] {
  return [...state.runs.values()].sort((a, b) => a.startIndex - b.startIndex);
}

function outcomeOf(run: RunState, caseId: string, facts: CaseFacts | undefined): CaseOutcome {
  if (isVoidRun(run) || facts?.status === 'void') return 'void';
  if (!run.grade) return 'not graded';
  return run.grade.wrong.includes(caseId) ? 'wrong' : 'right';
}

/** `facts`: run name → case facts of that run, for runs whose results were read (an answer left out when absent). */
export function buildCaseStory(state: TuningState, caseId: string, facts: ReadonlyMap<string, CaseFacts> = new Map()): CaseStory {
  const storyEdit = (e: TuningState['edits'][number]): StoryEdit => ({
    oid: e.oid, after: e.run, status: e.status, fate: editFate(e), aimsHere: e.aims.includes(caseId), hand: e.hand,
  });
  const editsIn = (from: number, to: number) => state.edits.filter((e) => e.index > from && e.index < to).map(storyEdit);
  const runs: StoryRun[] = [];
  let from = -1;
  let lastGraded: CaseOutcome | null = null;
  for (const run of runsInOrder(state)) {
    if (!run.cases.includes(caseId)) continue;
    const f = facts.get(run.name);
    const outcome = outcomeOf(run, caseId, f);
    const entry: StoryRun = { run: run.name, outcome, editsBefore: runs.length ? editsIn(from, run.startIndex) : [] };
    if (f) {
      if (f.answer !== undefined) entry.answer = f.answer;
      entry.tokens = f.tokens;
      entry.llmCalls = f.llmCalls;
      if (f.answers) entry.answers = [...f.answers];
    }
    if (outcome === 'right' || outcome === 'wrong') {
      if (lastGraded !== null && lastGraded !== outcome) entry.turned = outcome;
      lastGraded = outcome;
    }
    runs.push(entry);
    from = run.startIndex;
  }
  return {
    case: caseId,
    runs,
    editsSince: runs.length ? editsIn(from, Infinity) : [],
    difficult: state.difficult.filter((d) => d.id === caseId).map((d) => ({ reason: d.reason, batch: d.batch, fixed: d.fixed })),
  };
}

/** The ids a story can be told of: the cases of every run and of the difficult list, and `also` (the selection). */
export function storyCaseIds(state: TuningState, also: readonly string[] = []): Set<string> {
  const ids = new Set(also);
  for (const run of state.runs.values()) for (const id of run.cases) ids.add(id);
  for (const d of state.difficult) ids.add(d.id);
  return ids;
}

/**
 * The story as a judge of `run` sees it (TUNE_HISTORY): the runs before it,
 * and the edits made since the last of them (the prose it is judging ran with
 * them). A story that never held `run` is the whole story.
 */
export function storyBefore(story: CaseStory, run: string): CaseStory {
  const at = story.runs.findIndex((r) => r.run === run);
  if (at < 0) return story;
  return { ...story, runs: story.runs.slice(0, at), editsSince: story.runs[at]!.editsBefore };
}
