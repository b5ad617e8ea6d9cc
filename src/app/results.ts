import * as z from 'zod';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import { caseResultSchema, memoryWriteSchema, runMetaSchema, type CaseResult, type MemoryWrite, type RunMeta } from '../contracts/result.js';
import { batchCases, batchNumbered } from '../core/fold.js';
import { parseRunName, tagRef } from '../core/names.js';
import { RUN_FILES, runFilePath } from '../core/paths.js';
import { usageError } from '../errors.js';
import { RunStore } from '../run/store.js';
import { readText, type Tuning } from './tuning.js';

/** A run's recorded results: from its run commit, or, while it runs, from the local store. */
export interface RunResults {
  run: string;
  finished: boolean;
  meta: RunMeta | null;
  results: CaseResult[];
  writes: Record<string, MemoryWrite[]>;
  cases: string[];
}

export function requireRun(tuning: Tuning, run: string) {
  const state = tuning.state.runs.get(run);
  if (!parseRunName(run) || !state) {
    const known = [...tuning.state.runs.keys()];
    throw usageError('no-such-run', `tuning ${tuning.name} has no run ${run}`, known.length ? `git tune show ${known[known.length - 1]}   # runs: ${known.join(', ')}` : 'git tune run');
  }
  return state;
}

export async function readRunResults(tuning: Tuning, run: string): Promise<RunResults> {
  const state = requireRun(tuning, run);
  if (state.finished && state.runOid) {
    const commit = (await tuning.repo.resolveRef(tagRef(tuning.name, run))) ?? state.runOid;
    const results = z.array(caseResultSchema).parse(JSON.parse((await readText(tuning.repo, commit, runFilePath(tuning.dir, run, RUN_FILES.results))) ?? '[]'));
    const metaText = await readText(tuning.repo, commit, runFilePath(tuning.dir, run, RUN_FILES.meta));
    const writesText = await readText(tuning.repo, commit, runFilePath(tuning.dir, run, RUN_FILES.memoryWrites));
    return {
      run, finished: true, results, cases: results.map((r) => r.id),
      meta: metaText ? runMetaSchema.parse(JSON.parse(metaText)) : null,
      writes: writesText ? z.record(z.string(), z.array(memoryWriteSchema)).parse(JSON.parse(writesText)) : {},
    };
  }
  const id = parseRunName(run)!;
  const cases = id.kind === 'final' ? (tuning.selection?.ids ?? []) : batchCases(batchNumbered(tuning.state, id.batch)!.plan);
  const stored = await new RunStore(tuning.repo.gitdir, tuning.name, run).load(cases);
  const writes: Record<string, MemoryWrite[]> = {};
  for (const [cid, s] of stored) if (s.writes.length) writes[cid] = s.writes;
  return { run, finished: false, meta: null, results: cases.map((c) => stored.get(c)?.result).filter((r): r is CaseResult => !!r), writes, cases };
}

/** The run's judge.json as the branch holds it (written by its grade), or {} (no judge, or not graded yet). */
export async function readRunJudge(tuning: Tuning, run: string): Promise<JudgeFile> {
  const text = tuning.tip ? await readText(tuning.repo, tuning.tip, runFilePath(tuning.dir, run, RUN_FILES.judge)) : null;
  if (!text) return {};
  const parsed = judgeFileSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : {};
}
