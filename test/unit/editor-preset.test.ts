import { describe, expect, it } from 'vitest';
import { parseAims } from '../../src/core/edit.js';
import { matcher } from '../../src/core/glob.js';
import { aimsOf, changesText, editorRequest, EditorReplyError, editProse, EDITS, type EditorInput } from '../../src/run/presets/editor-logic.js';
import { applyModelPatch, normalizePatch } from '../../src/run/presets/patch.js';
import { said, ScriptedModel } from '../helpers/scripted-model.js';

/** The editor preset's logic against a scripted model: patches applied, asked again once, refused outside the half. */
const billing = '# Billing\n\n- currency: EUR\n- refund how: use the form\n';
const policy = '# Memory policy\n\n- save: the customer name\n';
const prose = [
  { path: 'agents/memory-policy.md', text: policy, memoryPolicy: true },
  { path: 'agents/prompts/billing.md', text: billing, memoryPolicy: false },
];
const proposals = [{ file: 'agents/prompts/billing.md', change: '- refund window: 30 days', why: 'r1 missed', expect: 'r1 met', cases: ['billing-refund-window', 'billing-refund-late'] }];
const input = (over: Partial<EditorInput> = {}): EditorInput => ({
  findings: '# Findings\n\n## PROGRESS\n\n| case | right |\n| billing-refund-window | no |\n',
  proposals, half: 'nomem', prose,
  mayEdit: matcher(['agents/prompts/**/*.md', 'agents/memory-policy.md']),
  ...over,
});
const addWindow = '@@ -3,2 +3,3 @@\n - currency: EUR\n+- refund window: 30 days\n - refund how: use the form\n';
const edits = (patch: string, file = 'agents/prompts/billing.md', over: Record<string, unknown> = {}) => ({
  edits: [{ file, patch }], changes: 'Added the refund window to billing.md.', aims: ['billing-refund-window'], ...over,
});

describe('editor preset: the request', () => {
  it('shows the findings, the proposals and every prose file, marking what this half may edit', () => {
    const text = said(editorRequest(input()));
    for (const part of ['## PROGRESS', '- refund window: 30 days', 'billing-refund-late', '### agents/prompts/billing.md (editable)', '- refund how: use the form']) expect(text).toContain(part);
    const mem = editorRequest(input({ half: 'mem', mayEdit: matcher(['agents/memory-policy.md']) }));
    expect(said(mem)).toContain('### agents/prompts/billing.md (read only in this half)');
    expect(said(mem)).toContain('with-memory half: only the memory-policy files may change');
    expect(said(mem)).toContain('"Memory review" says what is short');
    expect(said(editorRequest(input()))).toContain('"Cost review" says where');
    expect(mem.output?.name).toBe(EDITS);
    expect((mem.output!.schema as any).properties.edits.items.properties.file.enum).toEqual(['agents/memory-policy.md']);
  });
});

describe('editor preset: edits', () => {
  it('a patch is applied to the file as shown; changes.md says what and aims at the proposals\' cases the model named', async () => {
    const model = new ScriptedModel([edits(addWindow)]);
    const plan = await editProse(model, input());
    expect(plan?.files).toEqual([{ path: 'agents/prompts/billing.md', text: '# Billing\n\n- currency: EUR\n- refund window: 30 days\n- refund how: use the form\n' }]);
    expect(plan?.calls).toBe(1);
    expect(plan?.changes).toBe('# Changes\n\nAdded the refund window to billing.md.\n\nAims: billing-refund-window\n');
    expect(parseAims(plan!.changes)).toEqual(['billing-refund-window']);
  });

  it('a patch that does not apply is asked for again once, with the reason and the file\'s text; the fixed one applies', async () => {
    const wrong = '@@ -3,1 +3,1 @@\n-- currency: USD\n+- currency: EUR\n+- refund window: 30 days\n';
    const model = new ScriptedModel([edits(wrong), edits(addWindow, undefined, { changes: '' })]);
    const plan = await editProse(model, input());
    expect(plan?.calls).toBe(2);
    expect(plan?.files[0]?.text).toContain('- refund window: 30 days');
    // The second answer left changes empty: the first one's text stands.
    expect(plan?.changes).toContain('Added the refund window');
    const again = said(model.requests[1]!);
    expect(again).toContain('agents/prompts/billing.md: the patch does not apply: hunk 1 of 1 does not match the file\'s text (it removes lines the file does not hold: "- currency: USD")');
    expect(again).toContain('The current text of agents/prompts/billing.md:');
  });

  it('a patch that still does not apply fails the editor with the reason, after two calls', async () => {
    const wrong = '@@\n-- refund window: 14 days\n+- refund window: 30 days\n';
    const model = new ScriptedModel([edits(wrong), edits(wrong), edits(addWindow)]);
    const err = await editProse(model, input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EditorReplyError);
    expect((err as Error).message).toMatch(/patches failed twice \(asked again once\): agents\/prompts\/billing\.md: the patch does not apply: .*"- refund window: 14 days"/);
    expect(model.requests).toHaveLength(2);
  });

  it('an edit of a file outside the half is refused and asked again; the edits that applied are kept', async () => {
    const mem = input({ half: 'mem', mayEdit: matcher(['agents/memory-policy.md']) });
    const policyEdit = '@@ -3 +3,2 @@\n - save: the customer name\n+- never save a fact memory already holds\n';
    const model = new ScriptedModel([
      { edits: [{ file: 'agents/memory-policy.md', patch: policyEdit }, { file: 'agents/prompts/billing.md', patch: addWindow }], changes: 'Policy: no double saves.', aims: [] },
      { edits: [], changes: '', aims: [] },
    ]);
    const plan = await editProse(model, mem);
    expect(plan?.files.map((f) => f.path)).toEqual(['agents/memory-policy.md']);
    const again = said(model.requests[1]!);
    expect(again).toContain('agents/prompts/billing.md may not change in the with-memory half (only memory-policy files: agents/memory-policy.md)');
    expect(again).toContain('The edits of agents/memory-policy.md applied and are kept');
    // No aims said: every case the proposals name.
    expect(parseAims(plan!.changes)).toEqual(['billing-refund-window', 'billing-refund-late']);
  });

  it('a file that is not prose at all fails the editor when named twice', async () => {
    const model = new ScriptedModel([edits(addWindow, 'src/agent.ts'), edits(addWindow, '../outside.md')]);
    await expect(editProse(model, input())).rejects.toThrow(/\.\.\/outside\.md is not a path inside the repository/);
    expect(said(model.requests[1]!)).toContain('src/agent.ts is not a prose file this editor may change (editable: agents/memory-policy.md, agents/prompts/billing.md)');
    // Globs that take any depth would take an absolute path or .git: never written.
    const wide = input({ mayEdit: matcher(['**/*.md']) });
    const outside = new ScriptedModel([edits(addWindow, '/etc/motd.md'), edits(addWindow, '.git/x.md')]);
    await expect(editProse(outside, wide)).rejects.toThrow(/\.git\/x\.md is not a path inside the repository/);
  });

  it('nothing to change: no edits, or edits that change nothing, offer nothing (and a half with no editable file asks no model)', async () => {
    expect(await editProse(new ScriptedModel([{ edits: [], changes: 'nothing to do', aims: [] }]), input())).toBeNull();
    expect(await editProse(new ScriptedModel([edits('@@\n - currency: EUR\n')]), input())).toBeNull();
    const none = new ScriptedModel([]);
    expect(await editProse(none, input({ half: 'mem', mayEdit: matcher(['agents/nothing.md']) }))).toBeNull();
    expect(none.requests).toHaveLength(0);
  });

  it('a reply that does not match the schema is asked again like a bad patch', async () => {
    const model = new ScriptedModel([{ edits: [{ file: 'agents/prompts/billing.md' }] }, edits(addWindow)]);
    const plan = await editProse(model, input());
    expect(plan?.calls).toBe(2);
    expect(said(model.requests[1]!)).toContain('edits.0.patch');
  });
});

describe('editor preset: changes.md', () => {
  it('has one Aims line of ours: an Aims line of the model\'s is left out, unknown case ids are not aimed at', () => {
    const text = changesText('## What changed\n\n- billing.md: the refund window\n\nAims: everything, billing-refund-window\n', ['agents/prompts/billing.md'], aimsOf(['nonsense', 'billing-refund-window'], proposals));
    expect(text).toBe('# Changes\n\n## What changed\n\n- billing.md: the refund window\n\nAims: billing-refund-window\n');
    expect(changesText('', ['a.md'], [])).toBe('# Changes\n\nThe editor preset changed a.md.\n');
    expect(changesText('# My heading\n\ntext', ['a.md'], ['x'])).toBe('# My heading\n\ntext\n\nAims: x\n');
  });
});

describe('patches as models write them', () => {
  const src = '# Billing\n\n- currency: EUR\n- refund how: use the form\n';
  it('wrong line numbers and line counts, a fence around the patch, git headers: the hunk is found by its context', () => {
    const patch = '```diff\ndiff --git a/x b/x\n--- a/agents/b.md\n+++ b/agents/b.md\n@@ -40,9 +40,1 @@\n - currency: EUR\n+- refund window: 30 days\n```\n';
    expect(applyModelPatch('agents/b.md', src, patch)).toEqual({ ok: true, text: '# Billing\n\n- currency: EUR\n- refund window: 30 days\n- refund how: use the form\n' });
  });

  it('an empty line inside a hunk is an empty context line; a bare @@ is a hunk', () => {
    expect(applyModelPatch('b.md', src, '@@\n # Billing\n\n+Rules:\n - currency: EUR\n')).toEqual({ ok: true, text: '# Billing\n\nRules:\n- currency: EUR\n- refund how: use the form\n' });
  });

  it('a new file is a patch against empty text', () => {
    expect(applyModelPatch('n.md', '', '--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,2 @@\n+# New\n+- a: b\n')).toEqual({ ok: true, text: '# New\n- a: b\n' });
  });

  it('says why a patch cannot be read or applied', () => {
    expect(applyModelPatch('b.md', src, '--- a/other.md\n+++ b/other.md\n@@\n+x\n')).toEqual({ ok: false, reason: 'its header names other.md, not b.md' });
    expect(applyModelPatch('b.md', src, 'replace EUR with USD')).toEqual({ ok: false, reason: 'it holds no hunk (no line starting with "@@")' });
    expect(applyModelPatch('b.md', src, '@@\n currency\n*oops\n')).toMatchObject({ ok: false, reason: expect.stringContaining('line 3 of the patch starts with neither') });
    // A markdown list line kept as context without its space reads as a removal: the reason says how to write it.
    expect(applyModelPatch('b.md', src, '@@\n- currency: EUR\n+- vat: included\n')).toMatchObject({ ok: false, reason: expect.stringContaining('start its patch line with a space: " - currency: EUR"') });
    expect(normalizePatch('b.md', '@@ -1,1 +1,1 @@\n')).toEqual({ ok: false, reason: 'a hunk is empty' });
  });
});
