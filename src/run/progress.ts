import type { CaseResult } from '../contracts/result.js';

/**
 * Progress of a run on stderr: one rewritten line on a TTY (cases done,
 * running, void, tokens so far), plain append-only lines otherwise.
 */
export interface Progress {
  started(id: string): void;
  finished(result: CaseResult): void;
  done(): void;
}

/** A case of a run starting or ending, for a watcher in the same process. */
export type CaseEvent = { kind: 'started'; run: string; id: string } | { kind: 'finished'; run: string; result: CaseResult };

/** `onCase`: a watcher in the same process (`git tune auto`'s live view and its shared ceiling). */
export function createProgress(
  run: string, total: number, alreadyDone: number, write: (s: string) => void, tty: boolean, onCase?: (event: CaseEvent) => void,
  /** The cases are the run's repeat `n` of its flips: every line says so. */
  repeat?: number,
): Progress {
  const of = repeat ? ` (repeat ${repeat})` : '';
  let done = alreadyDone;
  let running = 0;
  let voids = 0;
  let tokens = 0;
  const line = () => `${run}${of}: ${done}/${total} done, ${running} running, ${voids} void, ${tokens.toLocaleString('en-US')} tokens`;
  const render = () => {
    if (tty) write(`\r\x1b[2K${line()}`);
  };
  return {
    started(id) {
      onCase?.({ kind: 'started', run, id });
      running++;
      render();
    },
    finished(r) {
      onCase?.({ kind: 'finished', run, result: r });
      running--;
      done++;
      tokens += r.tokens;
      if (r.status === 'void') voids++;
      if (tty) render();
      else {
        const verdict = r.status === 'void' ? `VOID (${r.void})` : r.status === 'error' ? `error: ${r.error}` : r.right === null ? 'answered' : r.right ? 'right' : 'wrong';
        write(`[${done}/${total}] ${r.id}${of}: ${verdict}, ${r.tokens} tokens, ${(r.durationMs / 1000).toFixed(1)}s\n`);
      }
    },
    done() {
      if (tty) write(`\r\x1b[2K${line()}\n`);
    },
  };
}
