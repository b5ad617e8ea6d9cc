import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, tuneOk, type CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The whole batch loop by hand (docs/method.md, docs/method.md#next): the example agent taken
 * through two batches and the final check by following `git tune next --json`
 * alone. Each `command` it gives is run as printed (a chain `git tune a && git
 * tune b` runs each part through the CLI); where it asks for a person (grade,
 * edit), the test is the person: it finishes findings.md or writes prose lines
 * and changes.md, then runs the command that records them.
 *
 * The story (limit 6, minBatch 3, maxBatch 3, recheck 2, maxRuns 2, maxRetries 1):
 * - batch 1: run 1 is VOID (a case killed for memory) → re-run at half the
 *   concurrency; an edit fixes accounts-security-plan and the next run
 *   confirms it; at maxRuns, stop-batch keeps it, lists the two cases still
 *   wrong as difficult and writes PASSED; with memory: same answers, cheaper.
 * - batch 2 (its two difficult cases rechecked, so stuck at maxRetries 1): one
 *   edit fixes three cases (one of them stuck), one fixes nothing; recording
 *   the grader's PASSED reverts that edit first (a revert commit of the
 *   grade's own) and keeps the confirmed one; the with-memory PASSED fixes the stuck case
 *   it got right; returns-condition stays stuck.
 * - the final check grades itself VERIFIED.
 */
const EXAMPLE = path.join(ROOT, 'templates/example');
const TUNE = '.tune/demo';
const RUNS = `${TUNE}/runs`;

interface Next {
  kind: string;
  message: string;
  command: string | null;
  batch: number | null;
  half: string | null;
  run: string | null;
  notes: string[];
}

/** Splits a shell word list: spaces separate, single or double quotes group. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

describe('the batch loop by hand, following git tune next', () => {
  let repo: TempRepo;

  /** The real CLI, asynchronously, so the test worker stays responsive while a run works. */
  const ok = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => tuneOk(repo, args, env);
  const next = async (): Promise<Next> => JSON.parse((await ok(['next', '--json'])).stdout) as Next;

  /** Asks next, checks its kind, runs its command part by part; returns the step and each part's output. */
  const follow = async (kind: string, env: Record<string, string> = {}): Promise<{ step: Next; outputs: CliResult[] }> => {
    const step = await next();
    expect(step.kind, step.message).toBe(kind);
    expect(step.command).not.toBeNull();
    const outputs: CliResult[] = [];
    for (const part of step.command!.split(' && ')) {
      const argv = words(part);
      expect(argv.slice(0, 2), part).toEqual(['git', 'tune']);
      outputs.push(await ok(argv.slice(2), env));
    }
    return { step, outputs };
  };

  const read = (file: string) => readFileSync(repo.path(file), 'utf8');
  const write = (file: string, content: string) => writeFileSync(repo.path(file), content);
  /** Adds a rule line (`- key: value`) or replaces the one with the same key. */
  const rule = (file: string, line: string) => {
    const key = line.split(':')[0]!;
    const lines = read(file).split('\n');
    const at = lines.findIndex((l) => l.startsWith(`${key}:`));
    if (at >= 0) lines[at] = line;
    else lines.splice(lines.length - 1, 0, line);
    write(file, lines.join('\n'));
  };
  const results = (run: string) =>
    (JSON.parse(read(`${RUNS}/${run}/results.json`)) as Array<{ id: string; right: boolean | null; answer: unknown; tokens: number }>)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  const status = async () => JSON.parse((await ok(['status', '--json'])).stdout) as { edits: Array<{ commit: string; run: string; status: string; aims: string[] }> };
  const editStatus = async (oid: string) => (await status()).edits.find((e) => e.commit === oid)?.status;
  const tip = () => repo.git('rev-parse', 'HEAD').trim();
  const lastEdit = () => repo.git('log', '-1', '--format=%H', '--grep=^Tune-Step: edit$', 'HEAD').trim();
  const difficult = async () =>
    (JSON.parse((await ok(['difficult', '--json'])).stdout) as { entries: Array<{ id: string; status: string }> }).entries
      .map((e) => `${e.id} ${e.status}`).sort();

  /** The person's part of `grade`: draft, finish the findings (`finish` edits the text), then next's command. */
  const grade = async (run: string, finish: (text: string) => string = (t) => t) => {
    const step = await next();
    expect(step).toMatchObject({ kind: 'grade', run });
    expect(step.message).toContain('git tune grade --draft');
    await ok(['grade', '--draft']);
    const file = `${RUNS}/${run}/findings.md`;
    write(file, finish(read(file)));
    return follow('grade');
  };

  // A story: once a chapter fails, the later ones would only repeat it.
  let broken = false;
  beforeEach((ctx) => {
    if (broken) ctx.skip();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') broken = true;
  });

  beforeAll(() => {
    repo = new TempRepo('git-tune-loop-');
    repo.git('init', '-q', '-b', 'main');
    cpSync(EXAMPLE, repo.dir, { recursive: true });
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'The example agent and its prose');
  });
  afterAll(() => repo?.cleanup());

  it('starts a tuning of the example agent with a short method', async () => {
    await ok(['init', 'demo', '--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md',
      '--runner', 'node agent.mjs', '--judge', 'node judge.mjs', '--dataset', 'cases.yaml']);
    for (const [key, value] of [['limit', '6'], ['maxBatch', '3'], ['recheck', '2'], ['maxRuns', '2'], ['maxRetries', '1'], ['concurrency', '8']]) {
      await ok(['config', 'set', key!, value!]);
    }
    await follow('select');
    const plan = (await follow('batch')).outputs[0]!.stdout;
    expect(plan).toContain('new: accounts-security-plan, billing-payment-plan, returns-condition');
    expect((await next()).notes).toContain('limit 6 of 24 cases: 18 are never tuned against');
  });

  it('batch 1: a VOID run is re-run at half the concurrency', async () => {
    const run1 = await follow('run', { EXAMPLE_SIMULATE: 'oom@accounts-security-plan' });
    expect(run1.step.run).toBe('batch01-nomem-run1');
    expect(run1.outputs[0]!.stdout).toContain('batch01-nomem-run1: VOID');

    const { step } = await follow('void-rerun');
    expect(step.message).toContain('was VOID at concurrency 8');
    expect(step.message).toContain('run the same cases again at concurrency 4');
    expect(step.command).toBe('git tune config set concurrency 4 && git tune run');
    expect(repo.git('show', 'HEAD:.tune/demo/config.yaml')).toMatch(/^concurrency: 4$/m);
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Run,valueonly)', 'HEAD').trim()).toBe('batch01-nomem-run2');
  });

  let editA = '';
  it('batch 1: graded, edited, and the next run confirms the edit', async () => {
    await grade('batch01-nomem-run2', (t) => {
      expect(t.startsWith('## NO CHANGE\n')).toBe(true);
      return t.replace('### Cases', 'Every case is wrong: two rules are missing, one says 24 hours.\n\n### Cases');
    });
    expect(repo.git('show', 'HEAD:.tune/demo/runs/batch01-nomem-run2/findings.md')).toContain('two rules are missing');

    const step = await next();
    expect(step).toMatchObject({ kind: 'edit', run: 'batch01-nomem-run2', command: 'git tune edit' });
    rule('agents/prompts/accounts.md', '- reset link validity: 1 hour');
    rule('agents/prompts/accounts.md', '- session timeout: 12 hours');
    rule('agents/memory-policy.md', '- never save a fact that is already in memory');
    write(`${RUNS}/batch01-nomem-run2/changes.md`, [
      '# Changes after batch01-nomem-run2', '',
      '- accounts.md: the reset link is valid 1 hour (was 24 hours); sessions time out after 12 hours.',
      '- memory-policy.md: never save a fact that memory already holds.', '',
      'Aims: accounts-security-plan', '',
    ].join('\n'));
    await follow('edit');
    editA = lastEdit();
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Aims,valueonly)', editA).trim()).toBe('accounts-security-plan');
    expect(await editStatus(editA)).toBe('pending');

    expect((await follow('confirm')).step.run).toBe('batch01-nomem-run3');
    await grade('batch01-nomem-run3', (t) => {
      expect(t.startsWith('## PROGRESS\n')).toBe(true);
      expect(t).toContain('- turned right: accounts-security-plan');
      return t;
    });
    expect(await editStatus(editA)).toBe('confirmed');
    const log = (await ok(['log'])).stdout;
    expect(log.split('\n').find((l) => l.includes(editA.slice(0, 7)))).toMatch(/\bedit\b.*\bconfirmed by batch01-nomem-run3\b/);
  });

  it('batch 1: at maxRuns, stop-batch keeps the confirmed edit, lists what is wrong as difficult, writes PASSED', async () => {
    const { step, outputs } = await follow('stop-batch');
    expect(step.command).toBe(
      'git tune revert && git tune difficult add billing-payment-plan --why wrong && git tune difficult add returns-condition --why wrong && git tune grade --verdict PASSED --run batch01-nomem-run3',
    );
    expect(outputs[0]!.stdout).toContain(`kept ${editA.slice(0, 7)}: confirmed by batch01-nomem-run3`);
    expect(read(`${RUNS}/batch01-nomem-run3/findings.md`).startsWith('## PASSED\n')).toBe(true);
    expect(await difficult()).toEqual(['billing-payment-plan open', 'returns-condition open']);
    expect(await editStatus(editA)).toBe('confirmed');
  });

  it('batch 1: with memory, the same answers for far fewer tokens; checkpoint', async () => {
    await follow('candidate');
    expect((await follow('mem-run')).step.run).toBe('batch01-mem-run1');
    await grade('batch01-mem-run1', (t) => {
      expect(t.startsWith('## PASSED\n')).toBe(true);
      expect(t).toMatch(/saved twice 0\./);
      return t;
    });
    const without = results('batch01-nomem-run3');
    const withMemory = results('batch01-mem-run1');
    expect(withMemory.map((r) => [r.id, r.answer, r.right])).toEqual(without.map((r) => [r.id, r.answer, r.right]));
    const sum = (rs: typeof without) => rs.reduce((s, r) => s + r.tokens, 0);
    expect(sum(withMemory)).toBeLessThan(sum(without) / 2);
    for (const r of withMemory) expect(r.tokens).toBeLessThan(without.find((x) => x.id === r.id)!.tokens);
    await follow('checkpoint');
  });

  let editB = '';
  let editC = '';
  it('batch 2: rechecks the difficult cases, which become stuck; one edit fixes, one fixes nothing', async () => {
    const plan = await follow('batch');
    expect(plan.step.message).toContain('2 new difficult cases');
    expect(plan.outputs[0]!.stdout).toContain('new: shipping-delivery-plan, accounts-email-change, billing-refund-how');
    expect(plan.outputs[0]!.stdout).toContain('recheck: billing-payment-plan, returns-condition');
    expect(await difficult()).toEqual(['billing-payment-plan stuck', 'returns-condition stuck']);

    await follow('run');
    await grade('batch02-nomem-run1', (t) => {
      expect(t).toContain('### Regressed recheck cases\n\nnone'); // wrong before, on the list: not regressed
      return t;
    });

    rule('agents/prompts/shipping.md', '- express delivery: 2 business days');
    rule('agents/prompts/shipping.md', '- tracking link: sent by email at dispatch');
    rule('agents/prompts/billing.md', '- refund window: 30 days');
    rule('agents/prompts/billing.md', '- late fee: 5% after 14 days');
    rule('agents/prompts/billing.md', '- payment methods: card, bank transfer, PayPal');
    const changes = `${RUNS}/batch02-nomem-run1/changes.md`;
    write(changes, '# Changes after batch02-nomem-run1\n\n- shipping.md: express delivery and the tracking link.\n- billing.md: the refund window is 30 days; late fee; payment methods.\n\nAims: shipping-delivery-plan, billing-refund-how, billing-payment-plan\n');
    await follow('edit');
    editB = lastEdit();

    // A second edit after the same run: changes.md grows, and this edit's Aims is in what it added.
    const returns = read('agents/prompts/returns.md');
    write('agents/prompts/returns.md', `${returns}\nStay patient with customers who are upset.\n`);
    write(changes, `${read(changes)}\n## Second edit\n\n- returns.md: a line on upset customers.\n\nAims: returns-condition\n`);
    const again = await next();
    expect(again.kind).toBe('confirm'); // a pending edit waits for a run; a person may still add another
    await ok(['edit']);
    editC = lastEdit();
    expect(editC).not.toBe(editB);
    const edits = (await status()).edits;
    expect(edits.find((e) => e.commit === editC)).toMatchObject({ status: 'pending', aims: ['returns-condition'] });
    expect(edits.find((e) => e.commit === editB)).toMatchObject({ status: 'pending', aims: ['shipping-delivery-plan', 'billing-refund-how', 'billing-payment-plan'] });
  });

  it('batch 2: grading run 2 of 2 reverts the edit that fixed nothing (a revert commit before the grade), keeps the one that fixed; PASSED waits for a run of the prose left', async () => {
    expect((await follow('confirm')).step.run).toBe('batch02-nomem-run2');
    expect(await editStatus(editB)).toBe('pending');
    await ok(['grade', '--draft']);
    const findings = `${RUNS}/batch02-nomem-run2/findings.md`;
    const draft = read(findings);
    expect(draft.startsWith('## PASSED\n')).toBe(true);
    expect(draft).toContain('fix billing-payment-plan — right and not costly in a PASSED run');

    const returnsBefore = repo.git('show', `${editC}^:agents/prompts/returns.md`);
    const before = tip();
    const graded = await ok(['grade']);
    expect(graded.stdout).toMatch(new RegExp(`^reverted ${editC.slice(0, 7)} with [0-9a-f]{7} \\(not confirmed by batch02-nomem-run2\\): agents/prompts/returns\\.md$`, 'm'));
    expect(graded.stdout).toContain('batch02-nomem-run2: PASSED');
    // The prose left (run 1's with the edit that fixed) is one no run of the half ran: no verdict on it yet.
    expect(graded.stdout).toContain('no run of the half has seen the prose the branch holds');
    expect(await editStatus(editB)).toBe('confirmed');
    expect(await editStatus(editC)).toBe('reverted');
    expect(await difficult()).toEqual(['billing-payment-plan fixed', 'returns-condition stuck']);
    expect(read('agents/prompts/returns.md')).toBe(returnsBefore);
    expect(read('agents/prompts/billing.md')).toContain('- refund window: 30 days');
    // Two commits: the revert, then the grade.
    const steps = repo.git('log', '--format=%s%n%(trailers:key=Tune-Step,valueonly)%(trailers:key=Tune-Reverts,valueonly)', `${before}..HEAD`).split('\n').filter(Boolean);
    expect(steps[1]).toBe('grade');
    expect(steps[2]).toMatch(/^Revert "tune\(demo\): edit after batch02-nomem-run1: agents\/prompts\/returns\.md"$/);
    expect(steps.slice(3)).toEqual(['revert', editC]);
    expect(read(`${RUNS}/batch02-nomem-run2/findings.md`).startsWith('## PASSED\n')).toBe(true);
  });

  it('batch 2: the prose it holds runs (rerun), passes, and the candidate comes from that run; with memory PASSED; the second checkpoint', async () => {
    const rerun = await follow('rerun');
    expect(rerun.step).toMatchObject({ command: 'git tune run', run: 'batch02-nomem-run3' });
    await grade('batch02-nomem-run3', (t) => {
      expect(t.startsWith('## PASSED\n')).toBe(true);
      return t;
    });
    expect((await follow('candidate')).step.run).toBe('batch02-nomem-run3');
    await follow('mem-run');
    await grade('batch02-mem-run1', (t) => {
      expect(t.startsWith('## PASSED\n')).toBe(true);
      return t;
    });
    await follow('checkpoint');
    expect(await difficult()).toEqual(['billing-payment-plan fixed', 'returns-condition stuck']);
    const step = await next();
    expect(step).toMatchObject({ kind: 'final', command: 'git tune final', run: 'final-check' });
  });

  it('the final check grades itself VERIFIED, and next says done', async () => {
    await follow('final');
    const graded = await follow('grade');
    expect(graded.outputs[0]!.stdout).toMatch(/^final-check: VERIFIED/);
    const findings = read(`${RUNS}/final-check/findings.md`);
    expect(findings.startsWith('## VERIFIED\n')).toBe(true);
    expect(findings).toContain('- stuck (reported, not counted): returns-condition');
    expect(findings).toContain('- regressed from their batch: none');
    const done = await next();
    expect(done).toMatchObject({ kind: 'done', command: null });
  });

  it('native git sees the whole story: fsck, tags, the steps in order, a clean tree', async () => {
    expect(() => repo.fsck()).not.toThrow();
    expect(repo.git('tag', '-l').trim().split('\n')).toEqual([
      'tune/demo/batch01-mem-run1', 'tune/demo/batch01-nomem-run1', 'tune/demo/batch01-nomem-run2', 'tune/demo/batch01-nomem-run3',
      'tune/demo/batch02-mem-run1', 'tune/demo/batch02-nomem-run1', 'tune/demo/batch02-nomem-run2', 'tune/demo/batch02-nomem-run3', 'tune/demo/final-check',
    ]);
    const steps = repo.git('log', '--reverse', '--first-parent', '--format=%(trailers:key=Tune-Step,valueonly,separator=)', 'main..HEAD')
      .split('\n').filter(Boolean);
    const run = ['run-start', 'run'];
    expect(steps).toEqual([
      'init', 'dataset', 'config', 'config', 'config', 'config', 'config', 'config', 'select', 'plan',
      ...run, 'config', ...run, 'grade', 'edit', ...run, 'grade', // batch 1 no memory: VOID, re-run, edit, confirm
      'difficult', 'difficult', 'grade', // stop-batch (nothing to revert)
      'candidate', ...run, 'grade', 'checkpoint',
      'plan', ...run, 'grade', 'edit', 'edit', ...run,
      'revert', 'grade', // the grade of run 2 reverts the edit that fixed nothing, then records PASSED
      ...run, 'grade', // no run had seen the prose left: it runs (rerun), and the half passes on it
      'candidate', ...run, 'grade', 'checkpoint',
      ...run, 'grade', // the final check
    ]);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});
