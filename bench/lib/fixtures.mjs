// Repositories the benchmarks run against, built once and kept under
// .bench-tmp/ (gitignored), keyed by the code that shapes them: a change to
// the step format or to this file builds them again.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/bin/git-tune.js');
export const TMP = path.join(ROOT, '.bench-tmp');
export const NAME = 'desk';
export const BRANCH = `tune/${NAME}`;

/** Pinned identity and dates, no user or system config: the same repository on every machine. */
export const ENV = {
  GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
  GIT_AUTHOR_DATE: '@1767225600 +0000', GIT_COMMITTER_DATE: '@1767225600 +0000',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', NO_COLOR: '1',
};

/** This file and the step message format (a sample of it): a change to either builds the fixtures again. */
const KEY = await (async () => {
  const { formatStep } = await import(path.join(ROOT, 'dist/core/steps.js'));
  const h = createHash('sha1').update(readFileSync(fileURLToPath(import.meta.url)));
  h.update(formatStep({ step: 'run', tuning: NAME, run: 'batch01-nomem-run1', concurrency: 4, cases: 3, void: null, stopped: null, tokens: 9, costUsd: 0.5, difficult: [] }, 'sample'));
  h.update(formatStep({ step: 'grade', tuning: NAME, run: 'batch01-nomem-run1', verdict: 'PASSED', wrong: [], review: true, difficult: [{ op: 'add', id: 'a', reason: 'wrong' }] }, 'sample'));
  return h.digest('hex').slice(0, 10);
})();

export const git = (cwd, ...args) =>
  execFileSync('git', args, { cwd, env: { ...process.env, ...ENV }, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
export const tune = (cwd, ...args) =>
  execFileSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...ENV }, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 28 });

function fresh(name) {
  const dir = path.join(TMP, `${name}-${KEY}`);
  if (existsSync(path.join(dir, '.git', 'bench-complete'))) return { dir, built: true };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return { dir, built: false };
}
const done = (dir) => writeFileSync(path.join(dir, '.git', 'bench-complete'), new Date().toISOString());

function project(dir, files = {}) {
  git(dir, 'init', '-q', '-b', 'main');
  const all = {
    'agents/prompt.md': 'Answer the customer politely.\n',
    'agents/memory-policy.md': 'Save facts the next case needs.\n',
    'docs/notes.md': 'project notes\n',
    ...files,
  };
  for (const [f, content] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'project');
}

const caseId = (i) => `case-${String(i).padStart(5, '0')}`;

function writeCases(dir, count) {
  const classes = ['billing', 'tech', 'account', 'shipping'];
  const lines = [];
  for (let i = 1; i <= count; i++) {
    lines.push(JSON.stringify({
      id: caseId(i), class: classes[i % classes.length], complexity: ['simple', 'medium', 'complex'][i % 3],
      input: `Question ${i}: where is my order?`, checks: [{ type: 'contains', value: 'order' }],
    }));
  }
  writeFileSync(path.join(dir, 'cases.jsonl'), `${lines.join('\n')}\n`);
}

/**
 * A tuning branch of about `steps` step commits: init, config, dataset and
 * selection through the CLI, then whole batches (plan, a no-memory run graded
 * MIXED, an edit, a confirming run graded PASSED, candidate, a with-memory run,
 * checkpoint; a hand commit every fifth batch) written through the project's
 * own GitRepo writer with formatStep, the branch moved once, every run tagged,
 * then `git gc`. It ends where `next` says to plan the next batch.
 */
export async function buildHistory(steps, { big = false } = {}) {
  const { dir, built } = fresh(`history-${steps}${big ? '-big' : ''}`);
  if (built) return dir;
  const { NativeGitRepo } = await import(path.join(ROOT, 'dist/git/native-repo.js'));
  const { formatStep } = await import(path.join(ROOT, 'dist/core/steps.js'));
  if (big) bigProject(dir);
  else project(dir);

  const batches = Math.max(1, Math.round((steps - 6) / 13.2));
  const sizes = [];
  for (let b = 0; b < batches; b++) sizes.push(b === 0 ? 4 : Math.min(8, sizes[b - 1] * 2));
  const total = sizes.reduce((a, b) => a + b, 0) + 16;
  writeCases(dir, total);
  tune(dir, 'init', NAME, '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md', '--runner', 'node agent.mjs', '--dataset', 'cases.jsonl');
  tune(dir, 'config', 'set', 'minBatch', '4');
  tune(dir, 'config', 'set', 'maxBatch', '8');
  tune(dir, 'select');
  rmSync(path.join(dir, 'cases.jsonl'));

  const repo = new NativeGitRepo(dir, path.join(dir, '.git'));
  const ref = `refs/heads/${BRANCH}`;
  const start = await repo.resolveRef(ref);
  let tip = start;
  const person = { name: 'Bench', email: 'bench@example.com', timestamp: 1767225600, timezoneOffset: 0 };
  const tags = [];
  const write = async (message, changes = {}) => {
    tip = await repo.writeCommit({ parent: tip, changes: new Map(Object.entries(changes)), message, author: person, committer: person });
    return tip;
  };
  const step = (data, subject, changes) => write(formatStep({ tuning: NAME, difficult: [], ...data }, `tune(${NAME}): ${subject}`), changes);
  const dirOf = `.tune/${NAME}`;
  const used = [];
  let next = 1;
  let count = Number(git(dir, 'rev-list', '--count', `${start}`, `^main`).trim());
  for (let b = 1; b <= batches; b++) {
    const nn = String(b).padStart(2, '0');
    const fresh = Array.from({ length: sizes[b - 1] }, () => caseId(next++));
    const recheck = used.length >= 2 ? [used[(b * 7) % used.length], used[(b * 13 + 1) % used.length]].filter((v, i, a) => a.indexOf(v) === i) : [];
    used.push(...fresh);
    const cases = [...fresh, ...recheck];
    const plan = { batch: b, size: fresh.length, why: `batch ${b - 1} went smoothly`, kind: 'new', new: fresh, recheck };
    await step({ step: 'plan', batch: b, size: fresh.length, kind: 'new', new: fresh, recheck }, `plan batch ${b}`, {
      [`${dirOf}/batches/batch${nn}.json`]: { content: `${JSON.stringify(plan, null, 2)}\n` },
    });
    const results = (wrong) => `${JSON.stringify(cases.map((id) => ({ id, right: !wrong.includes(id), tokens: 1200, llmCalls: 3, costUsd: 0.004 })), null, 2)}\n`;
    const run = async (half, number, verdict, wrong) => {
      const name = `batch${nn}-${half}-run${number}`;
      await step({ step: 'run-start', run: name, concurrency: 4 }, `start ${name}`);
      const oid = await step(
        { step: 'run', run: name, concurrency: 4, cases: cases.length, void: null, stopped: null, tokens: 1200 * cases.length, costUsd: 0.004 * cases.length },
        `${name}: ${cases.length - wrong.length}/${cases.length} right`,
        {
          [`${dirOf}/runs/${name}/run.json`]: { content: `${JSON.stringify({ run: name, cases, concurrency: 4 }, null, 2)}\n` },
          [`${dirOf}/runs/${name}/results.json`]: { content: results(wrong) },
        },
      );
      tags.push([name, oid]);
      await step({ step: 'grade', run: name, verdict, wrong, review: verdict === 'PASSED' }, `grade ${name}: ${verdict}`, {
        [`${dirOf}/runs/${name}/findings.md`]: { content: `## ${verdict}\n\n| case | right |\n|---|---|\n${cases.map((id) => `| ${id} | ${wrong.includes(id) ? 'no' : 'yes'} |`).join('\n')}\n\n## ${half === 'mem' ? 'Memory' : 'Cost'} review\n\nfine\n` },
      });
      return name;
    };
    const first = await run('nomem', 1, 'MIXED', [fresh[0]]);
    await step({ step: 'edit', run: first, aims: null }, `edit after ${first}`, {
      'agents/prompt.md': { content: `Answer the customer politely (revision ${b}).\n` },
      [`${dirOf}/runs/${first}/changes.md`]: { content: `# Changes\n\nState the order status first.\n` },
    });
    const passing = await run('nomem', 2, 'PASSED', []);
    await step({ step: 'candidate', run: passing }, `candidate from ${passing}`, {
      [`${dirOf}/memory/candidate/facts.md`]: { content: `facts up to batch ${b}\n` },
    });
    await run('mem', 1, 'PASSED', []);
    await step({ step: 'checkpoint', batch: b }, `checkpoint batch ${b}`, {
      [`${dirOf}/memory/last-good/facts.md`]: { content: `facts up to batch ${b}\n` },
    });
    count += 13;
    if (b % 5 === 0) {
      await write(`Update the project notes (${b})\n`, { 'docs/notes.md': { content: `project notes, batch ${b}\n` } });
      count += 1;
    }
    if (b % 80 === 0) git(dir, 'repack', '-d', '-q'); // keep loose objects few while building
  }
  await repo.compareAndSwapRef(ref, tip, start);
  execFileSync('git', ['update-ref', '--stdin'], {
    cwd: dir, env: { ...process.env, ...ENV },
    input: tags.map(([name, oid]) => `create refs/tags/${BRANCH}/${name} ${oid}\n`).join(''),
  });
  git(dir, 'reset', '-q', '--hard');
  git(dir, 'gc', '-q');
  writeFileSync(path.join(dir, '.git', 'bench-steps'), String(count));
  done(dir);
  return dir;
}

/** A project holding ~200 MB of incompressible files, packed: the repository a tuning may live in. */
function bigProject(dir) {
  git(dir, 'init', '-q', '-b', 'main');
  mkdirSync(path.join(dir, 'assets'), { recursive: true });
  for (let i = 0; i < 200; i++) writeFileSync(path.join(dir, 'assets', `blob-${String(i).padStart(3, '0')}.bin`), randomBytes(1024 * 1024));
  for (const [f, content] of Object.entries({
    'agents/prompt.md': 'Answer the customer politely.\n',
    'agents/memory-policy.md': 'Save facts the next case needs.\n',
    'docs/notes.md': 'project notes\n',
  })) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'project with large assets');
  // Random data has no deltas to find: skip the search, keep the build quick.
  git(dir, '-c', 'core.bigFileThreshold=512k', 'gc', '-q');
}

export const stepsOf = (dir) => Number(readFileSync(path.join(dir, '.git', 'bench-steps'), 'utf8'));

/** The pack sizes of a repository, in MB. */
export function packMb(dir) {
  const out = git(dir, 'count-objects', '-v');
  return Number(/size-pack: (\d+)/.exec(out)[1]) / 1024;
}

/**
 * A tuning whose batch 1 holds `cases` cases, planned and ready to run, with
 * a runner that returns at once. `reset()` puts it back before the run.
 */
export function buildRunRepo(cases, runner) {
  const { dir, built } = fresh(`run-${cases}-${runner}`);
  if (!built) {
    project(dir, {
      'runner.mjs': `import fs from 'node:fs';\nfs.writeFileSync(process.env.TUNE_OUTPUT ?? process.argv[2], '{"answer":"your order ships today","usage":[{"model":"m","inputTokens":10,"outputTokens":5}],"llmCalls":1}');\n`,
      'runner.sh': `#!/bin/sh\nprintf '%s' '{"answer":"your order ships today","usage":[{"model":"m","inputTokens":10,"outputTokens":5}],"llmCalls":1}' > "\${TUNE_OUTPUT:-$1}"\n`,
    });
    writeCases(dir, cases);
    tune(dir, 'init', NAME, '--prose', 'agents/**/*.md', '--runner', runner === 'node' ? 'node runner.mjs' : 'sh runner.sh', '--dataset', 'cases.jsonl');
    rmSync(path.join(dir, 'cases.jsonl'));
    tune(dir, 'config', 'set', 'maxBatch', String(cases));
    tune(dir, 'config', 'set', 'minBatch', String(cases));
    tune(dir, 'config', 'set', 'concurrency', '16');
    tune(dir, 'select');
    tune(dir, 'batch');
    writeFileSync(path.join(dir, '.git', 'bench-start'), git(dir, 'rev-parse', BRANCH).trim());
    done(dir);
  }
  const start = readFileSync(path.join(dir, '.git', 'bench-start'), 'utf8').trim();
  const reset = () => {
    git(dir, 'update-ref', `refs/heads/${BRANCH}`, start);
    git(dir, 'reset', '-q', '--hard');
    for (const ref of git(dir, 'for-each-ref', '--format=%(refname)', `refs/tags/${BRANCH}/`, 'refs/tune-logs/').split('\n').filter(Boolean)) {
      git(dir, 'update-ref', '-d', ref);
    }
    rmSync(path.join(dir, '.git', 'tune', NAME, 'runs'), { recursive: true, force: true });
  };
  return { dir, start, reset };
}
