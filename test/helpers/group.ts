import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, type At, type CliResult } from './cli.js';

/**
 * The CLI as a terminal runs it: the leader of its own process group, so a
 * test can signal the whole group (`kill -INT -<pgid>`) as Ctrl-C does, or
 * SIGKILL it as the OOM killer or a closed terminal does.
 */
export interface GroupRun {
  child: ChildProcess;
  pgid: number;
  done: Promise<CliResult>;
}

export function startGroup(at: At, args: readonly string[], extraEnv: Record<string, string> = {}): GroupRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: at.dir, env: { ...process.env, ...at.env, ...extraEnv }, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr }));
  });
  return { child, pgid: child.pid!, done };
}

/** Sends `signal` to every process of the group; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `ok()` holds (polling), failing after `ms`. */
export async function waitUntil(ok: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}

/** The command line of a process, or '' when it is gone. */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** A process group as git-tune records it: its pgid and its leader's start time (/proc/<pid>/stat field 22). */
export interface Group {
  pgid: number;
  start: string | null;
}

/**
 * A process as /proc/<pid>/stat has it (state, process group, start time), or
 * null when it is gone. Read here, not through the product's reader: a check
 * of orphans should not rest on the code it checks.
 */
function statOf(pid: number | string): { zombie: boolean; pgrp: number; start: string | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { zombie: fields[0] === 'Z' || fields[0] === 'X', pgrp: Number(fields[2]), start: fields[19] ?? null };
  } catch {
    return null;
  }
}

const leaderStart = (pid: number): string | null => statOf(pid)?.start ?? null;

/**
 * Whether the very group `g` still runs. pids wrap (pid_max is 32,768 on CI
 * machines, and a test run starts tens of thousands of processes): once the
 * group is gone its pgid may lead another group, which has another start
 * time. A pid is never reused while its group lives, so a leader with another
 * start time means `g` is gone; a leader gone with members left means it runs.
 */
export function sameGroupAlive(g: Group): boolean {
  const leader = statOf(g.pgid);
  if (leader !== null && g.start !== null && leader.start !== g.start) return false;
  // The leader runs: so does the group (the common case, read from one file; tests poll this).
  if (leader !== null && !leader.zombie) return true;
  return groupRunning(g.pgid);
}

/**
 * Whether a process of the group still runs: a zombie (killed, not yet
 * reaped by the init that adopted it, which may take seconds on some
 * machines) runs nothing and writes nothing. Read from /proc (field 5 of
 * stat is the process group).
 */
function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) return false;
  return readdirSync('/proc').some((name) => {
    const stat = /^\d+$/.test(name) ? statOf(name) : null;
    return stat !== null && stat.pgrp === pgid && !stat.zombie;
  });
}

/** The process groups git-tune recorded as running for `tuning` (runners, judge, editor), with their command lines. */
export function recordedGroups(at: At, tuning: string): Array<Group & { command: string }> {
  const dir = path.join(at.dir, '.git', 'tune', tuning, 'groups');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.endsWith('.json')).flatMap((n) => {
    const pgid = Number(n.slice(0, -5));
    let start: string | null = null;
    try {
      start = (JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as { start?: string | null }).start ?? null;
    } catch {
      start = leaderStart(pgid); // cut short as it was written: the leader is the one running now
    }
    const g = { pgid, start };
    return sameGroupAlive(g) ? [{ ...g, command: cmdline(pgid) }] : [];
  });
}

/** Every live process whose environment says it works for the repository at `dir` (TUNE_ROOT), but for `except`'s group. */
export function processesFor(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8');
      if (statOf(name)?.zombie !== false) continue;
      if (env.split('\0').includes(`TUNE_ROOT=${dir}`)) out.push(Number(name));
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}
