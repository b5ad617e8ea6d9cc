import { promises as fs } from 'node:fs';

/**
 * How many processes the kernel's out-of-memory killer has ended so far:
 * on the machine (`oom_kill` in /proc/vmstat, Linux 4.13+) and in the cgroup
 * git-tune runs in (`oom_kill` in its memory.events, cgroup v2; a container's
 * memory limit). null where the system does not say (macOS, old kernels,
 * cgroup v1). Read before and after a case: a runner killed by SIGKILL while
 * either count moved was killed for memory.
 */
export interface OomCounts {
  machine: number | null;
  cgroup: number | null;
}

const counter = (text: string, key: string): number | null => {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
};

let eventsFile: Promise<string | null> | null = null;

/** This process's cgroup v2 memory.events, or null. */
function cgroupEvents(): Promise<string | null> {
  eventsFile ??= fs.readFile('/proc/self/cgroup', 'utf8').then(async (text) => {
    const v2 = /^0::(\/.*)$/m.exec(text)?.[1];
    if (v2 === undefined) return null;
    const file = `/sys/fs/cgroup${v2 === '/' ? '' : v2}/memory.events`;
    return (await fs.access(file).then(() => true, () => false)) ? file : null;
  }, () => null);
  return eventsFile;
}

export async function oomCounts(): Promise<OomCounts> {
  const [vmstat, events] = await Promise.all([
    fs.readFile('/proc/vmstat', 'utf8').catch(() => ''),
    cgroupEvents().then((f) => (f ? fs.readFile(f, 'utf8').catch(() => '') : '')),
  ]);
  return { machine: counter(vmstat, 'oom_kill'), cgroup: counter(events, 'oom_kill') };
}

/** What moved between two readings (null where either is unknown). */
export const oomDelta = (before: OomCounts, after: OomCounts): OomCounts => ({
  machine: before.machine === null || after.machine === null ? null : after.machine - before.machine,
  cgroup: before.cgroup === null || after.cgroup === null ? null : after.cgroup - before.cgroup,
});
