import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { revOrNull, TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Issue 9, the user's work is safe: whatever a user has uncommitted beside a
 * tuning (changed, staged, new files) is never staged, committed, overwritten
 * or deleted by a step; a step that would write over it refuses and names
 * it; and no step is written from the wrong branch, a detached HEAD, or the
 * middle of a rebase, merge, cherry-pick, revert or bisect.
 */
const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

let template: Promise<TempRepo> | null = null;
/** A planned tuning over a, b (right) and c (wrong), in a project with files of its own. */
function fresh(): Promise<TempRepo> {
  template ??= (async () => {
    const repo = await plannedRepo([plainCase('a'), plainCase('b'), plainCase('c', { checks: [{ type: 'equals', value: 'nope' }] })]);
    repos.push(repo);
    repo.write({ 'src/app.js': 'export const app = 1;\n', 'notes.txt': 'project notes\n' });
    repo.git('add', 'src/app.js', 'notes.txt');
    repo.git('commit', '-q', '-m', 'project files on the tuning branch');
    return repo;
  })();
  return template.then((t) => {
    const repo = TempRepo.copyOf(t);
    repos.push(repo);
    return repo;
  });
}

const BRANCH = 'refs/heads/tune/desk';

describe.concurrent('uncommitted work beside a tuning', () => {
  it('changed, staged, new and untracked files survive every step: never staged, committed, overwritten or deleted', async ({ expect }) => {
    const repo = await fresh();
    repo.write({ 'src/app.js': 'export const app = 2; // work in progress\n' }); // changed, not staged
    repo.write({ 'notes.txt': 'project notes\nstaged line\n', 'draft.md': '# a new page\n' });
    repo.git('add', 'notes.txt', 'draft.md'); // staged: a change and a new file
    repo.write({ 'notes.txt': 'project notes\nstaged line\nand an unstaged one\n' }); // and changed again after staging
    repo.write({ 'scratch.txt': 'untracked\n', '.tune/desk/my-notes.md': 'my own notes inside the tuning folder\n' });
    const staged = () => repo.git('diff', '--cached', '--name-only');
    const stagedBlobs = () => repo.git('ls-files', '-s', 'notes.txt', 'draft.md');
    const before = { staged: staged(), blobs: stagedBlobs(), unstaged: repo.git('diff', '--name-only') };
    expect(before.staged).toBe('draft.md\nnotes.txt\n');

    const steps: string[][] = [
      ['config', 'set', 'seed', '3'], ['run'], ['grade', '--draft'], ['grade'],
      ['difficult', 'add', 'c', '--why', 'wrong'], ['difficult', 'fix', 'c'],
    ];
    for (const step of steps) {
      const tip = revOrNull(repo, BRANCH);
      await tuneOk(repo, step);
      // The step's commits hold its own files only.
      if (revOrNull(repo, BRANCH) !== tip) {
        const files = repo.git('diff', '--name-only', `${tip}..${BRANCH}`).trim().split('\n');
        expect(files.filter((f) => !f.startsWith('.tune/desk/') || f === '.tune/desk/my-notes.md'), step.join(' ')).toEqual([]);
      }
      expect(staged(), step.join(' ')).toBe(before.staged);
      expect(stagedBlobs(), step.join(' ')).toBe(before.blobs);
      expect(repo.git('diff', '--name-only'), step.join(' ')).toBe(before.unstaged);
    }
    expect(readFileSync(repo.path('src/app.js'), 'utf8')).toBe('export const app = 2; // work in progress\n');
    expect(readFileSync(repo.path('notes.txt'), 'utf8')).toBe('project notes\nstaged line\nand an unstaged one\n');
    expect(readFileSync(repo.path('scratch.txt'), 'utf8')).toBe('untracked\n');
    expect(readFileSync(repo.path('.tune/desk/my-notes.md'), 'utf8')).toBe('my own notes inside the tuning folder\n');
    expect(repo.git('status', '--porcelain')).toBe([
      'A  draft.md', 'MM notes.txt', ' M src/app.js', '?? .tune/desk/my-notes.md', '?? cases.yaml', '?? scratch.txt', '',
    ].join('\n'));
    // The user's own commit then holds exactly what they staged.
    repo.git('commit', '-q', '-m', 'my work');
    expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe('draft.md\nnotes.txt\n');
    expect(repo.git('show', 'HEAD:notes.txt')).toBe('project notes\nstaged line\n');
  });

  it('a step that would write over a changed file refuses, names it, and writes nothing', async ({ expect }) => {
    const repo = await fresh();
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    const list = '.tune/desk/difficult.json';
    const mine = readFileSync(repo.path(list), 'utf8').replace('"flaky"', '"flaky" ');
    writeFileSync(repo.path(list), mine);
    const tip = revOrNull(repo, BRANCH);
    const r = await tuneAsync(repo, ['difficult', 'add', 'b', '--why', 'wrong']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(list);
    expect(r.stderr).toContain(`fix: git stash push -- '${list}'   # or commit them; then the command again`);
    expect(revOrNull(repo, BRANCH)).toBe(tip);
    expect(readFileSync(repo.path(list), 'utf8')).toBe(mine);
  });

  it('a change staged in a file the step writes is not lost, even when the file on disk is back as committed', async ({ expect }) => {
    const repo = await fresh();
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    const list = '.tune/desk/difficult.json';
    const committed = readFileSync(repo.path(list), 'utf8');
    writeFileSync(repo.path(list), committed.replace('"flaky"', '"wrong"'));
    repo.git('add', list);
    writeFileSync(repo.path(list), committed); // the working tree is back; the index still holds the change
    const stagedBlob = repo.git('ls-files', '-s', list);
    const tip = revOrNull(repo, BRANCH);
    const r = await tuneAsync(repo, ['difficult', 'add', 'b', '--why', 'wrong']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${list} (staged)`);
    expect(revOrNull(repo, BRANCH)).toBe(tip);
    expect(repo.git('ls-files', '-s', list)).toBe(stagedBlob);
  });
});

describe.concurrent('prose changed while a run runs', () => {
  it('is put back as committed (the run used that), and what was there is kept aside, not lost', async ({ expect }) => {
    const repo = await fresh();
    const running = tuneAsync(repo, ['run'], { TEST_SLEEP_MS: '400' });
    const deadline = Date.now() + 30_000;
    // Once cases run (their logs appear), the run started from the committed prose.
    while (!existsSync(repo.path('.git/tune/desk/runs/batch01-nomem-run1/logs')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    repo.write({ 'agents/prompt.md': 'Answer politely, and say why.\n' }); // the next edit, started early
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('restored from');
    expect(readFileSync(repo.path('agents/prompt.md'), 'utf8')).toBe('Answer politely.\n');
    expect(readFileSync(repo.path('.git/tune/desk/changed-during-run/batch01-nomem-run1/agents/prompt.md'), 'utf8')).toBe('Answer politely, and say why.\n');
    expect(r.stderr).toContain('.git/tune/desk/changed-during-run/batch01-nomem-run1/');
  });
});

describe.concurrent('git states a step is refused in, with the fix, writing nothing', () => {
  const refused = async (repo: TempRepo, expect: any, code: number, message: RegExp, fix: RegExp, args = ['difficult', 'add', 'a', '--why', 'wrong']) => {
    const tip = revOrNull(repo, BRANCH);
    const status = repo.git('status', '--porcelain');
    const r = await tuneAsync(repo, args);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(fix);
    expect(revOrNull(repo, BRANCH)).toBe(tip);
    expect(repo.git('status', '--porcelain')).toBe(status);
  };

  it('another branch checked out', async ({ expect }) => {
    const repo = await fresh();
    repo.git('switch', '-q', 'main');
    await refused(repo, expect, 2, /main is not a tuning branch/, /fix: git switch tune\/desk/);
    await refused(repo, expect, 2, /tuning desk is not checked out/, /fix: git switch tune\/desk/, ['difficult', 'add', 'a', '--why', 'wrong', '--tuning', 'desk']);
  });

  it('a detached HEAD', async ({ expect }) => {
    const repo = await fresh();
    repo.git('checkout', '-q', '--detach');
    await refused(repo, expect, 2, /HEAD is detached/, /fix: git switch tune\/desk/);
  });

  it('a rebase stopped on a conflict', async ({ expect }) => {
    const repo = await fresh();
    repo.git('switch', '-q', '-c', 'side');
    repo.write({ 'notes.txt': 'side notes\n' });
    repo.git('commit', '-q', '-am', 'side');
    repo.git('switch', '-q', 'tune/desk');
    repo.write({ 'notes.txt': 'tuning notes\n' });
    repo.git('commit', '-q', '-am', 'notes on the tuning branch');
    expect(() => repo.git('rebase', '-q', 'side')).toThrow();
    expect(existsSync(repo.path('.git/rebase-merge')) || existsSync(repo.path('.git/rebase-apply'))).toBe(true);
    // HEAD is detached during a rebase: the message says so, and `-t desk` meets the rebase itself.
    await refused(repo, expect, 2, /HEAD is detached/, /fix: /);
    repo.git('rebase', '--abort');
    repo.git('switch', '-q', 'tune/desk');
    mkdirSync(repo.path('.git/rebase-merge'), { recursive: true }); // a rebase stopped in an edit step, HEAD on the branch
    writeFileSync(repo.path('.git/rebase-merge/head-name'), 'refs/heads/tune/desk\n');
    await refused(repo, expect, 2, /in the middle of a rebase/, /fix: git rebase --continue/);
  });

  it('a merge, a cherry-pick, a revert, a bisect', async ({ expect }) => {
    const repo = await fresh();
    const head = repo.git('rev-parse', 'HEAD').trim();
    const markers: Array<[string, RegExp, RegExp]> = [
      ['MERGE_HEAD', /middle of a merge/, /git merge --continue/],
      ['CHERRY_PICK_HEAD', /middle of a cherry-pick/, /git cherry-pick --continue/],
      ['REVERT_HEAD', /middle of a revert/, /git revert --continue/],
      ['BISECT_LOG', /middle of a bisect/, /git bisect reset/],
    ];
    for (const [marker, message, fix] of markers) {
      writeFileSync(repo.path('.git', marker), `${head}\n`);
      await refused(repo, expect, 2, message, fix);
      await refused(repo, expect, 2, message, fix, ['config', 'set', 'seed', '9']);
      rmSync(repo.path('.git', marker)); // as `git merge --abort` and friends do
    }
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'wrong']); // and once it is over, the step goes through
  });
});
