// git-tune's own peak memory during a run (issue 22): 500 cases at
// concurrency 16, the peak resident memory of the `git tune run` process
// itself (process.resourceUsage().maxRSS at its exit, through the
// bench/lib/rss.mjs preload; its runners and git children are other
// processes and not counted), against a plain Node harness that starts the
// same 500 runner processes at concurrency 16 and captures their output to
// files the same way, with no git (bench/lib/spawn-pool.mjs).
// Two runners: one that answers at once and prints nothing (the run overhead
// scenario's), and a chatty one that prints 64 KB to stdout, 16 KB to stderr
// and writes a 64 KB transcript per case, as an agent CLI's event stream does
// (what the logs ref then keeps: 72 MB for the run).
// Target: under 200 MB for both. The bench exits 1 when it is not met.
// `node bench/run-memory.mjs` runs this scenario alone (after a build); so
// does `npm run bench -- --only run-memory`, which also updates its section
// and target row in BENCHMARKS.md and bench/results.json.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BRANCH, CLI, ENV, NAME, ROOT, TMP, buildRunRepo, git } from './lib/fixtures.mjs';
import { median } from './lib/timing.mjs';

export const CASES = 500;
export const CONCURRENCY = 16;
/** The target, in MB. */
export const TARGET_MB = 200;

const CHATTY = `import fs from 'node:fs';
// 64 KB of JSON events to stdout, 16 KB to stderr, a 64 KB transcript: an agent CLI's stream, roughly.
const id = process.env.TUNE_CASE_ID ?? process.argv[2];
let n = 0;
const events = (bytes) => {
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const line = JSON.stringify({ type: 'tool_use', case: id, n: n++, text: 'looking up the order of ' + id + ' in the order system, attempt ' + n + ' ' + Math.random().toString(36) });
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\\n') + '\\n';
};
process.stdout.write(events(64 * 1024));
process.stderr.write(events(16 * 1024));
const out = process.env.TUNE_OUTPUT ?? process.argv[2];
if (process.env.TUNE_TRANSCRIPT) fs.writeFileSync(process.env.TUNE_TRANSCRIPT, events(64 * 1024));
fs.writeFileSync(out, '{"answer":"your order ships today","usage":[{"model":"m","inputTokens":10,"outputTokens":5}],"llmCalls":1}');
`;

/** The 500-case run repository with `runner.mjs` as `runner` (its own copy for the chatty one), and a reset. */
function fixture(runner) {
  const base = buildRunRepo(CASES, 'node');
  if (runner === 'quick') return base;
  const dir = path.join(TMP, 'run-memory-chatty');
  rmSync(dir, { recursive: true, force: true });
  cpSync(base.dir, dir, { recursive: true });
  // runner.mjs is not prose: replacing it in the working tree does not stop a run.
  const reset = () => {
    git(dir, 'update-ref', `refs/heads/${BRANCH}`, base.start);
    git(dir, 'reset', '-q', '--hard');
    writeFileSync(path.join(dir, 'runner.mjs'), CHATTY);
    for (const ref of git(dir, 'for-each-ref', '--format=%(refname)', `refs/tags/${BRANCH}/`, 'refs/tune-logs/').split('\n').filter(Boolean)) {
      git(dir, 'update-ref', '-d', ref);
    }
    rmSync(path.join(dir, '.git', 'tune', NAME, 'runs'), { recursive: true, force: true });
  };
  return { dir, reset, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `argv` with the RSS preload; returns its peak RSS (MB) and wall time (ms). */
function peakOf(argv, cwd) {
  const rssFile = path.join(TMP, `run-memory-rss-${process.pid}.json`);
  rmSync(rssFile, { force: true });
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', path.join(ROOT, 'bench/lib/rss.mjs'), ...argv], {
    cwd, env: { ...process.env, ...ENV, BENCH_RSS_FILE: rssFile }, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status}\n${String(r.stderr).slice(-2000)}`);
  const mb = JSON.parse(readFileSync(rssFile, 'utf8')).maxRssMb;
  rmSync(rssFile, { force: true });
  return { mb, ms };
}

export async function runMemoryScenario({ few = 3, log = () => {}, alone = false } = {}) {
  const loadAtStart = os.loadavg()[0].toFixed(1);
  const raw = {};
  const rows = [];
  const targets = [];
  for (const runner of ['quick', 'chatty']) {
    const f = fixture(runner);
    const out = path.join(TMP, 'run-memory-pool');
    const samples = { tune: [], pool: [], tuneMs: [], poolMs: [] };
    for (let round = 0; round < few; round++) {
      // Interleaved, alternating which goes first.
      const order = round % 2 ? ['pool', 'tune'] : ['tune', 'pool'];
      for (const which of order) {
        if (which === 'tune') {
          f.reset();
          const { mb, ms } = peakOf([CLI, 'run', '--concurrency', String(CONCURRENCY)], f.dir);
          samples.tune.push(mb);
          samples.tuneMs.push(ms);
        } else {
          rmSync(out, { recursive: true, force: true });
          mkdirSync(out, { recursive: true });
          const { mb, ms } = peakOf([path.join(ROOT, 'bench/lib/spawn-pool.mjs'), String(CASES), String(CONCURRENCY), out, process.execPath, 'runner.mjs'], f.dir);
          samples.pool.push(mb);
          samples.poolMs.push(ms);
        }
      }
      log(`  ${runner} runner, round ${round + 1}: git tune run ${samples.tune.at(-1).toFixed(0)} MB, plain harness ${samples.pool.at(-1).toFixed(0)} MB`);
    }
    f.reset();
    f.cleanup?.();
    rmSync(out, { recursive: true, force: true });
    raw[runner] = samples;
    const peak = Math.max(...samples.tune);
    const ratios = samples.tune.map((x, i) => x / samples.pool[i]);
    const r = { value: median(samples.tune) / median(samples.pool), min: Math.min(...ratios), max: Math.max(...ratios) };
    const label = runner === 'quick' ? 'a runner that answers at once' : 'a runner printing 64 KB + 16 KB and a 64 KB transcript per case';
    targets.push({
      what: `peak RSS of \`git tune run\`, ${CASES} cases at concurrency ${CONCURRENCY}, ${label} (highest of ${few})`,
      ratio: peak, spread: null, cpu: null, limit: TARGET_MB, met: peak < TARGET_MB, unit: 'MB',
    });
    const fmt = (xs) => `${median(xs).toFixed(0)} MB [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`;
    rows.push(`| ${label} | ${fmt(samples.pool)} | ${fmt(samples.tune)} | ${r.value.toFixed(2)}× [${r.min.toFixed(2)}–${r.max.toFixed(2)}] |`);
  }
  const when = alone
    ? `\n\nThis section alone was measured by \`--only run-memory\` on ${new Date().toISOString().slice(0, 10)} (load average ${loadAtStart} at its start, ${os.loadavg()[0].toFixed(1)} at its end); the other sections are from the whole run described at the top.`
    : '';
  const section = `## Memory during a run

The peak resident memory of the \`git tune run\` process itself (\`process.resourceUsage().maxRSS\` at its exit; its runners and git children are other processes and are not counted) during a run of ${CASES} cases at concurrency ${CONCURRENCY}, against a plain Node harness (bench/lib/spawn-pool.mjs) that starts the same ${CASES} runner processes ${CONCURRENCY} at a time and writes their stdout and stderr to files, with no git, measured the same way in the same rounds (wall times are in bench/results.json; the run overhead section above is where time is compared). Two runners: one that answers at once and prints nothing, and one that prints 64 KB of JSON events to stdout and 16 KB to stderr and writes a 64 KB transcript per case (72 MB of logs for the run, all kept in the logs ref). Median [min–max] of ${few} rounds; the target is on the highest. \`npm run bench -- --only run-memory\` (or \`node bench/run-memory.mjs\`) runs this scenario alone, and exits 1 when a peak is at or over ${TARGET_MB} MB.

| runner | plain harness | git tune run | ratio |
| --- | ---: | ---: | ---: |
${rows.join('\n')}

What keeps it flat: each case's output streams to files (capped at 1 MiB, only the last 8 KB of stderr held, to read an out-of-memory death), and the logs commit hands the files to \`git hash-object -w --stdin-paths\`, so git reads and stores them itself and they never sit in git-tune's memory together. Before that, the chatty run peaked at 283 MB (one run, measured the same way): the logs commit read every case's stdout, stderr and transcript into memory, copied each, and built one pack of them all.${when}`;
  return { section, targets, raw };
}

/** Puts this scenario's section and target rows into BENCHMARKS.md (and its samples into bench/results.json) in place. */
export function spliceInto(markdown, section, targets, fmtTarget) {
  let md = markdown;
  const heading = '## Memory during a run';
  const at = md.indexOf(heading);
  if (at >= 0) {
    const next = md.indexOf('\n## ', at + heading.length);
    md = `${md.slice(0, at)}${section}${next >= 0 ? md.slice(next) : '\n'}`;
  } else md = `${md.trimEnd()}\n\n${section}\n`;
  for (const t of targets) {
    const row = fmtTarget(t);
    const prefix = `| ${t.what.split(',')[0]},`;
    const lines = md.split('\n');
    const same = lines.findIndex((l) => l.startsWith(prefix) && l.includes(t.what.split(', ').slice(-1)[0].split(' (')[0]));
    if (same >= 0) lines[same] = row;
    else {
      const start = lines.indexOf('## Targets');
      let last = start;
      for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) if (lines[i].startsWith('| ')) last = i;
      lines.splice(last + 1, 0, row);
    }
    md = lines.join('\n');
  }
  return md;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(TMP, { recursive: true });
  const { targets, raw } = await runMemoryScenario({ log: (t) => process.stderr.write(`${t}\n`) });
  process.stdout.write(`${JSON.stringify({ targets, raw }, null, 2)}\n`);
  if (!targets.every((t) => t.met)) process.exitCode = 1;
}
