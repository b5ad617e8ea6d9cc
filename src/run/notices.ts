import { promises as fs } from 'node:fs';

/**
 * What a preset says for the person at the terminal (a model with no known
 * price, an HTTP 429 or 5xx tried again) it writes to its stderr as a line
 * starting `git-tune: `; that stderr is each case's log. A run collects those
 * lines as its cases end and prints each kind once on the terminal's stderr
 * (numbers aside: "retry 1 of 4" and "retry 2 of 4" are one kind), with how
 * often it came at the end of the run.
 */
export const NOTICE_PREFIX = 'git-tune: ';

export interface Notices {
  /** Reads the notices of one case's stderr file; prints the kinds not seen before in this run. */
  add(stderrFile: string, caseId: string): Promise<void>;
  /** The kinds that came more than once, with their counts (call once, when the run's cases are done). */
  end(): void;
}

const kindOf = (line: string) => line.replace(/\d+(\.\d+)?/g, '#');

export function createNotices(role: string, err: (text: string) => void): Notices {
  const seen = new Map<string, { line: string; count: number }>();
  return {
    async add(stderrFile, caseId) {
      const text = await fs.readFile(stderrFile, 'utf8').catch(() => '');
      if (!text.includes(NOTICE_PREFIX)) return;
      for (const raw of text.split('\n')) {
        const line = raw.trim();
        if (!line.startsWith(NOTICE_PREFIX)) continue;
        const notice = line.slice(NOTICE_PREFIX.length);
        const kind = kindOf(notice);
        const known = seen.get(kind);
        if (known) {
          known.count++;
          continue;
        }
        seen.set(kind, { line: notice, count: 1 });
        err(`${NOTICE_PREFIX}the ${role} says (case ${caseId}, once per run): ${notice}\n`);
      }
    },
    end() {
      for (const { line, count } of seen.values()) {
        if (count > 1) err(`${NOTICE_PREFIX}the ${role} said it ${count} times in this run: ${line}\n`);
      }
    },
  };
}
