/**
 * Whether a process that ended badly ran out of memory, and the VOID reason
 * that says so. A runner the machine could not hold says nothing about the
 * prose: its case is VOID (the run is graded VOID and run again at a lower
 * concurrency), never an error that blames the prose. docs/contracts.md#runner.
 */
export interface ProcessEnd {
  exitCode: number | null;
  signal: string | null;
  /** The errno code of a spawn that failed (ENOENT, ENOMEM, EAGAIN, …). */
  spawnCode: string | null;
  /** The last few KB of what the process wrote to stderr. */
  stderrTail: string;
  /** Processes the kernel's out-of-memory killer ended while this one ran (null: not known on this system). */
  oomKills: { machine: number | null; cgroup: number | null };
}

/**
 * Lines that out-of-memory deaths print: Node/V8 (`FATAL ERROR: … JavaScript
 * heap out of memory`, `Fatal process OOM in …`), Python (`MemoryError`), C++
 * (`std::bad_alloc`), Java (`OutOfMemoryError`), Rust (`memory allocation of N
 * bytes failed`), Go and most C tools (`out of memory`), an ArrayBuffer refused
 * under `ulimit -v` (`Array buffer allocation failed`), and strerror(ENOMEM).
 */
const OOM_LINE = /JavaScript heap out of memory|Fatal process (?:OOM|out of memory)|\bout of memory\b|^\s*MemoryError\b|std::bad_alloc|OutOfMemoryError|memory allocation of \d+ bytes failed|Array buffer allocation failed|Cannot allocate memory|\bENOMEM\b/i;

/** The last line of `text` that says it ran out of memory, trimmed; null when none does. */
export function oomLine(text: string): string | null {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.replace(/^[#\s]+/, '').trim();
    if (line && OOM_LINE.test(line)) return line.length > 160 ? `${line.slice(0, 157)}...` : line;
  }
  return null;
}

const killer = (kills: ProcessEnd['oomKills']): string | null =>
  (kills.cgroup ?? 0) > 0 ? "the cgroup's out-of-memory killer ended a process during the case"
    : (kills.machine ?? 0) > 0 ? "the kernel's out-of-memory killer ended a process during the case"
      : null;

/** The VOID reason when `end` is a memory shortage, else null. Always names memory. */
export function memoryShortage(end: ProcessEnd): string | null {
  if (end.spawnCode === 'ENOMEM') return 'out of memory: the runner could not start (spawn ENOMEM)';
  if (end.spawnCode === 'EAGAIN') return 'out of memory or processes: the runner could not start (spawn EAGAIN: the system could not fork)';
  if (end.spawnCode !== null) return null;
  const killed = end.exitCode === 137 ? 'exit 137' : end.signal === 'SIGKILL' ? 'SIGKILL' : null;
  if (killed) {
    const why = killer(end.oomKills);
    return why ? `killed (${killed}: out of memory; ${why})` : `killed (${killed}: out of memory, most often)`;
  }
  if (end.exitCode === 0 && end.signal === null) return null;
  const line = oomLine(end.stderrTail);
  if (line === null) return null;
  const how = end.exitCode !== null ? `exit ${end.exitCode}` : end.signal ?? 'ended';
  return `out of memory (${how}): ${line}`;
}
