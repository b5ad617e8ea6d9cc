// The import scenario of `npm run bench`: a `finetune/` folder of 600 cases
// whose history is ~1,560 steps, imported with `git tune import` into a
// project repository (a fresh branch each round), then `next` on the result,
// against native `git log` plus the Node floor, as the other `next` figures.
// `node bench/import.mjs [--quick]` runs this scenario alone (after a build).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, ENV, TMP, git } from './lib/fixtures.mjs';
import { writeFinetuneFolder } from './lib/folder.mjs';
import { fmtCpu, fmtMs, fmtRatio, measure, ratioToSum, stats } from './lib/timing.mjs';

const TUNING = 'finetune';
const FLAGS = ['--prose', 'agents/**/*.md', '--runner', 'node agent.mjs'];
/** The seconds an import of this folder may take (the issue's ceiling). */
const IMPORT_LIMIT_S = 60;
/**
 * `next` (no cache) on a history of `n` commits: BENCHMARKS.md's limits are
 * 2× at 1,000 commits and 3× at 10,000; between them, on the log scale.
 */
const nextLimit = (n) => Number(Math.min(3, Math.max(2, 2 + Math.log10(n / 1000))).toFixed(2));

export function importScenario({ rounds, few, log = () => {} }) {
  const root = path.join(TMP, 'import');
  rmSync(root, { recursive: true, force: true });
  const folder = path.join(root, 'folder', 'finetune');
  mkdirSync(folder, { recursive: true });
  const { batches, runs } = writeFinetuneFolder(folder, { cases: 600, size: 5, recheck: 2 });
  const dir = path.join(root, 'project');
  mkdirSync(path.join(dir, 'agents'), { recursive: true });
  writeFileSync(path.join(dir, 'agents', 'prompt.md'), 'Answer the customer politely.\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'project');
  const BRANCH = `tune/${TUNING}`;
  /** Back to the project as it was before the import: no branch, no tags, no tuning folder. */
  const undo = () => {
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    git(dir, 'reset', '-q', '--hard');
    const refs = git(dir, 'for-each-ref', '--format=%(refname)', `refs/heads/${BRANCH}`, `refs/tags/${BRANCH}/`).split('\n').filter(Boolean);
    if (refs.length) execFileSync('git', ['update-ref', '--stdin'], { cwd: dir, env: { ...process.env, ...ENV }, input: refs.map((r) => `delete ${r}\n`).join('') });
    rmSync(path.join(dir, '.tune'), { recursive: true, force: true });
    rmSync(path.join(dir, '.git', 'tune'), { recursive: true, force: true });
  };
  const cli = (argv, extra = {}) => ({ argv: [process.execPath, CLI, ...argv], cwd: dir, env: ENV, ...extra });
  log(`  import of ${batches} batches, ${runs} runs, 600 cases …`);
  const imp = measure([{ label: 'import', ...cli(['import', folder, ...FLAGS]), prepare: undo }], few, { warmup: 0 });
  const steps = Number(git(dir, 'rev-list', '--count', BRANCH, '^main').trim());
  const dropCache = () => rmSync(path.join(dir, '.git', 'tune', TUNING, 'cache'), { recursive: true, force: true });
  log(`  next on the imported history (${steps} commits) …`);
  const s = measure([
    { label: 'next, no cache', ...cli(['next']), prepare: dropCache },
    { label: 'next, warm', ...cli(['next']) },
    { label: 'batch --dry-run, no cache', ...cli(['batch', '--dry-run', '--json'], { expectExit: 3 }), prepare: dropCache },
    { label: 'git log', argv: ['git', 'log', '--format=%B', BRANCH], cwd: dir, env: ENV },
    { label: 'node -e 0', argv: [process.execPath, '-e', '0'], cwd: dir, env: ENV },
  ], rounds);
  const W = (label) => s[label].wall;
  const C = (label) => s[label].cpu;
  const base = (label, of = W) => ratioToSum(of(label), of('git log'), of('node -e 0'));
  const seconds = stats(imp.import.wall).median / 1000;
  const targets = [
    { what: `\`import\` of a folder of ${steps.toLocaleString('en')} steps (600 cases, ${runs} runs)`, ratio: seconds, spread: null, cpu: null, limit: IMPORT_LIMIT_S, met: seconds < IMPORT_LIMIT_S, unit: 's' },
    { what: `\`next\` on the imported ${steps.toLocaleString('en')} commits, no cache ÷ (git log + node floor)`, ...fromRatio(base('next, no cache'), base('next, no cache', C)), limit: nextLimit(steps) },
  ].map((t) => ({ ...t, met: t.unit ? t.met : t.ratio <= t.limit }));
  const section = `## Importing a folder

\`git tune import\` of a \`finetune/\` folder in the folder method's shapes (bench/lib/folder.mjs): 600 cases in ${batches} batches of 5 new + 2 recheck, each a no-memory run graded MIXED with changes.md, a confirming run PASSED, the candidate, a with-memory run PASSED, the checkpoint: ${steps.toLocaleString('en')} step commits and ${runs} run tags. A new project repository state each round (branch, tags and tuning folder removed); ${few} round${few === 1 ? '' : 's'}. Then \`next\` on the result, as in the other \`next\` figures; its limit sits between the 1,000-commit (2×) and 10,000-commit (3×) ones, on the log scale (${nextLimit(steps)}× at ${steps.toLocaleString('en')}).

${table(['command', 'time', 'CPU', '÷ (git log + node floor)'], [
    ['`git tune import finetune`', `${(stats(imp.import.wall).median / 1000).toFixed(1)} s [${(stats(imp.import.wall).min / 1000).toFixed(1)}–${(stats(imp.import.wall).max / 1000).toFixed(1)}]`, fmtCpu(imp.import.cpu), ''],
    ['`next`, no cache', fmtMs(stats(W('next, no cache'))), fmtCpu(C('next, no cache')), fmtRatio(base('next, no cache'))],
    ['`next`, warm', fmtMs(stats(W('next, warm'))), fmtCpu(C('next, warm')), fmtRatio(base('next, warm'))],
    ['`batch --dry-run --json`, no cache (nothing left: exit 3)', fmtMs(stats(W('batch --dry-run, no cache'))), fmtCpu(C('batch --dry-run, no cache')), fmtRatio(base('batch --dry-run, no cache'))],
    ['`git log --format=%B`', fmtMs(stats(W('git log'))), fmtCpu(C('git log')), ''],
    ['`node -e 0`', fmtMs(stats(W('node -e 0'))), fmtCpu(C('node -e 0')), ''],
  ])}`;
  return { section, targets, raw: { import: imp, next: s, steps } };
}

function fromRatio(wall, cpu) {
  return { ratio: wall.value, spread: [wall.min, wall.max], cpu: cpu.value };
}

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(CLI)) throw new Error('build first: npm run build');
  mkdirSync(TMP, { recursive: true });
  const quick = process.argv.includes('--quick');
  const { section, targets } = importScenario({ rounds: quick ? 3 : 9, few: quick ? 1 : 3, log: (t) => process.stderr.write(`${t}\n`) });
  console.log(section);
  for (const t of targets) {
    const measured = t.unit ? `${t.ratio.toFixed(1)} ${t.unit}` : `${t.ratio.toFixed(2)}× [${t.spread[0].toFixed(2)}–${t.spread[1].toFixed(2)}]`;
    console.log(`- ${t.what}: ${measured} (limit ${t.unit ? `< ${t.limit} ${t.unit}` : `≤ ${t.limit}×`}) ${t.met ? 'met' : 'NOT met'}`);
  }
}
