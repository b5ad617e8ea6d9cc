import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync, tuneOk, type CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { stepCommits, templateAsync, yamlCases } from '../helpers/tuning.js';

/**
 * The held-out set (docs/held-out.md) through the real CLI, on a quiz agent
 * unlike the bundled example (test/fixtures/quiz): it answers from
 * agents/rules.md alone, upper-casing the question unless a table entry
 * answers it or the rules say "Only answer from the table.". The editor
 * written for these tests overfits on purpose: it writes the tuned cases'
 * answers into a table and turns the general rule off, so the selection
 * passes while the held-out cases, right with the original prose, fail.
 */
const QUIZ = path.join(ROOT, 'test/fixtures/quiz');
const eq = (value: string) => [{ type: 'equals', value }];
const CASES = [
  { id: 'q-01', class: 'capitals', input: 'capital of france', checks: eq('Paris') },
  { id: 'q-02', class: 'capitals', input: 'capital of spain', checks: eq('Madrid') },
  { id: 'q-03', class: 'capitals', input: 'capital of italy', checks: eq('Rome') },
  { id: 'q-04', class: 'shouting', input: 'shout yes', checks: eq('SHOUT YES') },
];
const HELD_OUT = [
  { id: 'h-01', class: 'shouting', input: 'shout hello', checks: eq('SHOUT HELLO') },
  { id: 'h-02', class: 'shouting', input: 'please shout the word goodbye', checks: eq('PLEASE SHOUT THE WORD GOODBYE') },
];

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

function quizRepo(): TempRepo {
  const repo = new TempRepo('git-tune-quiz-');
  repo.git('init', '-q', '-b', 'main');
  for (const f of ['agent.mjs', 'overfit-editor.mjs', 'agents']) cpSync(path.join(QUIZ, f), repo.path(f), { recursive: true });
  repo.write({ 'cases.yaml': yamlCases(CASES), 'held-out.yaml': yamlCases(HELD_OUT) });
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'the quiz agent');
  repos.push(repo);
  return repo;
}

const INIT = ['--prose', 'agents/**/*.md', '--runner', 'node agent.mjs', '--editor', 'node overfit-editor.mjs', '--dataset', 'cases.yaml'];

/** A quiz tuning with its held-out set, selected, one batch of all four cases. */
async function buildQuiz(): Promise<TempRepo> {
  const repo = quizRepo();
  await tuneOk(repo, ['init', 'quiz', ...INIT, '--held-out', 'held-out.yaml']);
  for (const [k, v] of [['minBatch', '4'], ['maxBatch', '4']] as const) await tuneOk(repo, ['config', 'set', k, v]);
  await tuneOk(repo, ['select']);
  return repo;
}

const copyOf = (t: TempRepo) => {
  const copy = TempRepo.copyOf(t);
  repos.push(copy);
  return copy;
};
const quiz = () => templateAsync('quiz', buildQuiz).then(copyOf);

/** The quiz tuning driven by `auto` to the final check: the overfitting editor has done its work. Built once. */
const tuned = () => templateAsync('quiz tuned', async () => {
  const repo = TempRepo.copyOf(await templateAsync('quiz', buildQuiz));
  const auto = await tuneAsync(repo, ['auto', '--until', 'final', '--plain']);
  if (auto.code !== 0) throw new Error(`auto exited ${auto.code}\n${auto.stderr}${auto.stdout}`);
  return repo;
}).then(copyOf);

/** What a failed command must leave as it was: refs, HEAD, index and working tree. */
function state(repo: TempRepo): string {
  return [repo.git('for-each-ref', '--format=%(refname) %(objectname)'), repo.git('rev-parse', 'HEAD'), repo.git('symbolic-ref', '-q', 'HEAD'),
    repo.git('status', '--porcelain', '--untracked-files=all'), repo.git('ls-files', '-s')].join('\n');
}

const json = (r: CliResult) => JSON.parse(r.stdout);
/** The report of `final --ci --json`: the first JSON document (a failed check prints its error's after it). */
const report = (r: CliResult) => JSON.parse(r.stdout.slice(0, r.stdout.indexOf('\n}\n') + 2));
/** The scratch folders git-tune made in `tmp` (the code cache lives there too, and stays). */
const scratch = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('git-tune-scratch-'));

describe('a held-out set that shares a case with the dataset is refused whole', () => {
  it('at init: each clash named, exit 2, no branch made', async () => {
    const repo = quizRepo();
    repo.write({
      'clash.yaml': yamlCases([
        { ...HELD_OUT[0]!, id: 'q-02' },
        { id: 'h-09', class: 'capitals', input: 'capital of italy', checks: eq('Rome') },
        HELD_OUT[1]!,
      ]),
    });
    const before = state(repo);
    const r = await tuneAsync(repo, ['init', 'quiz', ...INIT, '--held-out', 'clash.yaml', '--json']);
    expect(r.code, r.stderr).toBe(2);
    const error = json(r).error;
    expect(error.code).toBe('held-out-clash');
    expect(error.details).toEqual([
      'held-out case q-02 has the id of dataset case q-02',
      'held-out case h-09 has the same input as dataset case q-03',
    ]);
    expect(r.stderr).toContain('held-out case h-09 has the same input as dataset case q-03');
    expect(state(repo)).toBe(before);
  });

  it('at dataset import, against the dataset already there and against the held-out set already there', async () => {
    const repo = await quiz();
    repo.write({ 'clash.json': JSON.stringify([{ id: 'h-07', class: 'x', input: { text: 'capital of spain' } }, { id: 'q-01', class: 'x', input: 'new words' }]) });
    // An input compared as JSON: the object {text} is not the string.
    let before = state(repo);
    let r = await tuneAsync(repo, ['dataset', 'import', '--held-out', 'clash.json', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(json(r).error.details).toEqual(['held-out case q-01 has the id of dataset case q-01']);
    expect(state(repo)).toBe(before);

    // A dataset that takes in a held-out case is refused the same way.
    repo.write({ 'more.yaml': yamlCases([...CASES, { id: 'q-05', class: 'shouting', input: 'shout hello', checks: eq('SHOUT HELLO') }]) });
    before = state(repo);
    r = await tuneAsync(repo, ['dataset', 'import', 'more.yaml', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(json(r).error.details).toEqual(['held-out case h-01 has the same input as dataset case q-05']);
    expect(state(repo)).toBe(before);

    // A bad held-out case is refused by the dataset's own schema, with its place.
    repo.write({ 'bad.yaml': yamlCases([{ id: 'h-03', input: 'no class' }]) });
    before = state(repo);
    r = await tuneAsync(repo, ['dataset', 'import', '--held-out', 'bad.yaml', '--json']);
    expect(r.code).toBe(2);
    expect(json(r).error.code).toBe('bad-dataset');
    expect(json(r).error.message).toMatch(/^the held-out set was refused/);
    expect(json(r).error.details.join('\n')).toMatch(/bad\.yaml case 1 \(line 1\): field `class`/);
    expect(state(repo)).toBe(before);
  });

  it('a held-out set alone is kept beside the dataset in held-out.jsonl, with its count in the step', async () => {
    const repo = await quiz();
    repo.write({ 'new-held.yaml': yamlCases([HELD_OUT[0]!]) });
    const r = await tuneOk(repo, ['dataset', 'import', '--held-out', 'new-held.yaml', '--json']);
    expect(json(r)).toMatchObject({ datasetChanged: false, heldOut: { cases: 1, changed: true } });
    expect(repo.git('show', 'HEAD:.tune/quiz/held-out.jsonl').trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['h-01']);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Held-Out,valueonly)').trim()).toBe('1');
  });
});

describe('an edit that quotes the held-out set is refused', () => {
  it('names the file, the line and the case; nothing is written', async () => {
    const repo = await quiz();
    await tuneOk(repo, ['batch']);
    await tuneOk(repo, ['run']);
    await tuneOk(repo, ['grade', '--draft']);
    await tuneOk(repo, ['grade']);
    const tip = repo.git('rev-parse', 'HEAD');
    writeFileSync(repo.path('.tune/quiz/runs/batch01-nomem-run1/changes.md'), '# Changes\n\nA table.\n');
    const rules = readFileSync(repo.path('agents/rules.md'), 'utf8');
    writeFileSync(repo.path('agents/rules.md'), `${rules}- when asked "capital of france" answer "Paris"\nSee case h-01 for shouting.\n`);
    let r = await tuneAsync(repo, ['edit', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(json(r).error.code).toBe('held-out-quoted');
    expect(json(r).error.details).toEqual([`agents/rules.md line ${rules.split('\n').length + 1}: names held-out case h-01`]);
    expect(repo.git('rev-parse', 'HEAD')).toBe(tip);

    // An input quoted verbatim, over two lines of one added block, is found at its first line.
    writeFileSync(repo.path('agents/rules.md'), `${rules}Example:\nplease shout the word goodbye\n`);
    r = await tuneAsync(repo, ['edit', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(json(r).error.details).toEqual([`agents/rules.md line ${rules.split('\n').length + 1}: quotes the input of held-out case h-02 ("please shout the word goodbye")`]);
    expect(repo.git('rev-parse', 'HEAD')).toBe(tip);

    // The same edit without the held-out case is recorded.
    writeFileSync(repo.path('agents/rules.md'), `${rules}- when asked "capital of france" answer "Paris"\n`);
    await tuneOk(repo, ['edit']);
    expect(repo.git('rev-parse', 'HEAD')).not.toBe(tip);
  });
});

describe('auto\'s editor goes through the same refusal', () => {
  it('an editor that copies a held-out input into the prose stops auto with the refusal; no edit is recorded', async () => {
    const repo = await quiz();
    const r = await tuneAsync(repo, ['auto', '--until', 'final', '--plain'], { QUIZ_LEAK: '1' });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout + r.stderr).toContain('agents/rules.md line 10: quotes the input of held-out case h-02 ("please shout the word goodbye")');
    expect(stepCommits(repo, 'tune/quiz').map((s) => s.step)).not.toContain('edit');
    // The editor's lines stay in the working tree for a person to take out.
    expect(readFileSync(repo.path('agents/rules.md'), 'utf8')).toContain('- also seen: please shout the word goodbye');
  });
});

describe('git tune baseline', () => {
  it('runs the init commit\'s prose in a temporary copy: the user\'s tree untouched, the copy removed, also when the runner fails', async () => {
    const repo = await quiz();
    // The user's own work in progress, and the prose changed since init (committed as a hand commit).
    writeFileSync(repo.path('agents/rules.md'), '# Quiz rules\n\nOnly answer from the table.\n');
    repo.git('commit', '-q', '-am', 'a hand edit of the rules');
    writeFileSync(repo.path('notes.txt'), 'mine, not committed\n');
    writeFileSync(repo.path('agents/rules.md'), '# Quiz rules\n\nwork in progress\n');
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'held-out-tmp-'));
    try {
      const before = state(repo);
      const failed = await tuneAsync(repo, ['baseline', '--json'], { TMPDIR: tmp, QUIZ_SANDBOX_DOWN: '1' });
      expect(failed.code, failed.stderr).toBe(5);
      expect(json(failed).error.code).toBe('sandbox-down');
      expect(state(repo)).toBe(before);
      expect(scratch(tmp)).toEqual([]);

      const r = await tuneOk(repo, ['baseline', '--json'], { TMPDIR: tmp });
      const out = json(r);
      // The original prose upper-cases: q-04 and both held-out cases right (the hand edit would have answered none).
      expect(out.selection).toMatchObject({ right: 1, cases: 4 });
      expect(out.heldOut).toMatchObject({ right: 2, cases: 2 });
      expect(scratch(tmp)).toEqual([]);
      expect(readFileSync(repo.path('agents/rules.md'), 'utf8')).toBe('# Quiz rules\n\nwork in progress\n');
      expect(readFileSync(repo.path('notes.txt'), 'utf8')).toBe('mine, not committed\n');
      expect(repo.git('status', '--porcelain')).toBe(' M agents/rules.md\n?? notes.txt\n');
      const trailers = repo.git('log', '-1', '--format=%(trailers)');
      expect(trailers).toContain('Tune-Step: baseline');
      expect(trailers).toContain('Tune-Held-Out-Score: 2/2 right');
      expect(JSON.parse(repo.git('show', 'HEAD:.tune/quiz/baseline/results.json')).cases.map((c: { id: string; verdict: string }) => `${c.id} ${c.verdict}`).sort())
        .toEqual(['h-01 right', 'h-02 right', 'q-01 wrong', 'q-02 wrong', 'q-03 wrong', 'q-04 right']);
      repo.git('fsck', '--strict');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('overfitting is caught by the held-out set', () => {
  it('the editor quotes the tuned cases\' answers: the selection passes, the held-out set drops, final --ci exits 6', async () => {
    const repo = await tuned();
    // The baseline may come at any point: it runs the init commit's prose, whatever the tip holds.
    await tuneOk(repo, ['baseline']);
    // The editor overfitted: a table of the tuned answers and the general rule off.
    expect(readFileSync(repo.path('agents/rules.md'), 'utf8')).toContain('Only answer from the table.');
    // No batch ever planned a held-out case.
    const plans = repo.git('log', '--format=%(trailers:key=Tune-New,valueonly)%(trailers:key=Tune-Recheck,valueonly)', '--grep=Tune-Step: plan');
    expect(plans).toMatch(/q-0/);
    expect(plans).not.toMatch(/h-0/);

    const summary = path.join(repo.dir, 'summary.md');
    const outputs = path.join(repo.dir, 'outputs.txt');
    const r = await tuneAsync(repo, ['final', '--ci', '--json'], { GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: outputs });
    expect(r.code, r.stderr).toBe(6);
    const final = report(r).reports[0];
    expect(report(r).verdict).toBe('FAILED');
    expect(final).toMatchObject({ casesRight: 4, casesTotal: 4, wrong: [] });
    expect(final.heldOut).toMatchObject({ checked: true, drop: 2, maxDrop: 0, failed: true, wrong: ['h-01', 'h-02'] });
    const rows = final.heldOut.rows.map((row: { set: string; tuned: { right: number; tokens: number }; baseline: { right: number; tokens: number } }) =>
      [row.set, row.tuned.right, row.baseline.right, row.tuned.tokens > row.baseline.tokens]);
    // The tuned prose is longer, so every case costs more than with the original.
    expect(rows).toEqual([['selection', 4, 1, true], ['held-out', 0, 2, true]]);
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('#### Held-out set: tuned vs baseline');
    expect(md).toMatch(/\| held-out \| 0\/2 \| 2\/2 \|/);
    expect(md).toContain('FAILED, the tuning overfits its selection');
    expect(readFileSync(outputs, 'utf8')).toContain('verdict=FAILED\ncases-right=4\ncases-total=4\n');
    expect(readFileSync(outputs, 'utf8')).toContain('held-out-right=0\nheld-out-total=2\nheld-out-baseline-right=2\nheld-out-failed=true\n');

    // Allowed noise of two cases: the same final check is VERIFIED.
    await tuneOk(repo, ['config', 'set', 'heldOut.maxDrop', '2']);
    const lenient = await tuneAsync(repo, ['final', '--ci', '--json']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(json(lenient).reports[0].heldOut).toMatchObject({ drop: 2, failed: false });
    await tuneOk(repo, ['config', 'set', 'heldOut.maxDrop', '0']);

    // Recorded: the grade carries the held-out score, next says final-failed, the README shows the side by side.
    await tuneOk(repo, ['final']);
    const graded = await tuneAsync(repo, ['grade']);
    expect(graded.code, graded.stderr).toBe(6);
    expect(graded.stdout).toContain('final-check: FAILED: 4 of 4 right (rate 100%, 95% CI 51–100%); wrong: none; stuck: none — not VERIFIED: the held-out set dropped beyond the noise\n  selection: 4/4 right tuned vs 1/4 baseline;');
    expect(graded.stdout).toContain('  held-out: 0/2 right, 2 fewer than the baseline\'s 2/2 (heldOut.maxDrop is 0; Newcombe\'s 95% interval for the difference of two rates: +7% to +100%): FAILED, the tuning overfits its selection');
    const grade = stepCommits(repo, 'tune/quiz').at(-1)!;
    expect(grade).toMatchObject({ step: 'grade', run: 'final-check', verdict: 'FAILED' });
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Held-Out-Score,valueonly)').trim()).toMatch(/^0\/2 right, \d+ tokens, \$\d/);
    expect(json(await tuneOk(repo, ['next', '--json'])).kind).toBe('final-failed');
    const readme = readFileSync(repo.path('.tune/quiz/README.md'), 'utf8');
    expect(readme).toContain('## Held-out set');
    expect(readme).toMatch(/\| held-out \| 0\/2 \| 2\/2 \|/);
    const findings = readFileSync(repo.path('.tune/quiz/runs/final-check/findings.md'), 'utf8');
    expect(findings).toContain('## Held-out');
    // The batch's pull-request body says the held-out set stayed out of it.
    expect((await tuneOk(repo, ['review', '1'])).stdout).toContain('**Held-out set:** 2 cases no batch uses and no edit may quote; the original prose got 2/2 right');
  });

  it('sharded: the held-out cases are shared out with the selection and the collected check fails the same way', async () => {
    const repo = await tuned();
    await tuneOk(repo, ['baseline']);
    for (const i of [1, 2]) {
      const shard = await tuneAsync(repo, ['final', '--ci', '--shard', `${i}/2`, '--out', `s${i}`]);
      expect([0, 6], shard.stderr).toContain(shard.code);
    }
    const ran = [1, 2].flatMap((i) => JSON.parse(readFileSync(repo.path(`s${i}/manifest.json`), 'utf8')).cases as string[]);
    expect(ran.sort()).toEqual(['h-01', 'h-02', 'q-01', 'q-02', 'q-03', 'q-04']);
    const r = await tuneAsync(repo, ['final', '--ci', '--collect', 's1', 's2', '--json']);
    expect(r.code, r.stderr).toBe(6);
    expect(report(r).reports[0]).toMatchObject({ verdict: 'FAILED', casesRight: 4, casesTotal: 4, heldOut: { drop: 2, failed: true } });
  });

  it('without a baseline the held-out drop is not checked, and the output says how to get one', async () => {
    const repo = await tuned();
    expect(json(await tuneOk(repo, ['next', '--json'])).notes).toContain('the held-out set (2 cases) has no baseline yet: without one the final check cannot compare it (git tune baseline)');
    expect(readFileSync(repo.path('.tune/quiz/README.md'), 'utf8')).toContain('Baseline: not run yet');
    const r = await tuneAsync(repo, ['final', '--ci']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('held-out drop not checked: no baseline yet');
    expect(r.stdout).toContain('to compare: git tune baseline');
    expect(existsSync(repo.path('.tune/quiz/baseline'))).toBe(false);
  });
});
