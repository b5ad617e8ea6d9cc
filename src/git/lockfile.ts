import { promises as fs, constants } from 'node:fs';
import path from 'node:path';
import { TuneError, EXIT } from '../errors.js';
import { diskFullPoint, type EnospcPoint } from '../faults/enospc.js';
import { deadToolLeft, forgetLockOwner, gitLockError, noteLockOwner, removeDeadGitLock } from './lock-owner.js';
import { tempFileFor } from './temp-files.js';

/**
 * Ref updates that follow git's own lock-file protocol, so git-tune and
 * native git can move refs side by side: create `<ref>.lock` exclusively,
 * check the old value, write the new one into the lock, rename it over the
 * ref. isomorphic-git's own ref writes have no lock (see the notes).
 */
const OID = /^[0-9a-f]{40}$/;

async function readPackedRef(gitdir: string, ref: string): Promise<string | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(gitdir, 'packed-refs'), 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.startsWith('^')) continue;
    const [oid, name] = line.split(' ');
    if (name === ref && oid && OID.test(oid)) return oid;
  }
  return null;
}

/** The ref's current value as native git sees it: loose file first, then packed-refs. */
export async function readRefValue(gitdir: string, ref: string): Promise<string | null> {
  try {
    const text = (await fs.readFile(path.join(gitdir, ref), 'utf8')).trim();
    if (OID.test(text)) return text;
    if (text.startsWith('ref: ')) return readRefValue(gitdir, text.slice(5).trim());
    return null;
  } catch (err) {
    // ENOTDIR: a ref `a/b` is a file, so no loose `a/b/c` can exist (it may still be packed).
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EISDIR' && code !== 'ENOTDIR') throw err;
  }
  return readPackedRef(gitdir, ref);
}

/** Milliseconds a held ref lock is waited for: git's `core.filesRefLockTimeout` (100 by default), read from the repository's config once. */
const lockTimeouts = new Map<string, Promise<number>>();

export function refLockTimeout(gitdir: string): Promise<number> {
  let found = lockTimeouts.get(gitdir);
  if (!found) {
    found = fs.readFile(path.join(gitdir, 'config'), 'utf8').then((text) => {
      let section = '';
      let ms = 100;
      for (const raw of text.split('\n')) {
        const line = raw.replace(/[#;].*$/, '').trim();
        const head = /^\[\s*([^\]\s"]+)[^\]]*\]\s*(.*)$/.exec(line);
        if (head) section = head[1]!.toLowerCase();
        const kv = /^([A-Za-z][\w-]*)\s*=\s*(-?\d+)$/.exec(head ? head[2]! : line);
        // A negative value means "retry forever" to git; a bounded wait is kept here (a minute).
        if (section === 'core' && kv && kv[1]!.toLowerCase() === 'filesreflocktimeout') ms = Number(kv[2]) < 0 ? 60_000 : Number(kv[2]);
      }
      return ms;
    }, () => 100);
    lockTimeouts.set(gitdir, found);
  }
  return found;
}

/** Says on stderr that a stale lock was removed (narration: the command goes on). */
const sayRemoved = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/**
 * Creates `lockPath` exclusively, as git does, and notes beside it that this
 * process holds it (src/git/lock-owner.ts). A lock a dead git-tune left is
 * removed, saying so; one held by a live process is waited for up to `waitMs`
 * (git's `core.filesRefLockTimeout`) before it is reported as `ref-locked`,
 * naming its holder.
 */
async function takeLock(gitdir: string, lockPath: string, what: string, waitMs?: number): Promise<fs.FileHandle> {
  await fs.mkdir(path.dirname(lockPath), { recursive: true });
  const deadline = Date.now() + (waitMs ?? (await refLockTimeout(gitdir)));
  let checkedDead = false;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      await noteLockOwner(gitdir, lockPath);
      return handle;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!checkedDead) {
        checkedDead = true;
        if (await clearStaleLock(gitdir, lockPath)) continue;
      } else if (await removeDeadGitLock(gitdir, lockPath)) continue;
      if (Date.now() >= deadline) throw await gitLockError(gitdir, lockPath, what);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 20)));
    }
  }
}

/**
 * Removes `lockPath` when a dead git-tune provably left it (its note names a
 * dead holder, or deadToolLeft), saying so on stderr; true when it did. For
 * locks native git takes itself (`git update-ref`), which waits for a live
 * holder on its own (`core.filesRefLockTimeout`).
 */
export async function clearStaleLock(gitdir: string, lockPath: string): Promise<boolean> {
  if (await removeDeadGitLock(gitdir, lockPath)) {
    sayRemoved(`git-tune: removed ${lockPath}: the git-tune that held it was killed`);
    return true;
  }
  const dead = await deadToolLeft(gitdir, lockPath);
  if (!dead) return false;
  await fs.rm(lockPath, { force: true });
  sayRemoved(`git-tune: removed ${lockPath}: left by ${dead.command} (pid ${dead.pid}), which was killed`);
  return true;
}

/** Lets go of a lock file this process holds (the note first: it must never outlive its lock). */
async function dropLock(gitdir: string, lockPath: string): Promise<void> {
  await forgetLockOwner(gitdir, lockPath);
  await fs.rm(lockPath, { force: true });
}

/**
 * Git stores refs as paths, so `refs/heads/tune/x` cannot exist beside a
 * branch `refs/heads/tune` (loose or packed), nor beside `refs/heads/tune/x/y`.
 * Native git refuses to create such a ref; so do we, naming the one in the way.
 */
async function refInTheWay(gitdir: string, ref: string): Promise<string | null> {
  const parts = ref.split('/');
  for (let i = 2; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    if (await readRefValue(gitdir, prefix)) return prefix;
  }
  let packed = '';
  try {
    packed = await fs.readFile(path.join(gitdir, 'packed-refs'), 'utf8');
  } catch {
    // no packed refs
  }
  const below = packed.split('\n').map((line) => line.split(' ')[1]).find((name) => name?.startsWith(`${ref}/`));
  if (below) return below;
  // A directory where the ref goes: in the way unless empty (then git would remove it, and so do we).
  const removed = await fs.rmdir(path.join(gitdir, ref)).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT' || err.code === 'ENOTDIR',
  );
  return removed ? null : `${ref}/…`;
}

export async function compareAndSwapRef(gitdir: string, ref: string, oid: string | null, expected: string | null): Promise<void> {
  if (expected === null && oid !== null) {
    const blocker = await refInTheWay(gitdir, ref);
    if (blocker) {
      const branch = /^refs\/heads\/(.+)$/.exec(blocker)?.[1];
      throw new TuneError('ref-conflict', `cannot create ${ref}: ${blocker} exists, and git cannot hold both`, {
        exitCode: EXIT.usage,
        hint: blocker.endsWith('…')
          ? `git for-each-ref ${ref}/   # the refs in the way: rename or delete them`
          : branch
            ? `git branch -m ${branch} ${branch}-branch   # rename the branch in the way`
            : `git update-ref -d ${blocker}   # only if you do not need it`,
      });
    }
  }
  const refPath = path.join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  const handle = await takeLock(gitdir, lockPath, ref);
  let committed = false;
  try {
    const current = await readRefValue(gitdir, ref);
    if (current !== expected) {
      throw new TuneError(
        'ref-moved',
        `${ref} moved while this command ran (expected ${expected?.slice(0, 7) ?? 'no ref'}, found ${current?.slice(0, 7) ?? 'no ref'})`,
        { exitCode: EXIT.conflict, hint: 'another command wrote a step first; run `git tune next` and try again' },
      );
    }
    if (oid === null) {
      await handle.close();
      await fs.rm(refPath, { force: true });
      await removePackedRef(gitdir, ref);
      return;
    }
    await handle.writeFile(`${oid}\n`);
    await handle.sync();
    await handle.close();
    await forgetLockOwner(gitdir, lockPath);
    await fs.rename(lockPath, refPath);
    committed = true;
  } finally {
    if (!committed) {
      await handle.close().catch(() => {});
      await dropLock(gitdir, lockPath);
    }
  }
}

async function removePackedRef(gitdir: string, ref: string): Promise<void> {
  const packed = path.join(gitdir, 'packed-refs');
  let text: string;
  try {
    text = await fs.readFile(packed, 'utf8');
  } catch {
    return;
  }
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.split(' ')[1] === ref) {
      if (lines[i + 1]?.startsWith('^')) i++;
      continue;
    }
    out.push(line);
  }
  if (out.length === lines.length) return;
  const lock = await takeLock(gitdir, `${packed}.lock`, 'packed-refs');
  try {
    await lock.writeFile(out.join('\n'));
    await lock.sync();
    await lock.close();
    await forgetLockOwner(gitdir, `${packed}.lock`);
    await fs.rename(`${packed}.lock`, packed);
  } catch (err) {
    await lock.close().catch(() => {});
    await dropLock(gitdir, `${packed}.lock`);
    throw err;
  }
}

/**
 * Runs `fn` while holding `<gitdir>/index.lock`, as native git does around
 * index writes. A lock held briefly (a `git status` refreshing the index,
 * another step committing) is waited for up to `waitMs`; a lock held longer
 * is reported as `ref-locked`.
 */
export async function withIndexLock<T>(gitdir: string, fn: () => Promise<T>, waitMs = 3000): Promise<T> {
  const lockPath = path.join(gitdir, 'index.lock');
  const deadline = Date.now() + waitMs;
  let handle: fs.FileHandle;
  for (;;) {
    try {
      handle = await takeLock(gitdir, lockPath, 'the index', 0);
      break;
    } catch (err) {
      if ((err as TuneError).code !== 'ref-locked' || Date.now() >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(Math.random() * 30)));
    }
  }
  await handle.close();
  try {
    return await fn();
  } finally {
    await dropLock(gitdir, lockPath);
  }
}

/**
 * Writes a file so a reader sees the old content or the new, never half: into
 * a temporary file beside it (src/git/temp-files.ts), renamed over it. A
 * write that fails (a full disk) removes its temporary file and leaves the
 * old content. `point` names the write for the disk-full tests (src/faults/enospc.ts).
 */
export async function writeFileAtomic(file: string, content: Uint8Array | string, mode = 0o644, point?: EnospcPoint): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = tempFileFor(file);
  const handle = await fs.open(tmp, 'w', mode);
  try {
    try {
      if (point) diskFullPoint(point, tmp);
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.chmod(tmp, mode);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}
