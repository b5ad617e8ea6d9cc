import { promises as fs } from 'node:fs';
import path from 'node:path';
import { caseResultSchema, memoryWriteSchema, type CaseResult, type MemoryWrite } from '../contracts/result.js';
import { crashPoint } from '../faults/crash.js';
import { writeFileAtomic } from '../git/lockfile.js';
import * as z from 'zod';
import { localPath } from '../core/paths.js';

/**
 * Case results of a run in progress, kept in `.git/tune/<name>/runs/<run>/`
 * (inside the repository, outside its history and working tree) as each case
 * ends, written atomically: a crash loses no finished case, and a resumed run
 * runs only the cases without a file here.
 */
const storedCaseSchema = z.object({
  result: caseResultSchema,
  writes: z.array(memoryWriteSchema),
  rawResult: z.string().nullable(),
});
export type StoredCase = z.infer<typeof storedCaseSchema>;

export class RunStore {
  readonly dir: string;

  constructor(gitdir: string, tuning: string, run: string) {
    this.dir = localPath(gitdir, tuning, 'runs', run);
  }

  get logDir(): string {
    return path.join(this.dir, 'logs');
  }

  private caseFile(id: string): string {
    return path.join(this.dir, 'cases', `${id}.json`);
  }

  async save(result: CaseResult, writes: MemoryWrite[], rawResult: string | null): Promise<void> {
    await writeFileAtomic(this.caseFile(result.id), JSON.stringify({ result, writes, rawResult }), 0o644, 'case');
    await crashPoint('case:saved');
  }

  async load(ids: readonly string[]): Promise<Map<string, StoredCase>> {
    const out = new Map<string, StoredCase>();
    for (const id of ids) {
      let text: string;
      try {
        text = await fs.readFile(this.caseFile(id), 'utf8');
      } catch {
        continue;
      }
      try {
        out.set(id, storedCaseSchema.parse(JSON.parse(text)));
      } catch {
        // A file we did not finish writing cannot exist (atomic rename); one damaged by hand is re-run.
      }
    }
    return out;
  }

  /** Every case kept so far, whatever the run's cases are. */
  async loadAll(): Promise<Map<string, StoredCase>> {
    const files = await fs.readdir(path.join(this.dir, 'cases')).catch(() => [] as string[]);
    return this.load(files.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)));
  }

  async readLog(id: string, stream: 'stdout' | 'stderr' | 'transcript.jsonl'): Promise<string | null> {
    return fs.readFile(path.join(this.logDir, `${id}.${stream}`), 'utf8').catch(() => null);
  }

  async remove(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
