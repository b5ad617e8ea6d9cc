// The long-history scenario of `npm run bench` (issue 30): a tuning imported
// from a `finetune/` folder of ~1,500 and ~10,000 steps, its `.tune/` tree
// checked out (one folder per run), then the start of the commands a user
// types most, `next`, `status` and `run` (nothing is due: its start, up to the
// refusal, exit 3), each against native `git log --format=%B` of the branch
// plus a bare `node -e 0`, measured in the same rounds. What it guards: no
// command's start does work that grows with the history.
// `node bench/long-history.mjs [--quick]` runs it alone (after a build);
// `npm run bench -- --only long-history` also updates BENCHMARKS.md.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, ENV, ROOT, TMP, git } from './lib/fixtures.mjs';
import { writeFinetuneFolder } from './lib/folder.mjs';
import { fmtCpu, fmtMs, fmtRatio, measure, ratioToSum, stats } from './lib/timing.mjs';

const TUNING = 'finetune';
const BRANCH = `tune/${TUNING}`;
/** Cases of the folder: batches of 5 new + 2 recheck, ~13 steps a batch. */
const SIZES = [{ cases: 600, label: '1.5k' }, { cases: 3845, label: '10k' }];
/** The issue's targets, on the wall-time ratio to (git log + node floor). */
const LIMITS = { warm: { '1.5k': 1.0, '10k': 1.2 }, cold: { '1.5k': 2.0 }, rssMb: 150 };

/** What shapes the repositories: the folder's writer, the importer's code, and this version of `imported` below (bump it on a change). */
const KEY = (() => {
  const h = createHash('sha1').update('imported v1');
  for (const f of ['bench/lib/folder.mjs']) h.update(readFileSync(path.join(ROOT, f)));
  const imp = path.join(ROOT, 'dist/core/import');
  for (const f of readdirSync(imp).filter((n) => n.endsWith('.js')).sort()) h.update(readFileSync(path.join(imp, f)));
  return h.digest('hex').slice(0, 10);
})();

/** The project repository with the imported tuning checked out, built once per folder shape and importer. */
function imported(cases, log) {
  const root = path.join(TMP, `long-${cases}-${KEY}`);
  const dir = path.join(root, 'project');
  if (existsSync(path.join(dir, '.git', 'bench-complete'))) return dir;
  rmSync(root, { recursive: true, force: true });
  const folder = path.join(root, 'folder', 'finetune');
  mkdirSync(folder, { recursive: true });
  writeFinetuneFolder(folder, { cases, size: 5, recheck: 2 });
  mkdirSync(path.join(dir, 'agents'), { recursive: true });
  writeFileSync(path.join(dir, 'agents', 'prompt.md'), 'Answer the customer politely.\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'project');
  log(`  importing ${cases} cases …`);
  execFileSync(process.execPath, [CLI, 'import', folder, '--prose', 'agents/**/*.md', '--runner', 'node agent.mjs'],
    { cwd: dir, env: { ...process.env, ...ENV }, stdio: ['ignore', 'ignore', 'pipe'] });
  writeFileSync(path.join(dir, '.git', 'bench-complete'), new Date().toISOString());
  return dir;
}

const cli = (dir, argv, extra = {}) => ({ argv: [process.execPath, CLI, ...argv], cwd: dir, env: ENV, ...extra });
const dropCache = (dir) => () => rmSync(path.join(dir, '.git', 'tune', TUNING, 'cache'), { recursive: true, force: true });

/** Peak resident memory (MB) of one call, the highest of `n`. */
function peakRss(dir, argv, prepare, n, expectExit = 0) {
  const file = path.join(TMP, `rss-long-${process.pid}.json`);
  let peak = 0;
  for (let i = 0; i < n; i++) {
    prepare?.();
    const r = spawnSync(process.execPath, ['--import', path.join(ROOT, 'bench/lib/rss.mjs'), CLI, ...argv], {
      cwd: dir, env: { ...process.env, ...ENV, BENCH_RSS_FILE: file }, encoding: 'utf8',
    });
    if (r.status !== expectExit) throw new Error(`${argv.join(' ')}: exit ${r.status}\n${r.stderr}`);
    peak = Math.max(peak, JSON.parse(readFileSync(file, 'utf8')).maxRssMb);
  }
  rmSync(file, { force: true });
  return peak;
}

export function longHistoryScenario({ rounds, few, log = () => {} }) {
  const targets = [];
  const rows = [];
  const raw = {};
  let strace = null;
  const loadAtStart = os.loadavg()[0].toFixed(1);
  for (const { cases, label } of SIZES) {
    const dir = imported(cases, log);
    const steps = Number(git(dir, 'rev-list', '--count', BRANCH, '^main').trim());
    const runs = readdirSync(path.join(dir, '.tune', TUNING, 'runs')).length;
    log(`  ${steps} steps, ${runs} run folders checked out: next, status, run …`);
    const s = measure([
      { label: 'next, warm', ...cli(dir, ['next', '--json']) },
      { label: 'next, no cache', ...cli(dir, ['next', '--json']), prepare: dropCache(dir) },
      { label: 'status, warm', ...cli(dir, ['status']) },
      { label: 'run, warm', ...cli(dir, ['run'], { expectExit: 3 }) },
      { label: 'git log', argv: ['git', 'log', '--format=%B', BRANCH], cwd: dir, env: ENV },
      { label: 'node -e 0', argv: [process.execPath, '-e', '0'], cwd: dir, env: ENV },
    ], rounds);
    const base = (l, k = 'wall') => ratioToSum(s[l][k], s['git log'][k], s['node -e 0'][k]);
    const rss = {
      nextNoCache: peakRss(dir, ['next', '--json'], dropCache(dir), few),
      nextWarm: peakRss(dir, ['next', '--json'], null, few),
      statusNoCache: peakRss(dir, ['status'], dropCache(dir), few),
      run: peakRss(dir, ['run'], null, few, 3),
    };
    raw[label] = { steps, runs, samples: s, rss };
    const at = `${steps.toLocaleString('en')} imported steps`;
    const t = (what, l, limit) => {
      const w = base(l);
      targets.push({ what: `${what} on ${at} ÷ (git log + node floor)`, ratio: w.value, spread: [w.min, w.max], cpu: base(l, 'cpu').value, limit, met: w.value <= limit });
    };
    t('warm `next`', 'next, warm', LIMITS.warm[label]);
    if (LIMITS.cold[label]) t('`next`, no cache,', 'next, no cache', LIMITS.cold[label]);
    const peak = Math.max(...Object.values(rss));
    targets.push({ what: `peak RSS of \`next\`, \`status\` and \`run\`'s start on ${at}`, ratio: peak, spread: null, cpu: null, limit: LIMITS.rssMb, met: peak < LIMITS.rssMb, unit: 'MB' });
    const cell = (l) => `${fmtMs(stats(s[l].wall))} · ${fmtRatio(base(l))} (CPU ${base(l, 'cpu').value.toFixed(2)}×)`;
    rows.push([`${steps.toLocaleString('en')} (${runs} runs)`, fmtMs(stats(s['git log'].wall)), fmtMs(stats(s['node -e 0'].wall)),
      cell('next, warm'), cell('next, no cache'), cell('status, warm'), cell('run, warm'),
      `${rss.nextNoCache.toFixed(0)} / ${rss.statusNoCache.toFixed(0)} / ${rss.run.toFixed(0)} MB`]);
    if (label === '1.5k') strace = directoryReads(dir);
  }
  const section = `${HEADING}: a command's start

A \`finetune/\` folder (bench/lib/folder.mjs: batches of 5 new + 2 recheck, each a no-memory run graded MIXED, a confirming run, the candidate, a with-memory run, the checkpoint) imported with \`git tune import\`, its \`.tune/\` tree checked out with one folder per run. Each call a new process; *warm*: the fold cache holds the tip; *no cache*: \`.git/tune/<name>/cache\` removed before the call. \`run\` has nothing due here (every case used): its start, up to the refusal (exit 3). Each cell: wall time, then the ratio to \`git log --format=%B tune/finetune\` plus a bare \`node -e 0\` in the same rounds (the CPU-time ratio beside it). Peak RSS: \`process.resourceUsage().maxRSS\` at exit, the highest of ${few} calls each (next with no cache / status with no cache / run).

${table(['step commits', 'git log', 'node -e 0', 'next, warm', 'next, no cache', 'status, warm', 'run (its start)', 'peak RSS'], rows)}

Load average (1 min) of the ${os.cpus().length} cores: ${loadAtStart} at the start, ${os.loadavg()[0].toFixed(1)} at the end; other work on the machine stretches wall times and their spreads (the node floor's own spread shows how much), CPU-time ratios less.
${strace ? `\nDirectory reads of one warm \`next\` at 1.5k steps (\`strace -f -c\`): ${strace.getdents} getdents64 calls, ${strace.opens} directory opens under \`.tune/${TUNING}/runs/\` (before the temp-file ledgers: 1,296 and 318).` : ''}`;
  return { section, targets, raw };
}

/** strace's count of getdents64 calls and of opens under the run folders, when strace is installed. */
function directoryReads(dir) {
  const out = path.join(TMP, `strace-${process.pid}.txt`);
  const r = spawnSync('strace', ['-f', '-e', 'trace=getdents64,openat', '-o', out, process.execPath, CLI, 'next', '--json'], { cwd: dir, env: { ...process.env, ...ENV } });
  if (r.error || r.status !== 0) return null;
  const lines = readFileSync(out, 'utf8').split('\n');
  rmSync(out, { force: true });
  return { getdents: lines.filter((l) => l.includes('getdents64(')).length, opens: lines.filter((l) => l.includes('openat(') && l.includes(`/.tune/${TUNING}/runs/`)).length };
}

const HEADING = '## Long imported histories';

/** BENCHMARKS.md with this scenario's section and target rows replaced (or added). */
export function spliceSection(markdown, section, targets, fmtTarget) {
  let md = markdown;
  const at = md.indexOf(HEADING);
  if (at >= 0) {
    const next = md.indexOf('\n## ', at + HEADING.length);
    md = `${md.slice(0, at)}${section}${next >= 0 ? `\n${md.slice(next)}` : '\n'}`;
  } else md = `${md.trimEnd()}\n\n${section}\n`;
  const lines = md.split('\n');
  for (const t of targets) {
    const row = fmtTarget(t);
    const same = lines.findIndex((l) => l.startsWith(`| ${t.what} |`));
    if (same >= 0) lines[same] = row;
    else {
      const start = lines.indexOf('## Targets');
      let last = start;
      for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) if (lines[i].startsWith('| ')) last = i;
      lines.splice(last + 1, 0, row);
    }
  }
  return lines.join('\n');
}

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(CLI)) throw new Error('build first: npm run build');
  mkdirSync(TMP, { recursive: true });
  const quick = process.argv.includes('--quick');
  const { section, targets } = longHistoryScenario({ rounds: quick ? 5 : 11, few: quick ? 1 : 3, log: (t) => process.stderr.write(`${t}\n`) });
  console.log(section);
  for (const t of targets) {
    const measured = t.unit ? `${t.ratio.toFixed(0)} ${t.unit}` : `${t.ratio.toFixed(2)}× [${t.spread[0].toFixed(2)}–${t.spread[1].toFixed(2)}] (CPU ${t.cpu.toFixed(2)}×)`;
    console.log(`- ${t.what}: ${measured} (limit ${t.unit ? `< ${t.limit} ${t.unit}` : `≤ ${t.limit}×`}) ${t.met ? 'met' : 'NOT met'}`);
  }
  process.exitCode = targets.every((t) => t.met) ? 0 : 1;
}
