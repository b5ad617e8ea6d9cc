import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { TuneError, EXIT } from '../errors.js';

/**
 * The processes of the native backend (src/git/native-repo.ts): one
 * long-lived `git cat-file --batch` answering requests in order, a child's
 * output drained as fast as it comes, and one-shot git commands; with the
 * environment every git child gets and the errors for git missing or failing.
 */

/** Bytes of a child's output held while the reader is busy, before the child is paused. */
export const DRAIN_LIMIT = 32 * 1024 * 1024;

/** A reply read off the front of `buf`; or, when it is not all there yet, null or how many bytes it needs. */
export type Parser<T> = (buf: Buffer) => { used: number; value: T } | { need: number } | null;

export interface Pending {
  parse: Parser<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** The environment for our git children: no inherited repository overrides, no replace refs, stable messages. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A git hook (hooks/ run git-tune) inherits these from the git that runs it; we name the repository ourselves.
  for (const key of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_PREFIX', 'GIT_FLUSH']) delete env[key];
  return { ...env, GIT_NO_REPLACE_OBJECTS: '1', LC_ALL: 'C', ...extra };
}

export function noGit(err: Error): TuneError {
  return new TuneError('no-git', `native git could not start: ${err.message}`, {
    exitCode: EXIT.usage,
    hint: 'install git and put it on PATH, or run with GIT_TUNE_BACKEND=iso',
  });
}

export function gitFailed(args: readonly string[], code: number | null, stderr: string): TuneError {
  const tail = stderr.trim().split('\n').slice(-3).join(' / ');
  return new TuneError('git-failed', `git ${args.join(' ')} failed (exit ${code}): ${tail}`, { exitCode: EXIT.unexpected });
}

/**
 * One long-lived git process answering requests in order (cat-file --batch).
 * Referenced only while a request is pending.
 */
export class GitPipe {
  private readonly child: ChildProcess;
  private readonly queue: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  /** Chunks not yet joined to `buf`: a large object arrives in many, joined once when all have come. */
  private chunks: Buffer[] = [];
  private pending = 0;
  private need = 0;
  private stderr = '';
  private failure: Error | null = null;

  constructor(args: readonly string[], cwd: string) {
    this.child = spawn('git', args, { cwd, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
    this.child.on('error', (err) => this.fail(noGit(err)));
    this.child.on('close', (code) => this.fail(gitFailed(args, code, this.stderr || 'exited')));
    this.child.stdin!.on('error', () => {}); // reported by 'close'
    this.idle();
  }

  /** Whether the process ended (a read then starts another). */
  get failed(): boolean {
    return this.failure !== null;
  }

  request<T>(line: string, parse: Parser<T>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) this.busy();
      this.queue.push({ parse, resolve: resolve as (v: unknown) => void, reject });
      // Requests made in one tick (a walk's tree reads, asked all at once) go to git in one write.
      const stdin = this.child.stdin!;
      if (stdin.writableCorked === 0) {
        stdin.cork();
        process.nextTick(() => stdin.uncork());
      }
      stdin.write(`${line}\n`);
    });
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.pending += chunk.length;
    if (this.buf.length + this.pending < this.need) return;
    this.buf = this.buf.length === 0 && this.chunks.length === 1 ? chunk : Buffer.concat([this.buf, ...this.chunks]);
    this.chunks = [];
    this.pending = 0;
    this.need = 0;
    while (this.queue.length > 0) {
      const parsed = this.queue[0]!.parse(this.buf);
      if (!parsed || 'need' in parsed) {
        this.need = parsed?.need ?? 0;
        return;
      }
      this.buf = this.buf.subarray(parsed.used);
      this.queue.shift()!.resolve(parsed.value);
      if (this.queue.length === 0) this.idle();
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.queue.splice(0)) p.reject(this.failure);
    this.idle();
  }

  private busy(): void {
    this.child.ref();
    (this.child.stdout as unknown as { ref(): void }).ref();
  }

  private idle(): void {
    this.child.unref();
    (this.child.stdout as unknown as { unref(): void }).unref();
    (this.child.stderr as unknown as { unref(): void }).unref();
    (this.child.stdin as unknown as { unref(): void }).unref();
  }
}

export interface RawObject {
  oid: string;
  type: string;
  data: Buffer;
}

/**
 * A child's output read as fast as it comes, whatever the reader's pace: git
 * then walks on its own core while we parse, instead of waiting on a full
 * pipe (async iteration would pause the stream). `next` gives what arrived
 * since the last call as one buffer, or null at the end.
 */
export function drain(stream: Readable, limit = DRAIN_LIMIT): { next(): Promise<Buffer | null>; stop(): void } {
  const chunks: Buffer[] = [];
  let held = 0;
  let ended = false;
  let wake: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    held += chunk.length;
    if (held > limit) stream.pause(); // a reader far behind (a history with no init commit): memory stays bounded
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  stream.on('data', onData);
  stream.once('end', onEnd);
  stream.once('close', onEnd);
  stream.once('error', onEnd); // the exit code reports it
  return {
    async next() {
      while (chunks.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      if (chunks.length === 0) return null;
      held = 0;
      if (stream.isPaused()) stream.resume();
      return chunks.length === 1 ? chunks.pop()! : Buffer.concat(chunks.splice(0));
    },
    stop() {
      stream.off('data', onData);
      stream.destroy();
    },
  };
}

/** `git cat-file --batch` output: `<oid> <type> <size>\n<data>\n`, or `<name> missing\n`. */
export const parseObject: Parser<RawObject | null> = (buf) => {
  const nl = buf.indexOf(10);
  if (nl < 0) return null;
  const header = buf.toString('latin1', 0, nl);
  if (/ (missing|ambiguous)$/.test(header)) return { used: nl + 1, value: null };
  const [oid, type, size] = header.split(' ');
  const length = Number(size);
  if (buf.length < nl + 1 + length + 1) return { need: nl + 1 + length + 1 };
  return { used: nl + 1 + length + 1, value: { oid: oid!, type: type!, data: Buffer.from(buf.subarray(nl + 1, nl + 1 + length)) } };
};

/** Runs one git command to completion. */
export function runOnce(
  args: readonly string[],
  cwd: string,
  opts: { input?: string | Buffer; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: gitEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    child.stdin.on('error', () => {});
    child.on('error', (e) => reject(noGit(e)));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }));
    child.stdin.end(opts.input ?? '');
  });
}

