import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CLI, ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The final check in CI (docs/method.md#final-check, docs/ci.md), through the real CLI on the example
 * agent: `git tune final --ci` with the job summary and outputs GitHub reads;
 * a shallow clone and a clone without the run tags and logs refused with the
 * fix named; shards merged back into exactly the unsharded result, and
 * recorded as the commits `git tune final` writes; shards that do not belong
 * together refused; several target models, the best named; and the action's
 * own script run as GitHub would run it.
 *
 * One tuning is brought to "final check due" once (`git tune auto --until
 * final`); every test works in its own clone of it, side by side.
 */
const EXAMPLE = path.join(ROOT, 'templates/example');
const ACTION = YAML.parse(readFileSync(path.join(ROOT, '.github/actions/final-check/action.yml'), 'utf8'));
const FETCH = ['fetch', '-q', 'origin', '+refs/tune-logs/*:refs/tune-logs/*', 'refs/tags/tune/*:refs/tags/tune/*'];
const FETCH_LINE = `git fetch origin '+refs/tune-logs/*:refs/tune-logs/*' 'refs/tags/tune/*:refs/tags/tune/*'`;

const repos: TempRepo[] = [];
let origin: TempRepo;
let selection: string[];



/** A clone of the tuned repository, as CI gets it: whole history, plus the tags and logs fetched (unless not). */
function clone(opts: { depth?: number; refs?: boolean } = {}): TempRepo {
  const repo = new TempRepo('git-tune-final-clone-');
  repos.push(repo);
  repo.git('clone', '-q', ...(opts.depth ? ['--depth', String(opts.depth)] : []), '--branch', 'tune/demo', `file://${origin.dir}`, '.');
  if (opts.refs !== false && !opts.depth) repo.git(...FETCH);
  return repo;
}

/** A scratch folder of the test's own (for result sets and GitHub's files). */
function scratch(repo: TempRepo, name: string): string {
  const dir = repo.path('..', `${path.basename(repo.dir)}-${name}`);
  mkdirSync(dir, { recursive: true });
  repos.push({ cleanup: () => rmSync(dir, { recursive: true, force: true }) } as TempRepo);
  return dir;
}

function githubFiles(repo: TempRepo): { env: Record<string, string>; summary: () => string; outputs: () => Record<string, string> } {
  const dir = scratch(repo, 'github');
  const summary = path.join(dir, 'step-summary.md');
  const output = path.join(dir, 'output');
  writeFileSync(summary, '');
  writeFileSync(output, '');
  return {
    env: { GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: output },
    summary: () => readFileSync(summary, 'utf8'),
    outputs: () => Object.fromEntries(readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])),
  };
}

const tip = (repo: TempRepo) => repo.git('rev-parse', 'tune/demo').trim();
const finalTags = (repo: TempRepo) => repo.git('tag', '-l', 'tune/demo/final-check').trim();
/** Results without the one field the clock writes (the example agent's own numbers, durations included, are exact). */
const untimed = (json: string) => (JSON.parse(json) as Array<Record<string, unknown>>).map(({ startedAt: _s, ...r }) => r);
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

beforeAll(async () => {
  origin = new TempRepo('git-tune-final-');
  repos.push(origin);
  origin.git('init', '-q', '-b', 'main');
  cpSync(EXAMPLE, origin.dir, { recursive: true });
  origin.git('add', '-A');
  origin.git('commit', '-q', '-m', 'the example agent');
  await tuneOk(origin, ['init', 'demo', '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md',
    '--runner', 'node agent.mjs', '--judge', 'node judge.mjs', '--editor', 'node editor.mjs', '--dataset', 'cases.yaml']);
  await tuneOk(origin, ['config', 'set', 'limit', '6']);
  await tuneOk(origin, ['auto', '--until', 'final', '--plain']);
  const next = JSON.parse((await tuneOk(origin, ['next', '--json'])).stdout);
  expect(next.kind).toBe('final');
  selection = readJson(origin.path('.tune/demo/selection.json')).ids;
  expect(selection).toHaveLength(6);
}, 120_000);

afterAll(() => {
  for (const r of repos) r.cleanup();
});

describe.concurrent('git tune final --ci', () => {
  it('runs the due final check without committing, grades it, and writes the job summary and outputs', async () => {
    const repo = clone();
    const before = tip(repo);
    const gh = githubFiles(repo);
    const r = await tuneAsync(repo, ['final', '--ci'], gh.env);
    expect(r.code, r.stderr).toBe(0);
    const set = repo.path('.git/tune/demo/shards/1-of-1');
    const results = readJson(path.join(set, 'results.json')) as Array<{ id: string; tokens: number; costUsd: number }>;
    expect(results.map((x) => x.id)).toEqual(selection);
    const tokens = results.reduce((s, x) => s + x.tokens, 0);
    const cost = results.reduce((s, x) => s + x.costUsd, 0);
    expect(gh.outputs()).toEqual({
      verdict: 'VERIFIED', 'cases-right': '6', 'cases-total': '6', tokens: String(tokens), 'cost-usd': String(Number(cost.toFixed(6))), 'result-dir': set,
      'cases-wrong': '', 'cases-stuck': '', 'pass-rate': '1.0000', 'pass-rate-ci': '0.6097-1.0000',
      summary: 'VERIFIED: 6 of 6 right (rate 100%, 95% CI 61–100%); wrong: none; stuck: none',
    });
    const summary = gh.summary();
    expect(summary).toMatch(/^## git-tune final check of demo: VERIFIED\n/);
    expect(summary).toContain('| verdict | **VERIFIED** |\n| result | VERIFIED: 6 of 6 right (rate 100%, 95% CI 61–100%); wrong: none; stuck: none |\n'
      + '| cases right | 6 of 6 (pass rate 100%, 95% Wilson interval 61%–100%) |\n| regressed from their batch | none |\n| stuck (reported, not counted) | none |\n');
    expect(summary).toContain(`| tokens | ${tokens.toLocaleString('en-US')} |\n| cost | $${cost.toFixed(4)} |\n`);
    expect(summary).toContain('| class | cases | right | not right | stuck | tokens | cost |');
    // One row per class of the selection, adding up to the whole.
    const dataset = readFileSync(repo.path('.tune/demo/dataset.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; class: string });
    const classes = [...new Set(dataset.filter((c) => selection.includes(c.id)).map((c) => c.class))].sort();
    const rows = summary.split('\n').filter((l) => classes.some((c) => l.startsWith(`| ${c} |`)));
    expect(rows.map((l) => l.split('|')[1]!.trim())).toEqual(classes);
    expect(rows.reduce((s, l) => s + Number(l.split('|')[2]), 0)).toBe(6);
    expect(readFileSync(path.join(set, 'summary.md'), 'utf8')).toBe(summary);
    expect(r.stdout).toMatch(/^final check of demo: VERIFIED: 6 of 6 right \(rate 100%, 95% CI 61–100%\); wrong: none; stuck: none\n  cases right: 6 of 6\n  regressed: none\n  stuck: none\n  tokens: [\d,]+, cost \$\d+\.\d{4}\n/);
    expect(r.stderr).toContain('wrote the job summary and outputs for GitHub Actions');
    expect(r.stderr).toContain('record it as the final check: git tune final --collect .git/tune/demo/shards/1-of-1 --commit');
    // Nothing recorded: same tip, no tag, a clean tree.
    expect(tip(repo)).toBe(before);
    expect(finalTags(repo)).toBe('');
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('works outside GitHub: no GitHub file written, the report on stdout (--json too)', async () => {
    const repo = clone();
    const r = await tuneAsync(repo, ['final', '--ci', '--json'], { GITHUB_STEP_SUMMARY: '', GITHUB_OUTPUT: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('GitHub');
    expect(JSON.parse(r.stdout)).toMatchObject({
      verdict: 'VERIFIED', best: null, resultDir: repo.path('.git/tune/demo/shards/1-of-1'),
      reports: [{ tuning: 'demo', verdict: 'VERIFIED', casesRight: 6, casesTotal: 6, mode: 'final', regressed: [], stuck: [], shard: { index: 1, count: 1 } }],
    });
  });

  it('fails with exit 6 and says which case when the check is not VERIFIED', async () => {
    const repo = clone();
    const gh = githubFiles(repo);
    const wrong = selection[1]!;
    const r = await tuneAsync(repo, ['final', '--ci'], { ...gh.env, EXAMPLE_SIMULATE: `error@${wrong}` });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain('error: the final check is FAILED, not VERIFIED');
    expect(gh.outputs()).toMatchObject({ verdict: 'FAILED', 'cases-right': '5', 'cases-total': '6', 'cases-wrong': wrong, 'cases-stuck': '' });
    // Right / wrong / stuck with ids next to the verdict, and why it is not VERIFIED.
    expect(r.stdout).toContain(`final check of demo: FAILED: 5 of 6 right (rate 83%, 95% CI 44–97%); wrong: ${wrong}; stuck: none — not VERIFIED: 1 case not stuck and not right in the majority of its answers`);
    expect(gh.summary()).toContain(`| wrong (not stuck) | ${wrong} |`);
    // Right in its batch, wrong now: regressed.
    expect(gh.summary()).toContain(`| regressed from their batch | ${wrong} |`);
  });

  it('refuses a shallow clone with exit 3, naming fetch-depth: 0 and the fetch line', async () => {
    const repo = clone({ depth: 1 });
    expect(repo.git('rev-parse', '--is-shallow-repository').trim()).toBe('true');
    const gh = githubFiles(repo);
    const r = await tuneAsync(repo, ['final', '--ci'], gh.env);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: this is a shallow clone');
    expect(r.stderr).toContain('`fetch-depth: 0`');
    expect(r.stderr).toContain(FETCH_LINE);
    expect(r.stderr).toContain(`fix: git fetch --unshallow origin '+refs/tune-logs/*:refs/tune-logs/*' 'refs/tags/tune/*:refs/tags/tune/*'`);
    expect(gh.outputs()).toEqual({});
  });

  it('refuses a clone without the logs ref (or run tags), then runs once the fetch line fetched them', async () => {
    const repo = clone({ refs: false });
    for (const tag of repo.git('tag', '-l', 'tune/demo/batch01-*').trim().split('\n')) repo.git('tag', '-d', tag);
    const r = await tuneAsync(repo, ['final', '--ci']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('refs/tune-logs/demo (the runs\' logs)');
    expect(r.stderr).toMatch(/- tag tune\/demo\/batch01-nomem-run1 \(run batch01-nomem-run1\)/);
    expect(r.stderr).toContain('`fetch-depth: 0`');
    expect(r.stderr).toContain(`fix: ${FETCH_LINE}`);
    repo.git(...FETCH);
    expect((await tuneAsync(repo, ['final', '--ci'])).code).toBe(0);
  });

  it('refuses when the final check is not due, and re-checks one already recorded without committing', async () => {
    const early = clone();
    early.git('reset', '-q', '--hard', 'HEAD~1'); // before the last checkpoint: next says checkpoint
    const refused = await tuneAsync(early, ['final', '--ci']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('error: the final check is not due: make the candidate the last good memory');

    const repo = clone();
    await tuneOk(repo, ['final']);
    await tuneOk(repo, ['grade']);
    const recorded = tip(repo);
    const gh = githubFiles(repo);
    const r = await tuneAsync(repo, ['final', '--ci'], gh.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/re-check: the final check in history is VERIFIED \([\d,]+ tokens, \$[\d.]+, [0-9a-f]{7}\); this run is not recorded/);
    expect(gh.summary()).toContain('| re-check | the final check in history is VERIFIED');
    expect(tip(repo)).toBe(recorded);
    const again = await tuneAsync(repo, ['final', '--ci', '--commit']);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('the final check is already recorded (VERIFIED)');
  }, 120_000);

  it('--ci --commit records the final check and its grade, as git tune final and git tune grade do', async () => {
    const repo = clone();
    const gh = githubFiles(repo);
    const r = await tuneAsync(repo, ['final', '--ci', '--commit'], gh.env);
    expect(r.code, r.stderr).toBe(0);
    const subjects = repo.git('log', '--format=%s', '-3').trim().split('\n');
    expect(subjects[0]).toBe('tune(demo): grade final-check VERIFIED: 6/6 right');
    expect(subjects[1]).toMatch(/^tune\(demo\): final-check: 6\/6 right by checks, \d+ tokens$/);
    expect(subjects[2]).toMatch(/^tune\(demo\): start final-check \(6 of 6 cases to run, concurrency \d+\)$/);
    expect(repo.git('rev-parse', 'tune/demo/final-check^{commit}').trim()).toBe(repo.git('rev-parse', 'HEAD~1').trim());
    expect(gh.outputs().verdict).toBe('VERIFIED');
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('done');
    repo.fsck();
  }, 120_000);
});

/** One unsharded `git tune final` (recorded as usual), the reference the shards are held to; made once. */
let reference: Promise<{ repo: TempRepo; results: Array<Record<string, unknown>> }> | null = null;
function unsharded() {
  reference ??= (async () => {
    const repo = clone();
    await tuneOk(repo, ['final']);
    return { repo, results: untimed(repo.git('show', 'tune/demo:.tune/demo/runs/final-check/results.json')) };
  })();
  return reference;
}

/** Runs the n shards of the final check side by side, each into its own folder. */
async function runShards(repo: TempRepo, dir: string, n: number): Promise<string[]> {
  const dirs = Array.from({ length: n }, (_, k) => path.join(dir, `${n}`, `${k + 1}`));
  const runs = await Promise.all(dirs.map((out, k) => tuneOk(repo, ['final', '--shard', `${k + 1}/${n}`, '--out', out])));
  for (const [k, r] of runs.entries()) {
    if (n > 1) expect(r.stdout).toContain(`  shard ${k + 1}/${n}\n`);
    const manifest = readJson(path.join(dirs[k]!, 'manifest.json'));
    expect(manifest).toMatchObject({ tuning: 'demo', branch: 'tune/demo', tip: tip(repo), seed: 1, shard: { index: k + 1, count: n }, runner: ['node', 'agent.mjs'], target: null, judged: true });
    expect(manifest.cases).toEqual(selection.filter((_, i) => i % n === k));
  }
  return dirs;
}

describe.concurrent('sharding: --shard i/n, then --collect', () => {
  it('collects n = 1, 3 and 5 shards into exactly the results of one unsharded final check', async () => {
    const { results: expected } = await unsharded();
    expect(expected.map((x) => x.id)).toEqual(selection);
    const repo = clone();
    const dir = scratch(repo, 'shards');
    for (const n of [1, 3, 5]) {
      const dirs = await runShards(repo, dir, n);
      const merged = path.join(dir, `${n}`, 'merged');
      const collected = await tuneOk(repo, ['final', '--collect', ...dirs.reverse(), '--out', merged]);
      expect(collected.stdout).toContain('final check of demo: VERIFIED: 6 of 6 right (rate 100%, 95% CI 61–100%); wrong: none; stuck: none\n  cases right: 6 of 6\n');
      expect(untimed(readFileSync(path.join(merged, 'results.json'), 'utf8')), `${n} shards`).toEqual(expected);
      expect(readdirSync(path.join(merged, 'logs')).sort()).toEqual([...selection].sort());
    }
    expect(tip(repo)).toBe(tip(origin)); // shards and collects record nothing
  }, 180_000);

  it('carries the workspace files runner.keep names from the shards into the logs ref of the recorded final check', async () => {
    const repo = clone();
    await tuneOk(repo, ['config', 'set', 'runner.keep', '["transcript.md"]']);
    const dirs = await runShards(repo, scratch(repo, 'keep'), 2);
    expect(readFileSync(path.join(dirs[0]!, 'logs', selection[0]!, 'workspace', 'transcript.md'), 'utf8')).toMatch(/^- /);
    await tuneOk(repo, ['final', '--collect', ...dirs, '--commit']);
    for (const id of selection) {
      expect(repo.git('show', `refs/tune-logs/demo:final-check/${id}/workspace/transcript.md`)).toMatch(/^- /);
    }
    const shown = await tuneOk(repo, ['show', 'final-check', selection[0]!, '--log']);
    expect(shown.stdout).toContain('--- workspace/transcript.md\n- ');
  });

  it('records collected shards as the run-start and run commits git tune final writes, then the grade', async () => {
    const { repo: plain, results: expected } = await unsharded();
    const repo = clone();
    const dirs = await runShards(repo, scratch(repo, 'record'), 2);
    const before = tip(repo);
    const r = await tuneOk(repo, ['final', '--collect', ...dirs, '--commit']);
    expect(r.stdout).toMatch(/recorded: commit [0-9a-f]{7}, tag tune\/demo\/final-check/);
    const steps = (x: TempRepo, range: string) => x.git('log', '--format=%B%x00', range).split('\0').map((m) => m.trim()).filter(Boolean);
    const mine = steps(repo, `${before}..tune/demo`);
    expect(mine).toHaveLength(3);
    expect(mine[0]).toMatch(/^tune\(demo\): grade final-check VERIFIED: 6\/6 right\n/);
    expect(mine.slice(1)).toEqual(steps(plain, `${before}..tune/demo`)); // same subjects and trailers, seal included
    expect(untimed(repo.git('show', 'tune/demo~1:.tune/demo/runs/final-check/results.json'))).toEqual(expected);
    expect(repo.git('rev-parse', 'tune/demo/final-check^{commit}').trim()).toBe(repo.git('rev-parse', 'tune/demo~1').trim());
    const logs = repo.git('ls-tree', '--name-only', 'refs/tune-logs/demo', 'final-check/').trim().split('\n');
    expect(logs.map((l) => l.replace('final-check/', '')).sort()).toEqual([...selection].sort());
    expect(repo.git('ls-tree', '--name-only', 'refs/tune-logs/demo', `final-check/${selection[0]}/`).trim().split('\n')).toEqual(
      ['result.json', 'stderr', 'stdout'].map((f) => `final-check/${selection[0]}/${f}`));
    expect(JSON.parse((await tuneOk(repo, ['next', '--json'])).stdout).kind).toBe('done');
    expect(repo.git('status', '--porcelain')).toBe('');
    repo.fsck();
  }, 120_000);

  it('refuses shards that do not belong together: missing, duplicate, another seed, another tip; writing nothing', async () => {
    const repo = clone();
    const dir = scratch(repo, 'refusals');
    const shard = (i: number, name = String(i)) => tuneOk(repo, ['final', '--shard', `${i}/3`, '--out', path.join(dir, name)]);
    await Promise.all([shard(1), shard(2), shard(3)]);
    const at = (...names: string[]) => names.map((n) => path.join(dir, n));
    const before = tip(repo);
    const refused = async (dirs: string[], code: number, ...lines: string[]) => {
      const r = await tuneAsync(repo, ['final', '--collect', ...dirs, '--commit']);
      expect(r.code, r.stderr).toBe(code);
      for (const line of lines) expect(r.stderr).toContain(line);
      expect(tip(repo)).toBe(before);
      expect(finalTags(repo)).toBe('');
    };
    await refused(at('1', '2'), 2, 'error: these 2 result sets do not make one final check', '  - shard 3/3 is missing');
    await refused(at('1', '2', '2', '3'), 2, `  - shard 2/3 is given 2 times: ${path.join(dir, '2')}, ${path.join(dir, '2')}`);

    cpSync(path.join(dir, '3'), path.join(dir, '3-seed'), { recursive: true });
    const manifest = readJson(path.join(dir, '3-seed', 'manifest.json'));
    writeFileSync(path.join(dir, '3-seed', 'manifest.json'), JSON.stringify({ ...manifest, seed: 7 }));
    await refused(at('1', '2', '3-seed'), 2, `  - different seeds: 1 (${path.join(dir, '1')}, ${path.join(dir, '2')}) vs 7 (${path.join(dir, '3-seed')})`);

    // The branch moves (a config step), and shard 3 runs again there.
    await tuneOk(repo, ['config', 'set', 'concurrency', '4']);
    const moved = tip(repo);
    await shard(3, '3-moved');
    const r = await tuneAsync(repo, ['final', '--collect', ...at('1', '2', '3-moved')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`  - different tuning tips (the branch moved between shards: run them all at one commit): ${before.slice(0, 12)} (`);
    // All of one tip, but not the branch's: the grade would read another history.
    const stale = await tuneAsync(repo, ['final', '--collect', ...at('1', '2', '3')]);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toContain(`error: the shards ran at ${before.slice(0, 12)}, but tune/demo is at ${moved.slice(0, 12)}`);
    expect(tip(repo)).toBe(moved);
    expect(finalTags(repo)).toBe('');
    expect((await tuneAsync(repo, ['final', '--shard', '4/3'])).code).toBe(2);
    expect((await tuneAsync(repo, ['final', '--shard', '1/3', '--commit'])).code).toBe(2);
  }, 120_000);
});

describe.concurrent('target models', () => {
  it('runs the final check once per target, reports each, names the best, and fails unless every one is VERIFIED', async () => {
    const repo = clone();
    const wrong = selection[0]!;
    // example-large is priced 5× example-main; `flaky` makes one case fail. Same tokens for the first two.
    await tuneOk(repo, ['config', 'set', 'targets', `[{name: example-large}, {name: example-main}, {name: flaky, env: {EXAMPLE_SIMULATE: "error@${wrong}"}}]`]);
    const gh = githubFiles(repo);
    const r = await tuneAsync(repo, ['final', '--ci', '--all-targets'], gh.env);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('error: the final check is not VERIFIED for flaky (FAILED)');
    const outputs = gh.outputs();
    const receipts = JSON.parse(outputs.receipts!) as Array<{ target: string; verdict: string; casesRight: number; tokens: number; costUsd: number }>;
    expect(receipts.map((x) => [x.target, x.verdict, x.casesRight])).toEqual([['example-large', 'VERIFIED', 6], ['example-main', 'VERIFIED', 6], ['flaky', 'FAILED', 5]]);
    expect(receipts[0]!.tokens).toBe(receipts[1]!.tokens);
    expect(receipts[0]!.costUsd).toBeGreaterThan(receipts[1]!.costUsd);
    expect(outputs).toMatchObject({ verdict: 'FAILED', 'best-target': 'example-main', 'cases-right': '6', tokens: String(receipts[1]!.tokens) });
    const summary = gh.summary();
    expect(summary).toContain('3 targets; best: **example-main** (most cases right, then fewest tokens, then cost).');
    expect(summary).toMatch(/\| example-main \(best\) \| VERIFIED \| 6 of 6 \|/);
    expect(summary).toContain('### flaky: FAILED');
    // Each target's verdict line says right / wrong / stuck with counts beside it (final reports' honest outcome).
    expect(r.stdout).toContain('  example-main (best): VERIFIED: 6 of 6 right (rate 100%, 95% CI 61–100%); wrong: none; stuck: none\n');
    expect(r.stdout).toContain('  flaky: FAILED: 5 of 6 right (rate 83%, 95% CI 44–97%); wrong: ' + wrong + '; stuck: none');
    // Each target's result set, run with its env: TUNE_TARGET is the model the example agent reports.
    const root = outputs['result-dir']!;
    const large = readJson(path.join(root, 'example-large', 'results.json')) as Array<{ usage: Array<{ model: string }> }>;
    expect(large[0]!.usage.map((u) => u.model)).toContain('example-large');
    expect(readJson(path.join(root, 'flaky', 'manifest.json')).target).toBe('flaky');
    // Nothing recorded, per target or at all.
    expect(finalTags(repo)).toBe('');

    expect((await tuneAsync(repo, ['final', '--ci', '--target', 'nope'])).stderr).toContain('error: no target named nope');
  }, 120_000);

  it('collects a matrix of shards × targets: each target whole, the best named; --commit records the one picked', async () => {
    const repo = clone();
    await tuneOk(repo, ['config', 'set', 'targets', `[{name: example-main}, {name: flaky, env: {EXAMPLE_SIMULATE: "error@${selection[3]}"}}]`]);
    const dir = scratch(repo, 'matrix');
    const jobs = [['1/2', 'example-main'], ['2/2', 'example-main'], ['1/1', 'flaky']];
    await Promise.all(jobs.map(([shard, target], k) => tuneAsync(repo, ['final', '--ci', '--shard', shard!, '--target', target!, '--out', path.join(dir, 'shards', `${k}`)])));
    const shards = jobs.map((_, k) => path.join(dir, 'shards', `${k}`));
    const r = await tuneAsync(repo, ['final', '--ci', '--collect', ...shards, '--out', path.join(dir, 'result'), '--json'], { GITHUB_OUTPUT: '', GITHUB_STEP_SUMMARY: '' });
    expect(r.code).toBe(6);
    const report = JSON.parse(r.stdout.slice(0, r.stdout.indexOf('\n}\n') + 2));
    expect(report.best).toBe('example-main');
    expect(report.reports.map((x: { target: string; verdict: string; casesRight: number }) => [x.target, x.verdict, x.casesRight])).toEqual([['example-main', 'VERIFIED', 6], ['flaky', 'FAILED', 5]]);
    expect(readdirSync(path.join(dir, 'result')).sort()).toEqual(['example-main', 'flaky', 'summary.md']);

    const pick = await tuneAsync(repo, ['final', '--collect', ...shards, '--commit']);
    expect(pick.code).toBe(2);
    expect(pick.stderr).toContain('error: the result sets hold 2 targets: pick the one to record');
    expect(finalTags(repo)).toBe('');
    const recorded = await tuneAsync(repo, ['final', '--collect', ...shards, '--commit', '--target', 'example-main']);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(JSON.parse(repo.git('show', 'tune/demo/final-check:.tune/demo/runs/final-check/run.json')).target).toBe('example-main');
    expect(repo.git('log', '--format=%s', '-1').trim()).toBe('tune(demo): grade final-check VERIFIED: 6/6 right');
  }, 120_000);
});

describe.concurrent("the action's final-check script, run as GitHub runs it", () => {
  const script = (ACTION.runs.steps as Array<{ id?: string; run?: string }>).find((s) => s.id === 'final')!.run!;

  /** bash -eo pipefail (GitHub's `shell: bash`), with `git-tune` on PATH as the install step leaves it. */
  function runStep(repo: TempRepo, inputs: Record<string, string>, extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; outputs: Record<string, string> }> {
    const temp = scratch(repo, `runner-${Object.values(inputs).join('-').replace(/[^a-z0-9]/gi, '')}`);
    const bin = path.join(temp, 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(CLI, path.join(bin, 'git-tune'));
    const output = path.join(temp, 'github-output');
    writeFileSync(output, '');
    const env = {
      ...process.env, ...repo.env, PATH: [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
      RUNNER_TEMP: temp, GITHUB_OUTPUT: output, GITHUB_STEP_SUMMARY: path.join(temp, 'summary.md'),
      TUNING: '', SHARD: '', COLLECT: '', TARGET: '', ALL_TARGETS: 'false', CONCURRENCY: '', OUT: '', ...inputs, ...extra,
    };
    return new Promise((resolve) => {
      const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd: repo.dir, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => {
        const lines = readFileSync(output, 'utf8').split('\n').filter(Boolean);
        resolve({ code: code ?? -1, stdout, stderr, outputs: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])) });
      });
    });
  }

  it('on a detached checkout of a pull request: names the tuning from the head branch, shards, collects with a glob, and sets every output', async () => {
    const repo = clone();
    // What actions/checkout leaves: HEAD detached at the commit, no local branch.
    repo.git('switch', '-q', '--detach');
    repo.git('branch', '-q', '-D', 'tune/demo');
    const dir = scratch(repo, 'action');
    const pr = { GITHUB_HEAD_REF: 'tune/demo' };
    for (const i of [1, 2]) {
      const shard = await runStep(repo, { SHARD: `${i}/2`, OUT: path.join(dir, 'shards', `${i}`) }, pr);
      expect(shard.code, shard.stderr).toBe(0);
      expect(shard.outputs).toMatchObject({ verdict: 'VERIFIED', 'cases-total': '3', 'result-dir': path.join(dir, 'shards', `${i}`) });
    }
    expect(repo.git('branch', '--show-current').trim()).toBe('tune/demo');
    const collect = await runStep(repo, { COLLECT: `${path.join(dir, 'shards')}/*`, OUT: path.join(dir, 'result') }, pr);
    expect(collect.code, collect.stderr).toBe(0);
    // Exactly the outputs action.yml declares, each set.
    expect(Object.keys(collect.outputs).sort()).toEqual(Object.keys(ACTION.outputs).sort());
    expect(collect.outputs).toMatchObject({ verdict: 'VERIFIED', 'cases-right': '6', 'cases-total': '6', 'best-target': '', 'result-dir': path.join(dir, 'result') });
    expect(Number(collect.outputs.tokens)).toBeGreaterThan(0);
    expect(readFileSync(path.join(dir, 'result', 'summary.md'), 'utf8')).toMatch(/^## git-tune final check of demo: VERIFIED\n/);
  }, 120_000);

  it('passes the exit code through (6 when not VERIFIED) and still sets the outputs; refuses without a tuning', async () => {
    const repo = clone();
    const failed = await runStep(repo, { TUNING: 'demo' }, { EXAMPLE_SIMULATE: `error@${selection[2]}` });
    expect(failed.code).toBe(6);
    expect(failed.outputs).toMatchObject({ verdict: 'FAILED', 'cases-right': '5' });
    repo.git('switch', '-q', '--detach');
    const none = await runStep(repo, {}, { GITHUB_HEAD_REF: '', GITHUB_REF_NAME: 'main' });
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('::error::no tuning to check: set the action\'s tuning input, or run on a tune/<name> branch\n');
  });
});
