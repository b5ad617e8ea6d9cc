// `npm run bench [-- --quick] [-- --no-build] [-- --only run-memory|long-history|noise]`: git-tune's benchmarks.
// `--only <scenario>` runs that scenario alone and updates its section and
// target rows in BENCHMARKS.md (and its samples in bench/results.json) in place
// (`noise`: the decisions on a noisy agent, bench/noise.mjs).
// Every figure is a ratio of commands measured in the same run, interleaved
// round by round (bench/lib/timing.mjs), against native git and a bare Node
// start; absolute times are shown beside them only to read the ratios.
// Writes BENCHMARKS.md and bench/results.json.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BRANCH, CLI, ENV, NAME, ROOT, TMP, buildHistory, buildRunRepo, git, packMb, stepsOf, tune } from './lib/fixtures.mjs';
import { importScenario } from './import.mjs';
import { logsSizeScenario } from './logs-size.mjs';
import { longHistoryScenario, spliceSection } from './long-history.mjs';
import { runMemoryScenario, spliceInto } from './run-memory.mjs';
import { noiseScenario, spliceNoise } from './noise.mjs';
import { cpuMeasured, fmtCpu, fmtMs, fmtRatio, measure, median, ratio, ratioToSum, stats } from './lib/timing.mjs';

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : null;
const SCENARIOS = ['run-memory', 'long-history', 'noise'];
if (ONLY !== null && !SCENARIOS.includes(ONLY)) {
  process.stderr.write(`bench: --only takes one of: ${SCENARIOS.join(', ')}\n`);
  process.exit(2);
}
const ROUNDS = QUICK ? 3 : 9; // fast commands
const FEW = QUICK ? 2 : 3; // slow ones (isomorphic-git on long histories, 500-case runs)
const started = Date.now();
const log = (text) => process.stderr.write(`${text}\n`);

if (!args.includes('--no-build')) {
  log('building dist/ …');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
mkdirSync(TMP, { recursive: true });

const cli = (cwd, argv, extra = {}) => ({ argv: [process.execPath, CLI, ...argv], cwd, env: ENV, ...extra });
const floor = (cwd) => ({ label: 'node -e 0', argv: [process.execPath, '-e', '0'], cwd, env: ENV });
const gitLog = (cwd) => ({ label: 'git log', argv: ['git', 'log', '--format=%B', BRANCH], cwd, env: ENV });
const iso = { ...ENV, GIT_TUNE_BACKEND: 'iso' };
const dropCache = (dir) => () => rmSync(path.join(dir, '.git', 'tune', NAME, 'cache'), { recursive: true, force: true });
/** The cache one step behind the tip, as after any step: the branch moved back one commit, `next` run, moved forward again. */
const oneStepBehind = (dir) => {
  const tip = git(dir, 'rev-parse', BRANCH).trim();
  const parent = git(dir, 'rev-parse', `${BRANCH}~1`).trim();
  return () => {
    dropCache(dir)();
    git(dir, 'update-ref', `refs/heads/${BRANCH}`, parent, tip);
    try {
      tune(dir, 'next');
    } finally {
      git(dir, 'update-ref', `refs/heads/${BRANCH}`, tip, parent);
    }
  };
};
const W = (s, label) => s[label].wall;
const C = (s, label) => s[label].cpu;

const results = { quick: QUICK, rounds: ROUNDS, fewRounds: FEW, cpuMeasured, machine: machine(), scenarios: {} };
const targets = [];
const sections = [];

function machine() {
  return {
    cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memGb: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}`,
    node: process.version, git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(), loadAtStart: os.loadavg().map((x) => x.toFixed(2)).join(' '),
  };
}

/** A target: the wall-time ratio decides; the CPU-time ratio is shown beside it. */
function target(what, wall, cpu, limit) {
  targets.push({ what, ratio: wall.value, spread: [wall.min, wall.max], cpu: cpu?.value ?? null, limit, met: wall.value <= limit });
}

const targetCells = (t) => [
  t.what,
  t.unit ? `${t.ratio.toFixed(0)} ${t.unit}` : `${t.ratio.toFixed(2)}× [${t.spread[0].toFixed(2)}–${t.spread[1].toFixed(2)}]`,
  t.cpu === null || !Number.isFinite(t.cpu) ? '' : `${t.cpu.toFixed(2)}×`,
  t.unit ? `< ${t.limit} ${t.unit}` : `≤ ${t.limit}×`, t.met ? 'yes' : '**no**',
];
const table = (head, rows) => [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const cpuNote = cpuMeasured
  ? 'CPU = user + system time of the process and its children (/usr/bin/time), median.'
  : 'CPU time not measured (no /usr/bin/time).';

// ---------------------------------------------------------------- one scenario alone
if (ONLY === 'long-history') {
  log('long imported histories: next, status and run\'s start …');
  const { section, targets: found, raw } = longHistoryScenario({ rounds: ROUNDS, few: FEW, log });
  const mdFile = path.join(ROOT, 'BENCHMARKS.md');
  writeFileSync(mdFile, spliceSection(readFileSync(mdFile, 'utf8'), section, found, (t) => `| ${targetCells(t).join(' | ')} |`));
  const jsonFile = path.join(ROOT, 'bench', 'results.json');
  const all = JSON.parse(readFileSync(jsonFile, 'utf8'));
  all.scenarios.longHistory = { machine: results.machine, rounds: ROUNDS, ...raw };
  all.targets = [...all.targets.filter((t) => !found.some((f) => f.what === t.what)), ...found];
  writeFileSync(jsonFile, `${JSON.stringify(all, null, 1)}\n`);
  for (const t of found) log(`  ${t.met ? 'met' : 'NOT MET'}: ${t.what}: ${t.unit ? `${t.ratio.toFixed(0)} ${t.unit}` : `${t.ratio.toFixed(2)}×`}`);
  log(`updated this scenario in BENCHMARKS.md and bench/results.json in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(found.every((t) => t.met) ? 0 : 1);
}

if (ONLY === 'run-memory') {
  log('peak memory of a run: 500 cases at concurrency 16 …');
  const { section, targets: found, raw } = await runMemoryScenario({ few: FEW, log, alone: true });
  const mdFile = path.join(ROOT, 'BENCHMARKS.md');
  writeFileSync(mdFile, spliceInto(readFileSync(mdFile, 'utf8'), section, found, (t) => `| ${targetCells(t).join(' | ')} |`));
  const jsonFile = path.join(ROOT, 'bench', 'results.json');
  const all = JSON.parse(readFileSync(jsonFile, 'utf8'));
  all.scenarios.runMemory = { machine: results.machine, rounds: FEW, ...raw };
  all.targets = [...all.targets.filter((t) => !found.some((f) => f.what === t.what)), ...found];
  writeFileSync(jsonFile, `${JSON.stringify(all, null, 1)}\n`);
  for (const t of found) log(`  ${t.met ? 'met' : 'NOT MET'}: ${t.what}: ${t.ratio.toFixed(0)} MB (< ${t.limit} MB)`);
  log(`updated this scenario in BENCHMARKS.md and bench/results.json in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(found.every((t) => t.met) ? 0 : 1);
}

if (ONLY === 'noise') {
  log('decisions on a noisy agent: auto to its end on the slip agent …');
  const { section, targets: found, raw } = await noiseScenario({ seeds: QUICK ? [1, 2] : [1, 2, 3, 4, 5, 6], log, tmp: TMP });
  const mdFile = path.join(ROOT, 'BENCHMARKS.md');
  writeFileSync(mdFile, spliceNoise(readFileSync(mdFile, 'utf8'), section));
  const jsonFile = path.join(ROOT, 'bench', 'results.json');
  const all = JSON.parse(readFileSync(jsonFile, 'utf8'));
  all.scenarios.noise = { machine: results.machine, ...raw };
  writeFileSync(jsonFile, `${JSON.stringify(all, null, 1)}\n`);
  for (const t of found) log(`  ${t.met ? 'met' : 'NOT MET'}: ${t.what}`);
  log(`updated this scenario in BENCHMARKS.md and bench/results.json in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(found.every((t) => t.met) ? 0 : 1);
}

// ---------------------------------------------------------------- fixtures
log('fixtures (built once, kept in .bench-tmp/) …');
const SIZES = [100, 1000, 10000];
const histories = {};
for (const n of SIZES) {
  const t = Date.now();
  histories[n] = await buildHistory(n);
  log(`  history of ~${n} steps: ${stepsOf(histories[n])} step commits (${((Date.now() - t) / 1000).toFixed(1)} s)`);
}
let t0 = Date.now();
const big = await buildHistory(1000, { big: true });
log(`  the same tuning in a repository with a ${packMb(big).toFixed(0)} MB pack (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
t0 = Date.now();
const runNode = buildRunRepo(500, 'node');
const runSh = buildRunRepo(500, 'sh');
log(`  500-case runs (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

// ---------------------------------------------------------------- next
log('next on long histories …');
{
  const rows = [];
  const raw = {};
  for (const n of SIZES) {
    const dir = histories[n];
    const s = measure([
      { label: 'next, no cache', ...cli(dir, ['next']), prepare: dropCache(dir) },
      { label: 'next, one step behind', ...cli(dir, ['next']), prepare: oneStepBehind(dir) },
      { label: 'next, warm', ...cli(dir, ['next']) },
      { label: 'next, no cache, iso', ...cli(dir, ['next'], { env: iso }), prepare: dropCache(dir), rounds: n >= 10000 ? FEW : ROUNDS },
      gitLog(dir),
      floor(dir),
    ], ROUNDS);
    raw[n] = s;
    const base = (label, of = W) => ratioToSum(of(s, label), of(s, 'git log'), of(s, 'node -e 0'));
    const limit = n === 1000 ? 2 : n === 10000 ? 3 : null;
    if (limit) {
      target(`\`next\` on ${n.toLocaleString('en')} commits, no cache ÷ (git log + node floor)`, base('next, no cache'), base('next, no cache', C), limit);
      target(`\`next\` on ${n.toLocaleString('en')} commits, cache one step behind ÷ (git log + node floor)`, base('next, one step behind'), base('next, one step behind', C), limit);
    }
    rows.push([
      stepsOf(dir).toLocaleString('en'), fmtMs(stats(W(s, 'git log'))), fmtMs(stats(W(s, 'node -e 0'))),
      ...['next, no cache', 'next, one step behind', 'next, warm', 'next, no cache, iso'].flatMap((l) => [fmtMs(stats(W(s, l))), `${fmtRatio(base(l))} (CPU ${fmtRatio(base(l, C)).split(' ')[0]})`]),
    ]);
  }
  results.scenarios.next = raw;
  sections.push(`## \`git tune next\` on long histories

A new process each call. *No cache*: \`.git/tune/${NAME}/cache\` removed before each call (the whole history is read and folded). *One step behind*: the cache holds the tip's parent, as after any step (one commit read and folded on top). *Warm*: the cache holds the tip.
Each cell: wall time, then the ratio to native \`git log --format=%B ${BRANCH}\` plus a bare \`node -e 0\` (the floor), measured in the same rounds, and the same ratio in CPU time.
The last pair is the no-cache call on isomorphic-git (\`GIT_TUNE_BACKEND=iso\`): how every command read history before the native backend and the cache.

${table(['step commits', 'git log', 'node -e 0', 'no cache', '÷ (log + floor)', 'one step behind', '÷ (log + floor)', 'warm', '÷ (log + floor)', 'no cache, iso', '÷ (log + floor)'], rows)}`);
}

// ---------------------------------------------------------------- the floor without extra CA certificates
if (process.env.NODE_EXTRA_CA_CERTS) {
  // Node reads NODE_EXTRA_CA_CERTS at every start (the floor included): on this machine it is
  // most of what `node -e 0` does, so the ratios above have a heavy floor. The same calls without it.
  log('next without NODE_EXTRA_CA_CERTS …');
  const bare = { NODE_EXTRA_CA_CERTS: undefined };
  const rows = [];
  const raw = {};
  for (const n of [1000, 10000]) {
    const dir = histories[n];
    const s = measure([
      { label: 'next, no cache', ...cli(dir, ['next'], { env: { ...ENV, ...bare } }), prepare: dropCache(dir) },
      { ...gitLog(dir), env: { ...ENV, ...bare } },
      { ...floor(dir), env: { ...ENV, ...bare } },
      { ...floor(dir), label: 'node -e 0, with the certificates' },
    ], ROUNDS);
    raw[n] = s;
    const r = ratioToSum(W(s, 'next, no cache'), W(s, 'git log'), W(s, 'node -e 0'));
    const rc = ratioToSum(C(s, 'next, no cache'), C(s, 'git log'), C(s, 'node -e 0'));
    rows.push([
      stepsOf(dir).toLocaleString('en'), fmtMs(stats(W(s, 'git log'))), fmtMs(stats(W(s, 'node -e 0'))), fmtMs(stats(W(s, 'node -e 0, with the certificates'))),
      fmtMs(stats(W(s, 'next, no cache'))), `${fmtRatio(r)} (CPU ${fmtRatio(rc).split(' ')[0]})`,
    ]);
  }
  results.scenarios.nextWithoutExtraCerts = raw;
  sections.push(`## \`next\` with a light floor (no NODE_EXTRA_CA_CERTS)

This machine sets \`NODE_EXTRA_CA_CERTS\`, and Node parses those certificates at every start: most of \`node -e 0\`'s time here (callgrind: 83% of its instructions). Every CLI call pays it too, so it is part of both sides of the ratios above. Here the same no-cache calls, git log and floor run without it, in the same rounds (the floor with it beside, for scale): the ratio a machine without extra certificates would see.

${table(['step commits', 'git log', 'node -e 0', 'node -e 0 with the certificates', 'next, no cache', '÷ (log + floor)'], rows)}`);
}

// ---------------------------------------------------------------- warm calls do not grow with history
log('warm calls at 100, 1,000 and 10,000 steps …');
{
  const s = measure([...SIZES.map((n) => ({ label: `next, warm, ${n}`, ...cli(histories[n], ['next']) })), floor(histories[100])], ROUNDS * 2);
  results.scenarios.warm = s;
  target('warm `next`: 10,000 commits ÷ 100 commits', ratio(W(s, 'next, warm, 10000'), W(s, 'next, warm, 100')), ratio(C(s, 'next, warm, 10000'), C(s, 'next, warm, 100')), 1.1);
  sections.push(`## Warm calls cost the same on any history

The cache (\`.git/tune/<name>/cache/history.bin\`) is keyed by the branch tip, the blob ids of config.yaml and selection.json, and the build of the fold's code; \`next\`'s answer is kept per tip beside it (\`memo.json\`), so a warm call reads that answer alone (\`dist/bin/next.cjs\`, before the program loads), and neither the state nor the history.

${table(['history', 'next, warm', 'CPU', '÷ warm at 100', 'CPU ÷'], SIZES.map((n) => [
    `${stepsOf(histories[n]).toLocaleString('en')} steps`, fmtMs(stats(W(s, `next, warm, ${n}`))), fmtCpu(C(s, `next, warm, ${n}`)),
    fmtRatio(ratio(W(s, `next, warm, ${n}`), W(s, 'next, warm, 100'))), fmtRatio(ratio(C(s, `next, warm, ${n}`), C(s, 'next, warm, 100'))).split(' ')[0],
  ]))}

Node floor in the same rounds: ${fmtMs(stats(W(s, 'node -e 0')))}, CPU ${fmtCpu(C(s, 'node -e 0'))}.`);
}

// ---------------------------------------------------------------- status and batch --dry-run
log('status --json and batch --dry-run --json …');
{
  const rows = [];
  const raw = {};
  for (const n of SIZES) {
    const dir = histories[n];
    const s = measure([
      { label: 'status, no cache', ...cli(dir, ['status', '--json']), prepare: dropCache(dir) },
      { label: 'status, warm', ...cli(dir, ['status', '--json']) },
      { label: 'batch --dry-run, no cache', ...cli(dir, ['batch', '--dry-run', '--json']), prepare: dropCache(dir) },
      { label: 'batch --dry-run, warm', ...cli(dir, ['batch', '--dry-run', '--json']) },
      gitLog(dir),
      floor(dir),
    ], ROUNDS);
    raw[n] = s;
    const cell = (l) => [fmtMs(stats(W(s, l))), `${fmtRatio(ratioToSum(W(s, l), W(s, 'git log'), W(s, 'node -e 0')))} (CPU ${fmtRatio(ratioToSum(C(s, l), C(s, 'git log'), C(s, 'node -e 0'))).split(' ')[0]})`];
    rows.push([stepsOf(dir).toLocaleString('en'), ...cell('status, no cache'), ...cell('status, warm'), ...cell('batch --dry-run, no cache'), ...cell('batch --dry-run, warm')]);
  }
  results.scenarios.statusBatch = raw;
  sections.push(`## \`status --json\` and \`batch --dry-run --json\`

Same histories and baseline (git log + node floor, the same rounds). \`status\` renders every batch and run, so it reads the cached state; \`batch --dry-run\` plans the next batch from it.

${table(['step commits', 'status, no cache', '÷ base', 'status, warm', '÷ base', 'batch --dry-run, no cache', '÷ base', 'batch --dry-run, warm', '÷ base'], rows)}`);
}

// ---------------------------------------------------------------- start-up
log('start-up …');
{
  const dir = histories[100];
  // Before: --version answered by commander, after the program is built (what main.ts did until the fast path).
  const viaCommander = `const { main } = await import(${JSON.stringify(path.join(ROOT, 'dist/cli/program.js'))}); process.exitCode = await main(['node', 'git-tune', '--version']);`;
  const s = measure([
    { label: '--version', ...cli(dir, ['--version']) },
    { label: '--version via commander', argv: [process.execPath, '--input-type=module', '-e', viaCommander], cwd: dir, env: ENV },
    { label: '--help', ...cli(dir, ['--help']) },
    floor(dir),
  ], ROUNDS * 2);
  results.scenarios.startup = s;
  const v = ratio(W(s, '--version'), W(s, 'node -e 0'));
  const h = ratio(W(s, '--help'), W(s, 'node -e 0'));
  target('`--version` ÷ node floor', v, ratio(C(s, '--version'), C(s, 'node -e 0')), 1.5);
  sections.push(`## Start-up

\`--version\` answers before commander loads; \`--help\` loads commander and builds the program, but no command module, no git library, no zod.

${table(['command', 'time', 'CPU', '÷ node -e 0', 'CPU ÷'], [
    ['`git tune --version`', fmtMs(stats(W(s, '--version'))), fmtCpu(C(s, '--version')), fmtRatio(v), fmtRatio(ratio(C(s, '--version'), C(s, 'node -e 0'))).split(' ')[0]],
    ['`--version` through commander (before)', fmtMs(stats(W(s, '--version via commander'))), fmtCpu(C(s, '--version via commander')), fmtRatio(ratio(W(s, '--version via commander'), W(s, 'node -e 0'))), fmtRatio(ratio(C(s, '--version via commander'), C(s, 'node -e 0'))).split(' ')[0]],
    ['`git tune --help`', fmtMs(stats(W(s, '--help'))), fmtCpu(C(s, '--help')), fmtRatio(h), fmtRatio(ratio(C(s, '--help'), C(s, 'node -e 0'))).split(' ')[0]],
    ['`node -e 0`', fmtMs(stats(W(s, 'node -e 0'))), fmtCpu(C(s, 'node -e 0')), '1.00×', '1.00×'],
  ])}`);
}

// ---------------------------------------------------------------- run overhead
log('run overhead: 500 cases at concurrency 16 …');
{
  const rows = [];
  const raw = {};
  for (const [label, fixture, runner] of [['node runner.mjs', runNode, 'node runner.mjs'], ['sh runner.sh', runSh, 'sh runner.sh']]) {
    const out = path.join(TMP, 'xargs-out');
    const s = measure([
      { label: 'git tune run', ...cli(fixture.dir, ['run', '--concurrency', '16']), prepare: fixture.reset },
      {
        label: 'xargs -P 16',
        argv: ['sh', '-c', `seq 1 500 | xargs -P 16 -I{} ${runner} ${out}/{}.json`],
        cwd: fixture.dir, env: ENV,
        prepare: () => {
          rmSync(out, { recursive: true, force: true });
          mkdirSync(out, { recursive: true });
        },
      },
    ], FEW, { warmup: 0 });
    fixture.reset();
    raw[label] = s;
    const r = ratio(W(s, 'git tune run'), W(s, 'xargs -P 16'));
    const rc = ratio(C(s, 'git tune run'), C(s, 'xargs -P 16'));
    if (label.startsWith('node')) target('run of 500 cases (a Node runner that answers at once), concurrency 16 ÷ `xargs -P 16` of the same processes', r, rc, 1.3);
    const perCase = (median(W(s, 'git tune run')) - median(W(s, 'xargs -P 16'))) / 500;
    const perCaseCpu = (median(C(s, 'git tune run')) - median(C(s, 'xargs -P 16'))) / 500;
    rows.push([`\`${label}\``, fmtMs(stats(W(s, 'xargs -P 16'))), fmtMs(stats(W(s, 'git tune run'))), fmtRatio(r), fmtRatio(rc).split(' ')[0], `${perCase.toFixed(1)} ms`, `${perCaseCpu.toFixed(1)} ms`]);
  }
  const commitTimes = {};
  for (const backend of ['native', 'iso']) {
    const samples = [];
    for (let i = 0; i < FEW; i++) {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'bench/lib/ops.mjs'), backend, 'run-commit', runNode.dir], { encoding: 'utf8', env: { ...process.env, ...ENV } });
      if (r.status !== 0) throw new Error(r.stderr);
      samples.push(JSON.parse(r.stdout).ms);
    }
    commitTimes[backend] = samples;
  }
  runNode.reset();
  raw.runCommit = commitTimes;
  results.scenarios.run = raw;
  sections.push(`## Run overhead

500 cases whose runner answers at once, concurrency 16, against \`seq 1 500 | xargs -P 16 -I{} <runner> out/{}.json\`: the same processes with the same parallelism and nothing else.
\`git tune run\` is its whole life: start-up, reading the tuning, the run-start commit, per case a case file, memory and workspace folders, captured logs and a stored result, then the logs commit and the tagged run commit.

${table(['runner', 'xargs -P 16', 'git tune run', 'ratio', 'CPU ratio', 'overhead per case', 'CPU per case'], rows)}

Writing what a 500-case run records at its end (the logs commit of 1,500 files and the run commit, each moved by compare-and-swap), in a fresh process: native ${fmtMs(stats(commitTimes.native))}, isomorphic-git ${fmtMs(stats(commitTimes.iso))} (${fmtRatio(ratio(commitTimes.iso, commitTimes.native))}).`);
}

// ---------------------------------------------------------------- long imported histories
log('long imported histories (1.5k and 10k steps): next, status and run\'s start …');
{
  const { section, targets: found, raw } = longHistoryScenario({ rounds: ROUNDS, few: FEW, log });
  targets.push(...found);
  results.scenarios.longHistory = raw;
  sections.push(section);
}

// ---------------------------------------------------------------- memory during a run
log('peak memory of a run: 500 cases at concurrency 16 …');
{
  const { section, targets: found, raw } = await runMemoryScenario({ few: FEW, log });
  targets.push(...found);
  results.scenarios.runMemory = raw;
  sections.push(section);
}

// ---------------------------------------------------------------- import
log('import of a ~1,500-step folder …');
{
  const { section, targets: found, raw } = importScenario({ rounds: ROUNDS, few: FEW, log });
  targets.push(...found);
  results.scenarios.import = raw;
  sections.push(section);
}

// ---------------------------------------------------------------- the logs ref's size
log('the logs ref of a 24-case, 20-run tuning with transcripts …');
{
  const { section, targets: found, raw } = await logsSizeScenario({ log });
  targets.push(...found);
  results.scenarios.logsSize = raw;
  sections.push(section);
}

// ---------------------------------------------------------------- decisions on a noisy agent
log('decisions on a noisy agent: auto to its end on the slip agent …');
{
  // Its targets are counts and shares, not time ratios: listed in its own section.
  const { section, raw } = await noiseScenario({ seeds: QUICK ? [1, 2] : [1, 2, 3, 4, 5, 6], log, tmp: TMP });
  results.scenarios.noise = raw;
  sections.push(section.trimEnd());
}

// ---------------------------------------------------------------- large repository
log('a repository with a 200 MB pack …');
{
  const small = histories[1000];
  const s = measure([
    { label: 'next, small repo', ...cli(small, ['next']), prepare: dropCache(small) },
    { label: 'next, big repo', ...cli(big, ['next']), prepare: dropCache(big) },
    { label: 'status, small repo', ...cli(small, ['status', '--json']), prepare: dropCache(small) },
    { label: 'status, big repo', ...cli(big, ['status', '--json']), prepare: dropCache(big) },
    { label: 'next, small repo, iso', ...cli(small, ['next'], { env: iso }), prepare: dropCache(small), rounds: FEW },
    { label: 'next, big repo, iso', ...cli(big, ['next'], { env: iso }), prepare: dropCache(big), rounds: FEW },
  ], ROUNDS);
  results.scenarios.bigRepo = s;
  const pair = (a, b) => [ratio(W(s, a), W(s, b)), ratio(C(s, a), C(s, b))];
  const [n, nc] = pair('next, big repo', 'next, small repo');
  const [st, stc] = pair('status, big repo', 'status, small repo');
  const [ni, nic] = pair('next, big repo, iso', 'next, small repo, iso');
  target('`next` (no cache) in a repo with a 200 MB pack ÷ the same tuning in a small repo', n, nc, 1.5);
  target('`status --json` (no cache), same comparison', st, stc, 1.5);
  const row = (l, a, b, r, rc) => [l, fmtMs(stats(W(s, a))), fmtMs(stats(W(s, b))), fmtRatio(r), fmtRatio(rc).split(' ')[0]];
  sections.push(`## A repository with a ${packMb(big).toFixed(0)} MB pack

The same ${stepsOf(big).toLocaleString('en')}-step tuning, branched from a project of 200 incompressible 1 MB files, everything packed by \`git gc\`; against the tuning in a small repository. No cache, so the whole history is read.

${table(['command', 'small repo', 'big repo', 'big ÷ small', 'CPU ÷'], [
    row('`next`', 'next, small repo', 'next, big repo', n, nc),
    row('`status --json`', 'status, small repo', 'status, big repo', st, stc),
    row('`next` on isomorphic-git', 'next, small repo, iso', 'next, big repo, iso', ni, nic),
  ])}`);
}

// ---------------------------------------------------------------- memory
log('peak memory …');
{
  const dir = histories[10000];
  const rssFile = path.join(TMP, 'rss.json');
  const peak = (env, prepare) => {
    prepare?.();
    const r = spawnSync(process.execPath, ['--import', path.join(ROOT, 'bench/lib/rss.mjs'), CLI, 'next'], {
      cwd: dir, env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile }, encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(readFileSync(rssFile, 'utf8')).maxRssMb;
  };
  const m = {
    noCache: peak(ENV, dropCache(dir)), behind: peak(ENV, oneStepBehind(dir)), warm: peak(ENV),
    noCacheIso: peak(iso, dropCache(dir)), warmIso: peak(iso),
  };
  const floorRss = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.resourceUsage().maxRSS / 1024))'], { encoding: 'utf8' }).stdout);
  results.scenarios.memory = { ...m, floor: floorRss };
  targets.push({ what: 'peak RSS of `next` at 10,000 commits, no cache', ratio: m.noCache, spread: null, cpu: null, limit: 150, met: m.noCache < 150, unit: 'MB' });
  sections.push(`## Memory

Peak resident memory of the \`git tune next\` process (\`process.resourceUsage().maxRSS\` at exit) at ${stepsOf(dir).toLocaleString('en')} step commits. The native backend's git children (rev-list, cat-file) are separate processes, not counted.

${table(['', 'native (default)', 'isomorphic-git'], [
    ['no cache', `${m.noCache.toFixed(0)} MB`, `${m.noCacheIso.toFixed(0)} MB`],
    ['one step behind', `${m.behind.toFixed(0)} MB`, ''],
    ['warm', `${m.warm.toFixed(0)} MB`, `${m.warmIso.toFixed(0)} MB`],
  ])}

\`node -e 0\`: ${floorRss.toFixed(0)} MB.`);
}

// ---------------------------------------------------------------- per operation
log('each backend, operation by operation …');
{
  const rows = [];
  const raw = {};
  const repos = { '1,000-step tuning': histories[1000], '200 MB pack': big };
  const runOp = (backend, op, dir) => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bench/lib/ops.mjs'), backend, op, dir], { encoding: 'utf8', env: { ...process.env, ...ENV } });
    if (r.status !== 0) throw new Error(`${backend} ${op}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  for (const op of ['history', 'blob', 'commit']) {
    for (const where of Object.keys(repos)) {
      const s = { native: [], iso: [], nativeImport: [], isoImport: [] };
      for (let i = 0; i < FEW; i++) {
        for (const backend of i % 2 ? ['iso', 'native'] : ['native', 'iso']) {
          const r = runOp(backend, op, repos[where]);
          s[backend].push(r.ms);
          s[`${backend}Import`].push(r.importMs);
        }
      }
      raw[`${op} @ ${where}`] = s;
      rows.push([op, where, fmtMs(stats(s.native)), fmtMs(stats(s.iso)), fmtRatio(ratio(s.iso, s.native))]);
    }
  }
  const importOf = (k) => stats(Object.values(raw).flatMap((s) => s[k]));
  results.scenarios.ops = raw;
  sections.push(`## Each backend, operation by operation

Fresh process per sample, first call included (a git process to start, a pack to open); the backend module's import is not: native ${fmtMs(importOf('nativeImport'))}, isomorphic-git ${fmtMs(importOf('isoImport'))}.
\`history\` = the fold's whole input (every first-parent commit to the init commit, hand commits diffed); \`blob\` = config.yaml at the tip; \`commit\` = the objects of a two-file step commit (no ref moved).
When git is on PATH every operation goes to the native backend: it is the faster one in each row (open.ts); \`GIT_TUNE_BACKEND=iso|native\` overrides.

${table(['operation', 'repository', 'native', 'isomorphic-git', 'iso ÷ native'], rows)}`);
}

// ---------------------------------------------------------------- write out
results.machine.loadAtEnd = os.loadavg().map((x) => x.toFixed(2)).join(' ');
results.targets = targets;
results.seconds = Math.round((Date.now() - started) / 1000);
writeFileSync(path.join(ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
const m = results.machine;
const md = `# Benchmarks

Written by \`npm run bench\`${QUICK ? ' (`--quick`)' : ''} (bench/run.mjs); raw samples in bench/results.json. Fixtures are built once into .bench-tmp/ (bench/lib/fixtures.mjs): tuning histories written through the project's own GitRepo writer and formatStep.
Each comparison runs its commands interleaved, round by round, in one run: times are median [min–max] of ${ROUNDS} rounds (${FEW} for the slow ones); ratios are the ratio of medians [min–max of the per-round ratios]. ${cpuNote}
Machine: ${m.cpus} × ${m.cpu}, ${m.memGb} GB, ${m.platform}; Node ${m.node}; ${m.git}. Load average ${m.loadAtStart} at the start, ${m.loadAtEnd} at the end: other work on the machine stretches wall times (and their spreads) more than CPU times. Whole run: ${results.seconds} s.

## Targets

${table(['target', 'measured (wall)', 'CPU', 'limit', 'met'], targets.map(targetCells))}

${sections.join('\n\n')}
`;
writeFileSync(path.join(ROOT, 'BENCHMARKS.md'), md);
log(`wrote BENCHMARKS.md and bench/results.json in ${results.seconds} s`);
// A regression check: git-tune's memory during a run over its target fails the bench.
const overMemory = targets.filter((t) => t.what.startsWith('peak RSS of `git tune run`') && !t.met);
if (overMemory.length > 0) {
  for (const t of overMemory) log(`NOT MET: ${t.what}: ${t.ratio.toFixed(0)} MB (< ${t.limit} MB)`);
  process.exitCode = 1;
}
