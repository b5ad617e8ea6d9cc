// Repeated timing of whole processes, interleaved: each round runs every
// command of a comparison once, in a rotating order, so a busy machine slows
// all of them alike and the ratios between them stay meaningful. Each sample
// has its wall time and, where /usr/bin/time exists, its CPU time (user +
// system, children included): on a machine shared with other work, CPU time
// is what the command itself costs, and wall time is what its user waits.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const TIME = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0 ? '/usr/bin/time' : null;
export const cpuMeasured = TIME !== null;

/**
 * @typedef {{ label: string, argv: string[], cwd: string, env?: Record<string,string>,
 *   prepare?: () => void, rounds?: number, expectExit?: number }} Command
 * @typedef {{ wall: number[], cpu: number[] }} Samples
 */

function runOnce(cmd) {
  cmd.prepare?.();
  const out = path.join(os.tmpdir(), `git-tune-bench-time-${process.pid}`);
  const argv = TIME ? [TIME, '-f', '%U %S', '-o', out, ...cmd.argv] : cmd.argv;
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), {
    cwd: cmd.cwd,
    env: { ...process.env, ...(cmd.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const want = cmd.expectExit ?? 0;
  if (r.error) throw new Error(`${cmd.label}: ${r.error.message}`);
  if (r.status !== want) {
    throw new Error(`${cmd.label}: exit ${r.status} (expected ${want})\n${String(r.stderr).slice(-2000)}\n${String(r.stdout).slice(-500)}`);
  }
  let cpu = NaN;
  if (TIME) {
    const [user, sys] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    cpu = (user + sys) * 1000;
    rmSync(out, { force: true });
  }
  return { wall, cpu };
}

/** Runs every command `rounds` times (a command may ask for fewer), interleaved. Returns samples by label. */
export function measure(commands, rounds, { warmup = 1 } = {}) {
  const samples = Object.fromEntries(commands.map((c) => [c.label, { wall: [], cpu: [] }]));
  for (let w = 0; w < warmup; w++) for (const c of commands) runOnce(c);
  for (let r = 0; r < rounds; r++) {
    const order = commands.map((_, i) => commands[(i + r) % commands.length]);
    for (const c of order) {
      const s = samples[c.label];
      if (s.wall.length >= Math.min(rounds, c.rounds ?? rounds)) continue;
      const { wall, cpu } = runOnce(c);
      s.wall.push(wall);
      s.cpu.push(cpu);
    }
  }
  return samples;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, median: median(s), min: s[0], max: s[s.length - 1] };
}

/** Ratio of medians, with the spread of the per-round ratios (pairs taken in round order). */
export function ratio(a, b) {
  const pairs = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) pairs.push(a[i] / b[i]);
  const p = pairs.sort((x, y) => x - y);
  return { value: median(a) / median(b), min: p[0], max: p[p.length - 1] };
}

/** `a` against the sum of two baselines measured in the same rounds (e.g. git log + the Node floor). */
export function ratioToSum(a, b, c) {
  const sum = b.map((x, i) => x + (c[i] ?? c[c.length - 1]));
  return ratio(a, sum);
}

export const fmtMs = (s) => `${s.median.toFixed(0)} ms [${s.min.toFixed(0)}–${s.max.toFixed(0)}]`;
export const fmtRatio = (r) => (Number.isFinite(r.value) ? `${r.value.toFixed(2)}× [${r.min.toFixed(2)}–${r.max.toFixed(2)}]` : 'n/a');
export const fmtCpu = (xs) => (xs.every(Number.isFinite) ? `${median(xs).toFixed(0)} ms` : 'n/a');
