import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * A tuning whose prose glob is as broad as `**` + `/*.md`: the tool's own
 * Markdown under `.tune/desk/` (README.md, USAGE.md, findings.md,
 * changes.md) matches it, but is never prose. A hand-written README part
 * does not stop a run as "uncommitted prose", and an edit records only the
 * real prose.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const CASES = [
  '- { id: a, class: c, input: a, checks: [{ type: contains, value: politely }] }',
  '- { id: b, class: c, input: b, checks: [{ type: contains, value: refund }] }',
].join('\n');
const README = '.tune/desk/README.md';
const PLACEHOLDER = /_Write here which agent[^\n]*_/;
const HAND = 'This tuning is for the help-desk agent; a right answer is polite and names the refund window.';

describe('a prose glob over every .md leaves the tool directory out', () => {
  let repo: TempRepo;
  const ok = (args: string[]) => {
    const r = repo.tune(args);
    expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}\n${r.stdout}`).toBe(0);
    return r;
  };
  const readme = () => readFileSync(repo.path(README), 'utf8');

  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': `${CASES}\n` });
    ok(['init', 'desk', '--prose', '**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
    ok(['select']);
    ok(['batch']);
  });
  afterAll(() => repo.cleanup());

  it('a run starts with the README\'s hand-written part changed, and commits it', () => {
    expect(readme()).toMatch(PLACEHOLDER);
    writeFileSync(repo.path(README), readme().replace(PLACEHOLDER, HAND));
    const r = ok(['run']);
    expect(r.stderr).not.toContain('prose has uncommitted changes');
    expect(r.stderr).not.toContain('the runner changed files of the repository');
    expect(repo.git('show', `HEAD:${README}`)).toContain(HAND);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('an edit of only the tool\'s own files is no prose edit; a real one lists only the real prose', () => {
    ok(['grade', '--verdict', 'PROGRESS']);
    const tipBefore = repo.git('rev-parse', 'HEAD').trim();
    repo.write({
      '.tune/desk/runs/batch01-nomem-run1/changes.md': '## Refunds\nOffer a refund.\nAims: b\n',
      '.tune/desk/runs/batch01-nomem-run1/findings.md': 'b never mentions refunds\n',
    });
    writeFileSync(repo.path(README), `${readme().replace(HAND, `${HAND} Refunds are open.`)}`);
    const refused = repo.tune(['edit']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('no prose file changed');
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(tipBefore);

    repo.write({ 'agents/prompt.md': 'Answer politely. Offer a refund.\n' });
    const edit = repo.tuneJson<{ files: string[]; aims: string[] }>(['edit']);
    expect(edit.files).toEqual(['agents/prompt.md']);
    expect(edit.aims).toEqual(['b']);
    const status = repo.tuneJson<{ edits: Array<{ run: string; status: string }>; warnings: string[] }>(['status']);
    expect(status.edits).toEqual([expect.objectContaining({ run: 'batch01-nomem-run1', status: 'pending' })]);
    expect(status.warnings).toEqual([]);
  });
});
