import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch, diffLines } from 'diff';
import { selectionSchema, type Selection } from '../contracts/files.js';
import type { Config } from '../contracts/config.js';
import { viewDifficult } from '../core/difficult.js';
import { editFate } from '../core/edits.js';
import { batchIndex, countedRuns, foldHistory, isVoidRun, type BatchState, type EditKeep, type EditStatus, type HistoryCommit, type TuningState } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { parseRunName, type Half } from '../core/names.js';
import { CONFIG_FILE, configPath, memoryPath, readmePath, RUN_FILES, runFilePath, runsPrefix, selectionPath, tuningDir, usagePath } from '../core/paths.js';
import { decideNext } from '../core/next.js';
import { describeStep, extractHandSection, HAND_END, HAND_PLACEHOLDER, HAND_START, isHandPlaceholder, renderReadme } from '../core/readme.js';
import type { ReviewCase, ReviewDifficultChange, ReviewEdit, ReviewFileDiff, ReviewInput, ReviewRun } from '../core/review.js';
import { formatStep, parseStep, type StepKind } from '../core/steps.js';
import { parseMessage } from '../core/trailers.js';
import { answerTokens } from '../core/tuning-state.js';
import { renderUsage, representativeRuns, summarizeResults, type RunSummary } from '../core/usage.js';
import { usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import type { FileChange, GitRepo } from '../git/types.js';
import type { CommitTarget, StepCommit } from './commit.js';
import { parseConfig } from './config-file.js';
import { nextInputOf } from './decide.js';
import { githubRepoOf, webUrlOf } from './github.js';
import { readRunResults } from './results.js';
import { readHistory, type Tuning } from './tuning.js';

/**
 * The generated files of a tuning, README.md and USAGE.md (docs/reports.md),
 * written into the commit of every step so they are never behind. Read here,
 * rendered by the pure src/core/readme.ts and src/core/usage.ts.
 *
 * Decisions:
 * - The README is a function of the history (folded with the step being
 *   written), the tip files the fold reads, the results of each half's last
 *   finished run (read from its results.json: two small files per batch), and
 *   the hand-written part: no clock, no id of the commit it goes into.
 * - The hand-written part comes from the working tree when it was edited
 *   there (the step commits it: no separate commit is needed), else from the
 *   parent commit. An edited README whose markers are gone is refused
 *   (`readme-markers`) rather than overwritten.
 * - USAGE.md changes only when a run does: it is rewritten by the commits of
 *   `run` and `run-stop` steps (reading every finished run's results.json
 *   then), or when it is missing. Every other step leaves it as it is.
 * - Nothing is cached: only files that exist at the parent (or are written
 *   by the step) are read, and a file that does not parse leaves its numbers
 *   out instead of failing the step.
 */

export interface ChainCommit {
  step: StepKind;
  message: string;
  changes: ReadonlyMap<string, FileChange>;
}

export interface ReportBase {
  repo: GitRepo;
  tuning: string;
  /** The commit the chain builds on (null: none). */
  parent: string | null;
  /** The tuning's commits up to `parent`, oldest first (empty for a chain that starts with init). */
  history: () => readonly HistoryCommit[] | Promise<readonly HistoryCommit[]>;
  /** Whether the working tree is the tuning branch's (then an edited hand-written part is picked up). */
  onBranch: boolean;
  /** `always`: USAGE.md in the last commit whatever its step (import). */
  usage: 'when-due' | 'always';
}

const placeholderOid = (i: number) => `${'f'.repeat(32)}${String(i).padStart(8, '0')}`;
const PLACEHOLDER_SHORT = 'f'.repeat(7);

const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('utf8'));

/** The extra file changes (README.md, USAGE.md) of each commit of a chain. */
export async function reportChanges(base: ReportBase, chain: readonly ChainCommit[]): Promise<Array<Map<string, FileChange>>> {
  const { repo, tuning, parent } = base;
  const dir = tuningDir(tuning);
  const atParent = new Map<string, Promise<string | null>>();
  const readParent = (file: string) => {
    if (!atParent.has(file)) atParent.set(file, parent ? repo.readBlobAt(parent, file).then(text) : Promise.resolve(null));
    return atParent.get(file)!;
  };
  /** A file as commit i of the chain has it. */
  const readAt = async (file: string, i: number): Promise<string | null> => {
    for (let j = i; j >= 0; j--) {
      const change = chain[j]!.changes.get(file);
      if (change === undefined) continue;
      if (change === null) return null;
      return typeof change.content === 'string' ? change.content : Buffer.from(change.content).toString('utf8');
    }
    return readParent(file);
  };

  const hand = await handSection(base, dir, readParent);
  const history = [...(await base.history())];
  const summaries = new Map<string, RunSummary | null>();
  const summaryOf = async (run: string, i: number) => {
    if (!summaries.has(run)) {
      const raw = await readAt(runFilePath(dir, run, RUN_FILES.results), i);
      let parsed: RunSummary | null = null;
      try {
        parsed = raw === null ? null : summarizeResults(run, JSON.parse(raw));
      } catch {
        parsed = null;
      }
      summaries.set(run, parsed);
    }
    return summaries.get(run)!;
  };
  const usageMissing = (await readParent(usagePath(dir))) === null;

  const out: Array<Map<string, FileChange>> = [];
  const commits: HistoryCommit[] = [...history];
  for (const [i, c] of chain.entries()) {
    commits.push({ oid: placeholderOid(i), message: c.message });
    const config = parseConfigText(await readAt(configPath(dir), i), configPath(dir));
    const selection = parseSelection(await readAt(selectionPath(dir), i));
    const state = foldHistory(tuning, commits, selection?.ids ?? []);
    const decided = decideNext({ ...nextInputOf({ state, config, selection, dir }), readmePlaceholder: isHandPlaceholder(hand) });
    // The commit being written has no id yet: where next names it (a pending edit to confirm), say so.
    const unborn = (t: string) => t.replaceAll(PLACEHOLDER_SHORT, 'this commit');
    const next = { ...decided, message: unborn(decided.message), notes: decided.notes.map(unborn), command: decided.command && unborn(decided.command) };
    const wanted = new Map<string, RunSummary>();
    for (const run of representativeRuns(state)) {
      const s = await summaryOf(run, i);
      if (s) wanted.set(run, s);
    }
    const changes = new Map<string, FileChange>();
    changes.set(readmePath(dir), {
      content: renderReadme({ state, commits, config, selection: selection?.ids ?? [], next, summaries: wanted, hand }),
    });
    const last = i === chain.length - 1;
    if (c.step === 'run' || c.step === 'run-stop' || (usageMissing && i === 0) || (base.usage === 'always' && last)) {
      changes.set(usagePath(dir), { content: renderUsage({ state, summaries: await allSummaries(state, (run) => summaryOf(run, i)) }) });
    }
    out.push(changes);
  }
  return out;
}

async function allSummaries(state: TuningState, read: (run: string) => Promise<RunSummary | null>): Promise<Map<string, RunSummary>> {
  const out = new Map<string, RunSummary>();
  for (const run of state.runs.values()) {
    if (!run.finished) continue;
    const s = await read(run.name);
    if (s) out.set(run.name, s);
  }
  return out;
}

function parseConfigText(raw: string | null, file: string): Config | null {
  if (raw === null) return null;
  try {
    return parseConfig(raw, file).config;
  } catch {
    return null;
  }
}

function parseSelection(raw: string | null): Selection | null {
  if (raw === null) return null;
  try {
    return selectionSchema.parse(JSON.parse(raw));
  } catch {
    return null;
  }
}

/** The hand-written part: as edited in the working tree, else as committed, else the placeholder. */
async function handSection(base: ReportBase, dir: string, readParent: (file: string) => Promise<string | null>): Promise<string> {
  const file = readmePath(dir);
  const committed = await readParent(file);
  if (base.onBranch) {
    const disk = await fs.readFile(path.join(base.repo.dir, file), 'utf8').catch(() => null);
    if (disk !== null && disk !== committed) {
      const hand = extractHandSection(disk);
      if (hand === null) {
        throw usageError(
          'readme-markers',
          `${file} was edited, and its hand-written part can no longer be found: the lines ${HAND_START} and ${HAND_END} must stay, in that order`,
          `put the two marker lines back around your text in ${file} (or: git checkout -- ${file}), then run the command again`,
        );
      }
      return hand;
    }
  }
  return (committed !== null ? extractHandSection(committed) : null) ?? HAND_PLACEHOLDER;
}

/** `commitSteps`' hook: the chain with README.md (and USAGE.md when due) added to each commit. */
export async function withReports(target: CommitTarget, commits: readonly StepCommit[]): Promise<StepCommit[]> {
  if (commits.length === 0) return [...commits];
  const first = commits[0]!;
  const history = async (): Promise<readonly HistoryCommit[]> => {
    if (first.step.step === 'init' || target.parent === null) return [];
    if (target.history) return target.history();
    const config = parseConfigText(text(await target.repo.readBlobAt(target.parent, configPath(tuningDir(target.tuning)))), CONFIG_FILE);
    return readHistory(target.repo, target.tuning, target.parent, matcher(config?.prose ?? []));
  };
  const extra = await reportChanges(
    { repo: target.repo, tuning: target.tuning, parent: target.parent, history, onBranch: target.onBranch, usage: 'when-due' },
    commits.map((c) => ({ step: c.step.step, message: formatStep(c.step, c.subject, c.body ?? ''), changes: c.changes })),
  );
  return commits.map((c, i) => {
    const added = extra[i]!;
    return {
      ...c,
      changes: new Map([...c.changes, ...added]),
      // Generated files: what is on disk is either what the parent holds or a hand-written part we just took in.
      fromWorktree: new Set([...(c.fromWorktree ?? []), ...added.keys()]),
    };
  });
}

// ---------------------------------------------------------------------------
// git tune review <batch>

/** `3`, `03`, `batch03` → 3. */
export function parseBatchArg(arg: string): number | null {
  const m = /^(?:batch)?0*(\d+)$/i.exec(arg.trim());
  return m && Number(m[1]) > 0 ? Number(m[1]) : null;
}

export interface BatchRange {
  batch: BatchState;
  /** Index (in the tuning's commits) of the batch's plan commit and of its last commit. */
  first: number;
  last: number;
  base: string;
  head: string;
}

export function batchRange(tuning: Tuning, batchArg: string): BatchRange {
  const n = parseBatchArg(batchArg);
  const { state } = tuning;
  const k = n === null ? -1 : batchIndex(state, n);
  if (k < 0) {
    const known = state.batches.map((b) => b.plan.batch);
    throw usageError('no-such-batch', `tuning ${tuning.name} has no batch ${batchArg}`, known.length ? `git tune review ${known[known.length - 1]}   # batches: ${known.join(', ')}` : 'git tune batch');
  }
  const batch = state.batches[k]!;
  const commits = tuning.commits;
  const following = state.batches[k + 1]?.index ?? state.final[0]?.startIndex ?? commits.length;
  const first = batch.index;
  const last = Math.max(first, following - 1);
  return { batch, first, last, base: commits[first - 1]?.oid ?? commits[first]!.oid, head: commits[last]!.oid };
}

async function remoteUrl(repo: GitRepo, remote: string): Promise<string | null> {
  return repo.readConfig(`remote.${remote}.url`).catch(() => null);
}

/** The web address of a commit when the remote is on GitHub, else null. */
export async function commitUrlMaker(repo: GitRepo, remote: string, env: Env): Promise<(oid: string) => string | null> {
  const gh = githubRepoOf(await remoteUrl(repo, remote), env);
  const web = gh ? webUrlOf(gh, env) : null;
  return (oid) => (web ? `${web}/commit/${oid}` : null);
}

function isBinary(text: string): boolean {
  return text.includes('\u0000');
}

async function editDiffs(tuning: Tuning, oid: string): Promise<{ files: ReviewFileDiff[]; why: string[] }> {
  const { repo } = tuning;
  const config = tuning.config;
  const isProse = matcher([...(config?.prose ?? []), ...(config?.memoryPolicy ?? [])]);
  const parent = (await repo.readCommit(oid)).parents[0] ?? null;
  const read = async (commit: string | null, file: string) => (commit ? text(await repo.readBlobAt(commit, file)) : null);
  const files: ReviewFileDiff[] = [];
  let why: string[] = [];
  for (const file of await repo.changedPaths(oid)) {
    const before = await read(parent, file);
    const after = await read(oid, file);
    if (file.startsWith(runsPrefix(tuning.dir)) && file.endsWith(`/${RUN_FILES.changes}`)) {
      why = diffLines(before ?? '', after ?? '').filter((p) => p.added).flatMap((p) => p.value.split('\n')).map((l) => l.trimEnd()).filter((l) => l.trim()).slice(0, 12);
      continue;
    }
    if (!isProse(file)) continue;
    if (isBinary(before ?? '') || isBinary(after ?? '')) {
      files.push({ path: file, patch: `Binary file ${file} changed` });
      continue;
    }
    const patch = createTwoFilesPatch(before === null ? '/dev/null' : `a/${file}`, after === null ? '/dev/null' : `b/${file}`, before ?? '', after ?? '', undefined, undefined, { context: 3 });
    files.push({ path: file, patch: patch.replace(/^=+\n/, '') });
  }
  return { files, why };
}

export async function buildReview(tuning: Tuning, batchArg: string, opts: { env: Env; remote?: string }): Promise<ReviewInput> {
  const range = batchRange(tuning, batchArg);
  const { batch } = range;
  const { state, repo } = tuning;
  const commits = tuning.commits;
  const url = await commitUrlMaker(repo, opts.remote ?? 'origin', opts.env);
  const dataset = new Map((await tuning.loadDataset()).map((c) => [c.id, c]));
  const view = viewDifficult(state, tuning.config?.maxRetries ?? 3);
  const difficultNow = new Map(view.map((e) => [e.id, `${e.reason}, ${e.status}`]));
  const cases: ReviewCase[] = [
    ...batch.plan.new.map((id) => ({ id, as: batch.plan.kind })),
    ...batch.plan.recheck.map((id) => ({ id, as: 'recheck' as const })),
  ].map((c) => ({ ...c, class: dataset.get(c.id)?.class ?? null, difficult: difficultNow.get(c.id) ?? null }));

  const webOf = (file: string) => {
    const commitLink = url(range.head);
    return commitLink ? `${commitLink.replace(/\/commit\/[0-9a-f]+$/, '')}/blob/${range.head}/${file}` : null;
  };
  const runs: ReviewRun[] = [];
  const previous = new Map<Half, number>();
  for (const r of batch.runs) {
    let summary: RunSummary | null = null;
    if (r.finished) {
      const results = await readRunResults(tuning, r.name).catch(() => null);
      summary = results ? summarizeResults(r.name, results.results) : null;
    }
    const half = r.half!;
    const counts = r.finished && !isVoidRun(r);
    const before = previous.get(half);
    runs.push({
      run: r.name, half, number: r.number, finished: r.finished,
      verdict: r.grade?.verdict ?? null, void: r.void, cases: r.cases.length,
      wrong: r.grade ? r.grade.wrong : null,
      rightByChecks: summary ? summary.rightByChecks : null,
      tokens: r.tokens, answerTokens: answerTokens(r), costUsd: r.costUsd,
      llmCalls: summary?.llmCalls ?? null, memoryWrites: summary?.memoryWrites ?? null, savedTwice: summary?.savedTwice ?? null,
      deltaTokens: counts && before !== undefined ? answerTokens(r) - before : null,
      findings: r.grade ? webOf(runFilePath(tuning.dir, r.name, RUN_FILES.findings)) ?? null : null,
    });
    if (counts) previous.set(half, answerTokens(r));
  }

  const edits: ReviewEdit[] = [];
  for (const e of state.edits.filter((x) => x.batch === batch.plan.batch)) {
    const tried = batch.runs.find((r) => r.half === e.half && r.startIndex > e.index && r.grade !== null && !isVoidRun(r));
    const revertedAt = e.status === 'reverted' ? commits.findIndex((c) => c.oid === e.settledBy) : -1;
    const triedBy = e.triedBy ?? (tried && (revertedAt < 0 || tried.grade!.index < revertedAt) ? tried.name : null);
    const { files, why } = await editDiffs(tuning, e.oid);
    edits.push({
      commit: e.oid, run: e.run, half: e.half, hand: e.hand, aims: e.aims, status: e.status,
      triedBy, revertedBy: e.status === 'reverted' ? e.settledBy : null, kept: e.kept, why, files, url: url(e.oid),
    });
  }

  const difficult: ReviewDifficultChange[] = [];
  let candidate: { run: string; files: number } | null = null;
  for (let i = range.first; i <= range.last; i++) {
    const commit = commits[i]!;
    const step = parseStep(commit.message);
    if (!step || step.tuning !== tuning.name) continue;
    const at = step.step === 'grade' ? `the grade of ${step.run}` : step.step === 'difficult' ? `a \`git tune difficult\` step (${short(commit.oid)})` : `the ${step.step} step ${short(commit.oid)}`;
    for (const d of step.difficult) difficult.push({ op: d.op, id: d.id, reason: d.op === 'add' ? d.reason : null, at });
    if (step.step === 'candidate') {
      const changed = (await repo.changedPaths(commit.oid)).filter((p) => p.startsWith(`${memoryPath(tuning.dir, 'candidate')}/`));
      candidate = { run: step.run, files: changed.length };
    }
  }

  const nomem = batch.runs.filter((r) => r.half === 'nomem');
  const mem = batch.runs.filter((r) => r.half === 'mem');
  const passed = (rs: typeof nomem) => rs.some((r) => r.grade?.verdict === 'PASSED');
  const status = [
    nomem.length === 0 ? 'not run yet' : `${passed(nomem) ? 'PASSED' : 'working'} without memory in ${countedRuns(nomem)} run${countedRuns(nomem) === 1 ? '' : 's'}`,
    mem.length === 0 ? '' : `${passed(mem) ? 'PASSED' : 'working'} with memory in ${countedRuns(mem)} run${countedRuns(mem) === 1 ? '' : 's'}`,
    state.checkpoints.includes(batch.plan.batch) ? 'checkpointed' : '',
  ].filter(Boolean).join(', ');

  return {
    tuning: tuning.name, batch: batch.plan.batch, size: batch.plan.size, kind: batch.plan.kind,
    why: parseMessage(commits[batch.index]?.message ?? '').body.split('\n')[0]?.trim() ?? '',
    status, cases, runs, edits,
    memory: { candidate, checkpoint: state.checkpoints.includes(batch.plan.batch) },
    difficult,
    head: { commit: range.head, url: url(range.head) },
    base: { commit: range.base },
    ...(state.heldOut ? { heldOut: { cases: state.heldOut.cases, baseline: state.baseline?.heldOutRev === state.heldOut.rev ? state.baseline.heldOut : null } } : {}),
  };
}

const short = (oid: string) => oid.slice(0, 7);

// ---------------------------------------------------------------------------
// git tune log

export interface LogEntry {
  index: number;
  commit: string;
  step: StepKind | 'hand';
  subject: string;
  run: string | null;
  batch: number | null;
  what: string;
  edit: {
    status: EditStatus; run: string; aims: string[]; settledBy: string | null; hand: boolean;
    triedBy: string | null; revertedBy: string | null; kept: EditKeep | null; fate: string;
  } | null;
  difficult: string[];
}

/** Every commit of the tuning, newest first, with what it did and, for edits, where they stand. */
export function logEntries(tuning: Tuning): LogEntry[] {
  const { state } = tuning;
  const edits = new Map(state.edits.map((e) => [e.index, e]));
  const out: LogEntry[] = [];
  tuning.commits.forEach((commit, index) => {
    const step = parseStep(commit.message);
    const subject = parseMessage(commit.message).subject;
    const edit = edits.get(index) ?? null;
    const mine = step !== null && step.tuning === tuning.name ? step : null;
    const run = mine && 'run' in mine ? mine.run : edit?.run ?? null;
    const batch = mine?.step === 'plan' || mine?.step === 'checkpoint' ? mine.batch : run ? (parseRunName(run)?.kind === 'batch' ? (parseRunName(run) as { batch: number }).batch : null) : null;
    out.push({
      index: index + 1, commit: commit.oid, step: mine?.step ?? 'hand', subject, run, batch,
      what: mine ? describeStep(mine, subject, edit ?? undefined, (text) => text).text : edit ? `hand edit after ${edit.run}: ${editFate(edit)}` : 'hand commit',
      edit: edit ? {
        status: edit.status, run: edit.run, aims: edit.aims, settledBy: edit.settledBy, hand: edit.hand,
        triedBy: edit.triedBy, revertedBy: edit.status === 'reverted' ? edit.settledBy : null, kept: edit.kept, fate: editFate(edit),
      } : null,
      difficult: (mine?.difficult ?? []).map((d) => (d.op === 'add' ? `add ${d.id} ${d.reason}` : `fix ${d.id}`)),
    });
  });
  return out.reverse();
}
