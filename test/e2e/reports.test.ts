import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAND_END, HAND_START } from '../../src/core/readme.js';
import { ROOT, tuneAsync } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { checkFlowchart, checkXyChart, mermaidBlocks } from '../helpers/mermaid.js';

/**
 * What people read, through the real CLI: the README.md and USAGE.md in the
 * commit of every step, `git tune log`, and `git tune review <batch>` of a
 * batch with a confirmed edit and a reverted one.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const DIR = '.tune/desk';
const CASES = [
  '- { id: a, class: c, input: a, checks: [{ type: contains, value: politely }] }',
  '- { id: b, class: c, input: b, checks: [{ type: contains, value: refund }] }',
  '- { id: c, class: c, input: c, checks: [{ type: contains, value: politely }] }',
].join('\n');


/** Commit ids and the checkout's own path (the runner command names it) vary between machines. */
const scrub = (text: string) => text.split(ROOT).join('<root>').replace(/\b[0-9a-f]{7,40}\b/g, '<id>');
const HAND = '## What is tuned and why\n\nThe desk agent\'s one prompt: every answer polite, refunds offered.\n\n## Open problems\n\n- none yet';

describe('README.md and USAGE.md in every step, log and review', () => {
  let repo: TempRepo;
  /** After each step: its kind, and README.md as that commit holds it. */
  const readmes: Array<{ step: string; readme: string; next: { message: string; command: string | null; notes: string[] } }> = [];
  let revertCommit = '';

  beforeAll(async () => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': `${CASES}\n` });
    const ok = async (args: string[]) => {
      const r = await tuneAsync(repo, args);
      expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
      const step = repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)', 'tune/desk').trim();
      const next = JSON.parse((await tuneAsync(repo, ['next', '--json'])).stdout);
      // A README cannot hold the id of its own commit: a pending edit made by this step is "this commit".
      next.message = next.message.replace(repo.git('rev-parse', '--short=7', 'tune/desk').trim(), 'this commit');
      readmes.push({ step, readme: repo.git('show', `tune/desk:${DIR}/README.md`), next });
      expect(repo.git('status', '--porcelain', '--untracked-files=no'), `after git tune ${args.join(' ')}`).toBe('');
    };
    await ok(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--no-hooks']);
    await ok(['dataset', 'import', 'cases.yaml']);
    await ok(['config', 'set', 'maxBatch', '6']);
    await ok(['select']);
    await ok(['batch']);
    await ok(['run']);
    await ok(['grade', '--verdict', 'PROGRESS']);
    // The confirmed edit.
    repo.write({ 'agents/prompt.md': 'Answer politely. Offer a refund.\n', [`${DIR}/runs/batch01-nomem-run1/changes.md`]: '## Refunds\nOffer a refund.\nAims: b\n' });
    await ok(['edit']);
    // The hand-written part, written in the working tree: the next step commits it.
    const readme = readFileSync(repo.path(DIR, 'README.md'), 'utf8');
    writeFileSync(repo.path(DIR, 'README.md'), readme.replace(/(<!-- git-tune:hand-written:start[^>]*-->\n)[\s\S]*?(\n<!-- git-tune:hand-written:end -->)/, `$1${HAND}$2`));
    await ok(['run']);
    await ok(['grade', '--verdict', 'PROGRESS']);
    // The edit that is reverted.
    repo.write({ 'agents/prompt.md': 'Answer rudely. Offer a refund.\n', [`${DIR}/runs/batch01-nomem-run2/changes.md`]: '## Tone\nShorter answers.\n' });
    await ok(['edit']);
    await ok(['run']);
    // Recording the grade reverts the edit run 3 did not confirm: a revert commit, then the grade commit.
    await ok(['grade', '--verdict', 'REGRESSION']);
    revertCommit = repo.git('rev-parse', 'tune/desk~1').trim();
  });
  afterAll(() => repo.cleanup());

  it('every step commit holds a README whose map parses with one now node, and whose next is git tune next', () => {
    expect(readmes.map((r) => r.step)).toEqual([
      'init', 'dataset', 'config', 'select', 'plan', 'run', 'grade', 'edit', 'run', 'grade', 'edit', 'run', 'grade',
    ]);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Step,valueonly)', revertCommit).trim()).toBe('revert');
    for (const { step, readme, next } of readmes) {
      const [map] = mermaidBlocks(readme);
      expect(checkFlowchart(map!).problems, step).toEqual([]);
      const section = readme.slice(readme.indexOf('## Next'), readme.indexOf('## Log'));
      expect(section, step).toContain(next.message);
      if (next.command) expect(section, step).toContain(`\`\`\`sh\n${next.command}\n\`\`\``);
      for (const note of next.notes) expect(section, step).toContain(note);
    }
    // Every commit of the branch since init has one (run-start commits too).
    const log = repo.git('log', '--format=%H', 'main..tune/desk').trim().split('\n');
    for (const oid of log) expect(repo.git('ls-tree', '--name-only', oid, `${DIR}/`)).toContain(`${DIR}/README.md`);
    expect(repo.fsck()).toBe('');
  });

  it('the hand-written part written in the working tree is committed by the next step and kept by every later one', () => {
    const at = readmes.findIndex((r) => r.readme.includes(HAND));
    expect(readmes[at]!.step).toBe('run');
    expect(readmes[at - 1]!.next.notes.join(' ')).toContain('still has the placeholder');
    for (const r of readmes.slice(at)) {
      expect(r.readme).toContain(`${HAND_START}\n${HAND}\n${HAND_END}`);
      expect(r.next.notes.join(' ')).not.toContain('placeholder');
    }
  });

  it('the README at the tip: batches table, difficult cases, log with findings and changes (snapshot, ids scrubbed)', () => {
    const readme = readFileSync(repo.path(DIR, 'README.md'), 'utf8');
    expect(readme).toBe(repo.git('show', `tune/desk:${DIR}/README.md`));
    expect(readme).toContain('[edit](runs/batch01-nomem-run1/changes.md) confirmed');
    expect(readme).toContain('[edit](runs/batch01-nomem-run2/changes.md) reverted');
    expect(scrub(readme)).toMatchSnapshot();
  });

  it('USAGE.md: by model, batch and half, run, and the chart (rewritten by runs only)', () => {
    const usage = repo.git('show', `tune/desk:${DIR}/USAGE.md`);
    expect(usage).toContain('| test-model | 1,900 | 380 | 0 | 2,280 | $0.1900 |');
    expect(usage).toContain('| 1 | without memory | 3 | 2,280 | $0.1900 | 38 |');
    expect(checkXyChart(mermaidBlocks(usage)[0]!)).toEqual([]);
    // The grade and revert after the last run left it as that run wrote it.
    const lastRun = repo.git('log', '-1', '--format=%H', '--grep=Tune-Step: run$', 'tune/desk').trim();
    expect(repo.git('log', '-1', '--format=%H', 'tune/desk', '--', `${DIR}/USAGE.md`).trim()).toBe(lastRun);
  });

  it('git tune log: every step newest first, with where each edit stands', async () => {
    const text = await tuneAsync(repo, ['log']);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('tuning desk: 17 steps, newest first');
    expect(lines[3]).toMatch(/^17 +[0-9a-f]{7} +grade +batch01-nomem-run3 +graded batch01-nomem-run3: REGRESSION, 2 wrong$/);
    expect(lines[4]).toMatch(/^16 +[0-9a-f]{7} +revert +reverted [0-9a-f]{7}$/);
    expect(text.stdout).toContain(`reverted by ${revertCommit.slice(0, 7)} (batch01-nomem-run3 did not confirm it)`);
    const json = JSON.parse((await tuneAsync(repo, ['log', '--json'])).stdout);
    const edits = json.steps.filter((s: { step: string }) => s.step === 'edit');
    expect(edits.map((e: { edit: unknown }) => e.edit)).toEqual([
      {
        status: 'reverted', run: 'batch01-nomem-run2', aims: [], settledBy: revertCommit, hand: false,
        triedBy: 'batch01-nomem-run3', revertedBy: revertCommit, kept: null, fate: `reverted by ${revertCommit.slice(0, 7)} (batch01-nomem-run3 did not confirm it)`,
      },
      {
        status: 'confirmed', run: 'batch01-nomem-run1', aims: ['b'], settledBy: 'batch01-nomem-run2', hand: false,
        triedBy: 'batch01-nomem-run2', revertedBy: null, kept: null, fate: 'confirmed by batch01-nomem-run2',
      },
    ]);
  });

  it('git tune review 1: runs, a confirmed edit and a reverted one as diffs with the runs that tried them', async () => {
    const r = await tuneAsync(repo, ['review', '1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const review = JSON.parse(r.stdout);
    expect(review.runs.map((x: { run: string; verdict: string; wrong: string[] }) => [x.run, x.verdict, x.wrong])).toEqual([
      ['batch01-nomem-run1', 'PROGRESS', ['b']],
      ['batch01-nomem-run2', 'PROGRESS', []],
      ['batch01-nomem-run3', 'REGRESSION', ['a', 'c']],
    ]);
    const [confirmed, reverted] = review.edits;
    expect(confirmed).toMatchObject({ run: 'batch01-nomem-run1', status: 'confirmed', triedBy: 'batch01-nomem-run2', revertedBy: null, aims: ['b'] });
    expect(confirmed.files[0].patch).toContain('-Answer politely.\n+Answer politely. Offer a refund.\n');
    expect(reverted).toMatchObject({ run: 'batch01-nomem-run2', status: 'reverted', triedBy: 'batch01-nomem-run3', revertedBy: revertCommit });
    // a and c were re-run on the rude prose and stayed wrong: the edit broke them, they are not flaky, and its revert is the answer.
    expect(review.difficult).toEqual([]);
    const text = (await tuneAsync(repo, ['review', 'batch01'])).stdout;
    expect(text).toBe(`${review.markdown}\n`.replace(/\n\n$/, '\n'));
    expect(scrub(text)).toMatchSnapshot();
  });

  it('review links commits on GitHub when origin is there', async () => {
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/desk.git');
    try {
      const text = (await tuneAsync(repo, ['review', '1'])).stdout;
      expect(text).toContain(`reverted** by \`${revertCommit.slice(0, 7)}\``);
      expect(text).toMatch(/\[`[0-9a-f]{7}`\]\(https:\/\/github\.com\/acme\/desk\/commit\/[0-9a-f]{40}\) edit after batch01-nomem-run1/);
    } finally {
      repo.git('remote', 'remove', 'origin');
    }
  });

  it('an edited README whose markers are gone is refused, not overwritten; nothing is written', async () => {
    const file = repo.path(DIR, 'README.md');
    const before = readFileSync(file, 'utf8');
    const tip = repo.git('rev-parse', 'tune/desk');
    writeFileSync(file, before.replace(HAND_END, ''));
    const r = await tuneAsync(repo, ['difficult', 'add', 'a', '--why', 'wrong']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('its hand-written part can no longer be found');
    expect(repo.git('rev-parse', 'tune/desk')).toBe(tip);
    writeFileSync(file, before);
  });
});
