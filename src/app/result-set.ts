import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { judgeFileSchema, type JudgeFile } from '../contracts/judge.js';
import { caseResultSchema, memoryWriteSchema, type CaseResult, type MemoryWrite } from '../contracts/result.js';
import { resultSetManifestSchema, type ResultSetManifest } from '../contracts/shard.js';
import { branchName } from '../core/names.js';
import { repeatKey } from '../core/noise.js';
import { formatShard, groupByTarget, mergeInSelectionOrder, shardFolder, shardSetProblems, WHOLE, type Shard } from '../core/shard.js';
import { localPath } from '../core/paths.js';
import { historyError, usageError } from '../errors.js';
import { diskFullPoint } from '../faults/enospc.js';
import { finalCases } from './held-out.js';
import type { Tuning } from './tuning.js';

/**
 * A result set (docs/ci.md): what a run of the final check's selection, or
 * of one shard of it, writes instead of a commit (src/app/final.ts runs it);
 * read back and checked, and shard sets merged into one per target model.
 *
 * A result set is a folder:
 *   manifest.json       tuning, branch, tip, seed, selection hash, shard i/n, runner, target, …
 *   results.json        the cases' results, in selection order (the run commit's results.json)
 *   memory-writes.json  what each case wrote to its memory copy
 *   judge.json          the judge's verdicts (when a judge is configured)
 *   logs/<id>/{stdout,stderr,result.json}   what goes on the logs ref
 *   summary.md          the report (sets that were graded)
 */
export const SET_FILES = {
  manifest: 'manifest.json',
  results: 'results.json',
  writes: 'memory-writes.json',
  judge: 'judge.json',
  summary: 'summary.md',
} as const;

export interface ResultSet {
  dir: string;
  manifest: ResultSetManifest;
  results: CaseResult[];
  writes: Record<string, MemoryWrite[]>;
  judge: JudgeFile;
  /** Case id → the set folder holding its logs (a collected set points at its shards). */
  logSource: Map<string, string>;
}

export type FinalMode = ResultSetManifest['mode'];

export const safeSegment = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** `.git/tune/<name>/shards/[<target>/]<i>-of-<n>`: where a shard writes unless told. */
export function defaultSetDir(tuning: Tuning, shard: Shard | 'collected', target: string | null): string {
  return localPath(tuning.repo.gitdir, tuning.name, 'shards', ...(target ? [safeSegment(target)] : []), shard === 'collected' ? 'collected' : shardFolder(shard));
}

export const machine = () => ({ platform: os.platform(), arch: os.arch(), cpus: os.cpus().length, node: process.version });

/** Where a result set keeps each answer's logs: `logs/<case>/`, a repeat's `logs/<case>/repeat-<n>/`. */
export const logKeys = (results: readonly CaseResult[]) => results.flatMap((r) => [1, ...(r.repeats ?? []).map((x) => x.n)].map((n) => ({ id: r.id, n, key: repeatKey(r.id, n) })));

/** A case's logs for a result set's `logs/<case>/`, laid out as the logs ref keeps them (transcript and workspace files when there are any). */
export interface SetLogs { stdout: string; stderr: string; result: string | null; transcript: string; workspace: string }

/** Writes a result set beside its place and swaps it in: a reader never sees half of one. */
export async function writeResultSet(
  dir: string,
  set: { manifest: ResultSetManifest; results: readonly CaseResult[]; writes: Record<string, MemoryWrite[]>; judge: JudgeFile },
  logs: ReadonlyMap<string, SetLogs>,
): Promise<void> {
  const tmp = `${dir.replace(/[\\/]+$/, '')}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  try {
    await fillResultSet(tmp, set, logs);
  } catch (err) {
    // A full disk half way: nothing of the set is left behind (the old one, if any, stays).
    await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(tmp, dir);
}

async function fillResultSet(
  tmp: string,
  set: { manifest: ResultSetManifest; results: readonly CaseResult[]; writes: Record<string, MemoryWrite[]>; judge: JudgeFile },
  logs: ReadonlyMap<string, SetLogs>,
): Promise<void> {
  await fs.mkdir(tmp, { recursive: true });
  diskFullPoint('result-set', path.join(tmp, SET_FILES.results));
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  await fs.writeFile(path.join(tmp, SET_FILES.manifest), json(set.manifest));
  await fs.writeFile(path.join(tmp, SET_FILES.results), json(set.results));
  await fs.writeFile(path.join(tmp, SET_FILES.writes), json(set.writes));
  if (set.manifest.judged) await fs.writeFile(path.join(tmp, SET_FILES.judge), json(set.judge));
  for (const [id, l] of logs) {
    const to = path.join(tmp, 'logs', id);
    await fs.mkdir(to, { recursive: true });
    await fs.copyFile(l.stdout, path.join(to, 'stdout')).catch(() => fs.writeFile(path.join(to, 'stdout'), ''));
    await fs.copyFile(l.stderr, path.join(to, 'stderr')).catch(() => fs.writeFile(path.join(to, 'stderr'), ''));
    if (l.result !== null) await fs.writeFile(path.join(to, 'result.json'), l.result);
    await fs.copyFile(l.transcript, path.join(to, 'transcript.jsonl')).catch(() => undefined);
    await fs.cp(l.workspace, path.join(to, 'workspace'), { recursive: true }).catch(() => undefined);
  }
}

/** Reads and checks one result set folder; a bad one is refused with the file and what is wrong. */
export async function readResultSet(dir: string): Promise<ResultSet> {
  const read = async (file: string, optional: boolean): Promise<unknown> => {
    let text: string;
    try {
      text = await fs.readFile(path.join(dir, file), 'utf8');
    } catch {
      if (optional) return undefined;
      throw usageError('bad-result-set', `${dir} is not a result set of \`git tune final --shard\`: it has no ${file}`, `git tune final --shard 1/2 --out ${dir}`);
    }
    try {
      return JSON.parse(text);
    } catch (err) {
      throw usageError('bad-result-set', `${path.join(dir, file)} is not JSON (${(err as Error).message})`, `git tune final --shard <i/n> --out ${dir}   # to write it again`);
    }
  };
  const parse = <T>(schema: z.ZodType<T>, value: unknown, file: string): T => {
    const r = schema.safeParse(value);
    if (!r.success) {
      throw usageError('bad-result-set', `${path.join(dir, file)} does not hold a result set's ${file}`, undefined,
        r.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join('.') || file}: ${i.message}`));
    }
    return r.data;
  };
  const manifest = parse(resultSetManifestSchema, await read(SET_FILES.manifest, false), SET_FILES.manifest);
  const results = parse(z.array(caseResultSchema), await read(SET_FILES.results, false), SET_FILES.results);
  const writes = parse(z.record(z.string(), z.array(memoryWriteSchema)), (await read(SET_FILES.writes, true)) ?? {}, SET_FILES.writes);
  const judge = parse(judgeFileSchema, (await read(SET_FILES.judge, true)) ?? {}, SET_FILES.judge);
  if (results.map((r) => r.id).join('\n') !== manifest.cases.join('\n')) {
    throw usageError('bad-result-set', `${path.join(dir, SET_FILES.results)} does not hold exactly the cases its manifest names`, `git tune final --shard ${formatShard(manifest.shard)} --out ${dir}   # to write it again`);
  }
  return { dir, manifest, results, writes, judge, logSource: new Map(results.map((r) => [r.id, dir])) };
}

/**
 * Merges shard result sets into one result set per target, refusing shards
 * that do not belong together (different tuning, tip, seed or selection; a
 * shard missing or given twice) or that ran at another tip than the
 * tuning's: the grade reads the tuning's history at that tip.
 */
export async function collectResultSets(tuning: Tuning, dirs: readonly string[], out: (target: string | null, many: boolean) => string): Promise<ResultSet[]> {
  const sets: ResultSet[] = [];
  for (const dir of dirs) sets.push(await readResultSet(dir));
  // What the final check runs: the selection, then the held-out set (docs/held-out.md).
  const selection = await finalCases(tuning);
  const identities = sets.map((s) => ({
    source: s.dir, tuning: s.manifest.tuning, tip: s.manifest.tip, seed: s.manifest.seed, selectionHash: s.manifest.selection.hash,
    target: s.manifest.target, shard: s.manifest.shard, cases: s.manifest.cases,
  }));
  const problems = shardSetProblems(identities, null);
  const others = [...new Set(sets.map((s) => s.manifest.tuning))].filter((t) => t !== tuning.name);
  if (others.length > 0) problems.unshift(`the result sets are of tuning ${others.join(', ')}, not ${tuning.name}`);
  if (problems.length > 0) {
    throw usageError('shards-do-not-match', `these ${sets.length} result sets do not make one final check`,
      'git tune final --collect <dir>…   # every shard run at one commit of the tuning branch, collected at once', problems);
  }
  const tip = sets[0]!.manifest.tip;
  if (tip !== tuning.tip) {
    throw historyError('shards-stale', `the shards ran at ${tip.slice(0, 12)}, but ${branchName(tuning.name)} is at ${tuning.tip.slice(0, 12)}: the grade reads the history they ran at`,
      'git tune final --ci   # run the final check again at this commit (or collect where the branch is at the shards\' commit)');
  }
  // Same tip, so the same selection; checked all the same, with each shard's cases.
  const cut = shardSetProblems(identities, selection);
  if (cut.length > 0) {
    throw usageError('shards-do-not-match', `the result sets do not hold the selection of ${branchName(tuning.name)}`, undefined, cut);
  }
  const groups = groupByTarget(sets.map((s) => ({ target: s.manifest.target, set: s })));
  const merged: ResultSet[] = [];
  for (const group of groups) {
    const parts = group.items.map((i) => i.set).sort((a, b) => a.manifest.shard.index - b.manifest.shard.index);
    const first = parts[0]!.manifest;
    const results = mergeInSelectionOrder(selection, parts.map((p) => p.results));
    const writes: Record<string, MemoryWrite[]> = {};
    const judge: JudgeFile = {};
    const logSource = new Map<string, string>();
    for (const p of parts) {
      Object.assign(writes, p.writes);
      Object.assign(judge, p.judge);
      for (const [id, dir] of p.logSource) logSource.set(id, dir);
    }
    const sortedWrites: Record<string, MemoryWrite[]> = {};
    const sortedJudge: JudgeFile = {};
    for (const id of selection) {
      if (writes[id]) sortedWrites[id] = writes[id]!;
      if (judge[id]) sortedJudge[id] = judge[id]!;
    }
    const flat = parts.flatMap((p) => p.manifest.from ?? [{ shard: p.manifest.shard, concurrency: p.manifest.concurrency, machine: p.manifest.machine, startedAt: p.manifest.startedAt, finishedAt: p.manifest.finishedAt }]);
    const manifest: ResultSetManifest = {
      ...first, shard: WHOLE, cases: [...selection],
      concurrency: Math.max(...parts.map((p) => p.manifest.concurrency)),
      machine: machine(),
      startedAt: parts.map((p) => p.manifest.startedAt).sort()[0]!,
      finishedAt: parts.map((p) => p.manifest.finishedAt).sort().reverse()[0]!,
      judged: parts.every((p) => p.manifest.judged),
      from: flat,
    };
    const dir = out(group.target, groups.length > 1);
    const logs = new Map(logKeys(results).map(({ id, key }) => {
      const src = path.join(logSource.get(id)!, 'logs', key);
      return [key, { stdout: path.join(src, 'stdout'), stderr: path.join(src, 'stderr'), result: null as string | null, transcript: path.join(src, 'transcript.jsonl'), workspace: path.join(src, 'workspace') }];
    }));
    for (const l of logs.values()) l.result = await fs.readFile(path.join(path.dirname(l.stdout), 'result.json'), 'utf8').catch(() => null);
    await writeResultSet(dir, { manifest, results, writes: sortedWrites, judge: sortedJudge }, logs);
    merged.push(await readResultSet(dir));
  }
  return merged;
}
