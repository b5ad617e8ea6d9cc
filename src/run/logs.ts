import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Env } from '../git/identity.js';
import { resolveIdentity } from '../git/identity.js';
import type { FileChange, GitRepo, StoredBlob } from '../git/types.js';
import { formatMessage } from '../core/trailers.js';
import { crashPoint } from '../faults/crash.js';
import { diskFullPoint } from '../faults/enospc.js';
import { filesUnder } from './files.js';

/**
 * Bulky per-case logs live on a ref of our own, `refs/tune-logs/<name>`, one
 * commit per run: stored in git and pushed with the branch, but never in the
 * tuning branch's diff (docs/git-model.md). Tree: `<run>/<case>/{stdout,stderr,result.json}`,
 * `transcript.jsonl` when the runner wrote one to TUNE_TRANSCRIPT, and
 * `workspace/<path>` for each TUNE_WORKSPACE file `runner.keep` names.
 */
export const logsRef = (tuning: string) => `refs/tune-logs/${tuning}`;

export interface CaseLogs {
  id: string;
  stdoutFile: string;
  stderrFile: string;
  rawResult: string | null;
  /** The runner's transcript (redacted), when it wrote one. */
  transcriptFile?: string;
  /** The workspace files kept (capped, redacted), under their workspace paths. */
  workspaceDir?: string;
}

export async function writeRunLogs(
  repo: GitRepo, tuning: string, run: string, logs: readonly CaseLogs[], ctx: { env: Env; now: Date },
): Promise<string> {
  const ref = logsRef(tuning);
  const parent = await repo.resolveRef(ref);
  // The files are stored by the backend one at a time (git reads them itself): a
  // 500-case run's logs, up to 1 MiB per file, never sit in memory together.
  const changes = new Map<string, FileChange | StoredBlob>();
  // The run's folder is replaced whole: a file of an earlier run of the same name (abandoned by a reset) is never served as this run's.
  if (parent) for (const f of await repo.listFiles(parent, run)) changes.set(f.path, null);
  const files: Array<[string, string]> = [];
  const add = async (at: string, file: string | undefined, always: boolean) => {
    const size = file ? await fs.stat(file).then((st) => (st.isFile() ? st.size : -1), () => -1) : -1;
    if (size > 0) files.push([at, file!]);
    else if (always) changes.set(at, { content: '' });
  };
  for (const l of logs) {
    await add(`${run}/${l.id}/stdout`, l.stdoutFile, true);
    await add(`${run}/${l.id}/stderr`, l.stderrFile, true);
    if (l.rawResult !== null) changes.set(`${run}/${l.id}/result.json`, { content: l.rawResult });
    await add(`${run}/${l.id}/transcript.jsonl`, l.transcriptFile, false);
    if (l.workspaceDir) {
      for (const file of await filesUnder(l.workspaceDir)) await add(`${run}/${l.id}/workspace/${file}`, path.join(l.workspaceDir, file), true);
    }
  }
  const oids = await repo.writeBlobFiles(files.map(([, file]) => file));
  files.forEach(([at], i) => changes.set(at, { oid: oids[i]! }));
  const { author, committer } = await resolveIdentity(repo.gitdir, ctx.env, ctx.now);
  const message = formatMessage({ subject: `logs of ${run}`, body: '', trailers: [['Tune-Tuning', tuning], ['Tune-Run', run]] });
  diskFullPoint('logs', path.join(repo.gitdir, 'objects'));
  const oid = await repo.writeCommit({ parent, changes, message, author, committer });
  await crashPoint('logs:after-objects');
  await repo.compareAndSwapRef(ref, oid, parent);
  await crashPoint('logs:after-ref');
  return oid;
}

export async function readCaseLog(
  repo: GitRepo, tuning: string, run: string, id: string, file: 'stdout' | 'stderr' | 'result.json' | 'transcript.jsonl',
): Promise<string | null> {
  const tip = await repo.resolveRef(logsRef(tuning));
  if (!tip) return null;
  const blob = await repo.readBlobAt(tip, path.posix.join(run, id, file));
  return blob === null ? null : Buffer.from(blob).toString('utf8');
}

/** The workspace files kept of a case (paths relative to the workspace), and the text of each. */
export async function readKeptFiles(repo: GitRepo, tuning: string, run: string, id: string): Promise<Array<{ path: string; text: string }>> {
  const tip = await repo.resolveRef(logsRef(tuning));
  if (!tip) return [];
  const base = path.posix.join(run, id, 'workspace');
  const out: Array<{ path: string; text: string }> = [];
  for (const file of await repo.listFiles(tip, base)) {
    const blob = await repo.readBlobAt(tip, file.path);
    if (blob !== null) out.push({ path: file.path.slice(base.length + 1), text: Buffer.from(blob).toString('utf8') });
  }
  return out;
}

/** The same for a run not finished yet: the files kept so far in its store. */
export async function readKeptFilesIn(dir: string): Promise<Array<{ path: string; text: string }>> {
  const out: Array<{ path: string; text: string }> = [];
  for (const file of await filesUnder(dir)) out.push({ path: file, text: await fs.readFile(path.join(dir, file), 'utf8') });
  return out;
}
