import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tuneAsync } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { commitStep } from '../../src/app/commit.js';
import { IsoGitRepo } from '../../src/git/iso.js';

/**
 * What native git sees of the steps git-tune writes (docs/git-model.md): the
 * trailers `git log` parses, a clean `git fsck --strict`, a clean
 * `git status`, commit ids that depend only on content and pinned dates, and
 * run tags that `git tag -l` lists.
 */
const CASES = `# six cases in three classes
- id: billing-01
  class: billing
  complexity: complex
  input: Can I get a refund after 40 days?
  rubric:
    - { id: r1, text: names the 30-day window }
- id: billing-02
  class: billing
  input: Where is my invoice?
- id: billing-03
  class: billing
  input: Why was I charged twice?
- id: tech-01
  class: tech
  input: How do I reset my password?
- id: tech-02
  class: tech
  complexity: simple
  input: The app will not log me in.
- id: account-01
  class: account
  input: Close my account.
`;

const BRANCH = 'tune/support-desk';

function projectRepo(): TempRepo {
  return TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': CASES });
}

/** init, dataset import, select, batch: the spine, through the real CLI. */
const SPINE: string[][] = [
  ['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js'],
  ['dataset', 'import', 'cases.yaml'],
  ['select'],
  ['batch'],
];

async function runSpineAsync(repo: TempRepo): Promise<void> {
  for (const args of SPINE) {
    const r = await tuneAsync(repo, args);
    expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
  }
}

/** `git log` of the branch, oldest first: id, subject, parents and the trailers git parses. */
function nativeLog(repo: TempRepo, ref = BRANCH) {
  const out = repo.git('log', '--reverse', '--format=%H%x01%P%x01%s%x01%(trailers)%x02', ref);
  return out
    .split('\x02')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [oid, parents, subject, trailers] = entry.split('\x01');
      return { oid: oid!, parents: parents!.split(' ').filter(Boolean), subject: subject!, trailers: trailers!.trim() };
    });
}

describe('the spine as native git sees it', () => {
  let repo: TempRepo;
  let twin: TempRepo;
  let rev: string;
  let mainTip: string;

  beforeAll(async () => {
    // Two repositories driven through the same steps at once: one to inspect,
    // both to compare commit ids.
    repo = projectRepo();
    twin = projectRepo();
    mainTip = repo.git('rev-parse', 'main').trim();
    await Promise.all([runSpineAsync(repo), runSpineAsync(twin)]);
    // The dataset rev, computed here from what the branch holds (id:rev lines, sha256, 12 hex).
    const cases = repo.git('show', `${BRANCH}:.tune/support-desk/dataset.jsonl`).trim().split('\n').map((l) => JSON.parse(l));
    rev = createHash('sha256').update(cases.map((c: { id: string; rev: string }) => `${c.id}:${c.rev}\n`).join('')).digest('hex').slice(0, 12);
  });
  afterAll(() => {
    repo.cleanup();
    twin.cleanup();
  });

  it('gives the same commit ids for the same steps in two repositories', () => {
    const ids = repo.git('rev-list', BRANCH).trim().split('\n');
    expect(ids).toHaveLength(5);
    expect(twin.git('rev-list', BRANCH).trim().split('\n')).toEqual(ids);
  });

  it('writes one commit per step with the Tune-* trailers exactly', () => {
    const log = nativeLog(repo);
    expect(log.map((c) => c.subject)).toEqual([
      'project',
      'tune(support-desk): init',
      'tune(support-desk): dataset of 6 cases in 3 classes',
      'tune(support-desk): select 6 cases',
      'tune(support-desk): plan batch 1 (3 new + 0 recheck)',
    ]);
    expect(rev).toMatch(/^[0-9a-f]{12}$/);
    // Each step ends with the seal the fold checks (docs/reliability.md: forged trailers).
    for (const c of log.slice(1)) expect(c.trailers).toMatch(/\nTune-Seal: v1 [0-9a-f]{16}$/);
    expect(log.slice(1).map((c) => c.trailers.replace(/\nTune-Seal: .*$/, ''))).toEqual([
      'Tune-Tuning: support-desk\nTune-Step: init',
      `Tune-Tuning: support-desk\nTune-Step: dataset\nTune-Cases: 6\nTune-Dataset-Rev: ${rev}`,
      'Tune-Tuning: support-desk\nTune-Step: select\nTune-Selected: 6\nTune-Total: 6',
      'Tune-Tuning: support-desk\nTune-Step: plan\nTune-Batch: 1\nTune-Size: 3\nTune-Kind: new\n' +
        'Tune-New: billing-01,tech-01,account-01\nTune-Recheck: (none)',
    ]);
    // git's own trailer parser agrees, key by key.
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-New,valueonly)', BRANCH).trim()).toBe('billing-01,tech-01,account-01');
  });

  it('builds the branch on the first-parent line from the commit HEAD was on', () => {
    const log = nativeLog(repo);
    expect(log[0]!.oid).toBe(mainTip);
    expect(log[1]!.parents).toEqual([mainTip]);
    for (let i = 2; i < log.length; i++) expect(log[i]!.parents).toEqual([log[i - 1]!.oid]);
    expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/${BRANCH}`);
    expect(repo.git('rev-parse', 'main').trim()).toBe(mainTip); // the user's branch is untouched
  });

  it('keeps git fsck --strict clean and git status empty', () => {
    expect(repo.fsck()).toBe('');
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
    // The index holds exactly what the tip holds: no staged or unstaged difference.
    expect(repo.git('diff', '--name-only', 'HEAD')).toBe('');
    expect(repo.git('diff', '--cached', '--name-only')).toBe('');
  });

  it('stores the files of each step where native git reads them', () => {
    const plan = JSON.parse(repo.git('show', `${BRANCH}:.tune/support-desk/batches/batch01.json`));
    expect(plan).toEqual({
      batch: 1, size: 3, why: 'batch 1 takes minBatch: 3', kind: 'new',
      new: ['billing-01', 'tech-01', 'account-01'], recheck: [],
    });
    const dataset = repo.git('show', `${BRANCH}:.tune/support-desk/dataset.jsonl`).trim().split('\n').map((l) => JSON.parse(l));
    expect(dataset.map((c: { id: string }) => c.id)).toEqual(['billing-01', 'billing-02', 'billing-03', 'tech-01', 'tech-02', 'account-01']);
    expect(dataset.every((c: { rev: string }) => /^[0-9a-f]{12}$/.test(c.rev))).toBe(true);
    const tree = repo.git('ls-tree', '-r', '--name-only', BRANCH, '.tune').trim().split('\n');
    expect(tree).toEqual([
      '.tune/support-desk/README.md',
      '.tune/support-desk/USAGE.md',
      '.tune/support-desk/batches/batch01.json',
      '.tune/support-desk/config.yaml',
      '.tune/support-desk/dataset.jsonl',
      '.tune/support-desk/selection.json',
    ]);
  });

  it('writes commits byte for byte as native git commit-tree would', () => {
    const tip = repo.git('rev-parse', BRANCH).trim();
    const raw = repo.git('cat-file', 'commit', tip);
    expect(raw).toContain('author Tune Tester <tester@example.com> 1767225600 +0000\n');
    expect(raw).toContain('committer Tune Tester <tester@example.com> 1767225600 +0000\n');
    const tree = repo.git('rev-parse', `${tip}^{tree}`).trim();
    const parent = repo.git('rev-parse', `${tip}^`).trim();
    const message = raw.slice(raw.indexOf('\n\n') + 2);
    const msgFile = repo.path('.git', 'tune-test-msg');
    writeFileSync(msgFile, message);
    expect(repo.git('commit-tree', tree, '-p', parent, '-F', msgFile).trim()).toBe(tip);
  });
});

describe('deterministic commit ids', () => {
  it('records a pinned time zone as native git does', () => {
    const repo = projectRepo();
    try {
      const env = { GIT_AUTHOR_DATE: '@1767225600 +0530', GIT_COMMITTER_DATE: '2026-01-01T02:00:00-04:00' };
      expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md'], env).code).toBe(0);
      const raw = repo.git('cat-file', 'commit', BRANCH);
      expect(raw).toContain('author Tune Tester <tester@example.com> 1767225600 +0530\n');
      expect(raw).toContain('committer Tune Tester <tester@example.com> 1767247200 -0400\n');
      // Native git given the same environment writes the same commit.
      const tree = repo.git('rev-parse', `${BRANCH}^{tree}`).trim();
      const msgFile = repo.path('.git', 'tune-test-msg');
      writeFileSync(msgFile, raw.slice(raw.indexOf('\n\n') + 2));
      const saved = repo.env;
      repo.env = { ...saved, ...env };
      expect(repo.git('commit-tree', tree, '-p', 'main', '-F', msgFile).trim()).toBe(repo.git('rev-parse', BRANCH).trim());
      repo.env = saved;
    } finally {
      repo.cleanup();
    }
  });
});

describe('run tags', () => {
  const ctx = { env: { GIT_AUTHOR_NAME: 'Tune Tester', GIT_AUTHOR_EMAIL: 'tester@example.com', GIT_COMMITTER_NAME: 'Tune Tester', GIT_COMMITTER_EMAIL: 'tester@example.com', GIT_AUTHOR_DATE: '@1767225600 +0000', GIT_COMMITTER_DATE: '@1767225600 +0000' }, now: new Date(0) };

  it('tags a run commit tune/<name>/<run>, listed by git tag -l, and refuses to retag', async () => {
    const repo = projectRepo();
    try {
      expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md']).code).toBe(0);
      const iso = new IsoGitRepo(repo.dir, repo.path('.git'));
      const ref = `refs/heads/${BRANCH}`;
      const tip = await iso.resolveRef(ref);
      const step = { step: 'note' as const, tuning: 'support-desk', difficult: [] };
      const oid = await commitStep(
        { repo: iso, ref, parent: tip, tuning: 'support-desk', onBranch: true },
        { step, subject: 'tune(support-desk): a tagged step', changes: new Map([['.tune/support-desk/runs/batch01-nomem-run1/results.json', { content: '[]\n' }]]), tags: ['batch01-nomem-run1'] },
        ctx,
      );
      expect(repo.git('tag', '-l', 'tune/*').trim().split('\n')).toEqual(['tune/support-desk/batch01-nomem-run1']);
      expect(repo.git('rev-parse', 'tune/support-desk/batch01-nomem-run1^{commit}').trim()).toBe(oid);
      expect(repo.git('rev-parse', BRANCH).trim()).toBe(oid);
      expect(repo.git('status', '--porcelain')).toBe('');
      expect(repo.fsck()).toBe('');

      // Still found once native git packs it, and never moved by a second step with the same run.
      repo.git('pack-refs', '--all');
      expect((await iso.listRefs('refs/tags/tune/support-desk')).map((r: { ref: string }) => r.ref)).toEqual([
        'refs/tags/tune/support-desk/batch01-nomem-run1',
      ]);
      await expect(
        commitStep(
          { repo: iso, ref, parent: oid, tuning: 'support-desk', onBranch: true },
          { step, subject: 'again', changes: new Map([['.tune/support-desk/x', { content: 'x\n' }]]), tags: ['batch01-nomem-run1'] },
          ctx,
        ),
      ).rejects.toMatchObject({ code: 'tag-exists', exitCode: 2 });
      expect(repo.git('rev-parse', BRANCH).trim()).toBe(oid);
      expect(repo.git('status', '--porcelain')).toBe('');
    } finally {
      repo.cleanup();
    }
  });
});
