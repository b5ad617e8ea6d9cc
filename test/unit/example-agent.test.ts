import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { caseSchema } from '../../src/contracts/dataset.js';
import { runCheck } from '../../src/core/checks.js';
import * as example from '../../templates/example/lib/example.mjs';

/**
 * The bundled example agent (templates/example): a stand-in for an LLM agent.
 * Its answers must follow its prose, its cost must follow its memory, and its
 * failure modes must be there for the runner's tests, and only on request.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLE = path.join(ROOT, 'templates/example');
const AGENT = path.join(EXAMPLE, 'agent.mjs');
const JUDGE = path.join(EXAMPLE, 'judge.mjs');
const EDITOR = path.join(EXAMPLE, 'editor.mjs');

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Case { id: string; class: string; complexity: string; input: Json; checks?: Json[]; rubric?: Json[]; expected?: Json; notes?: string }

const CASES: Case[] = parse(readFileSync(path.join(EXAMPLE, 'cases.yaml'), 'utf8')).cases;
const byId = (id: string): Case => {
  const found = CASES.find((c) => c.id === id);
  if (!found) throw new Error(`no case ${id}`);
  return found;
};
const BROKEN = ['billing-invoice-hours', 'shipping-promise'];

const temps: string[] = [];
function tempDir(prefix = 'example-agent-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** A repository root holding the shipped prose (agents/ and checks/), as the README's layout says. */
function makeRoot(edits: Record<string, (text: string) => string> = {}): string {
  const root = tempDir('example-root-');
  cpSync(path.join(EXAMPLE, 'agents'), path.join(root, 'agents'), { recursive: true });
  cpSync(path.join(EXAMPLE, 'checks'), path.join(root, 'checks'), { recursive: true });
  cpSync(path.join(EXAMPLE, 'lib'), path.join(root, 'lib'), { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const full = path.join(root, file);
    writeFileSync(full, edit(existsSync(full) ? readFileSync(full, 'utf8') : ''));
  }
  return root;
}
const addLine = (line: string) => (text: string) => `${text.replace(/\n*$/, '\n')}${line}\n`;
const dropLine = (line: string) => (text: string) => text.split('\n').filter((l) => l.trim() !== line).join('\n');
const setLine = (from: string, to: string) => (text: string) => text.replace(from, to);

interface Ran { code: number | null; signal: string | null; stdout: string; stderr: string; killed: boolean }

interface KillOptions {
  /** Kill this long after start, or after `readyOn` shows on stdout when given. */
  killAfterMs?: number;
  readyOn?: string;
  /** SIGTERM first, SIGKILL 300 ms later if it is still there. */
  termFirst?: boolean;
}

function runNode(script: string, env: Record<string, string>, cwd: string, opts: KillOptions = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (timer || !opts.killAfterMs) return;
      timer = setTimeout(() => {
        killed = true;
        if (opts.termFirst) {
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 300);
        } else child.kill('SIGKILL');
      }, opts.killAfterMs);
    };
    child.stdout.on('data', (d) => {
      stdout += d;
      if (opts.readyOn && stdout.includes(opts.readyOn)) arm();
    });
    child.stderr.on('data', (d) => { stderr += d; });
    if (!opts.readyOn) arm();
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, killed });
    });
  });
}

interface AgentRun extends Ran { result: Json; raw: string | null; memory: string; workspace: string; output: string }

/** Runs the agent on one case the way git-tune does: private memory, workspace and output paths. */
async function runAgent(item: Case | Json, root: string, opts: KillOptions & { memory?: string | null; env?: Record<string, string> } = {}): Promise<AgentRun> {
  const dir = tempDir('example-case-');
  const memory = opts.memory === undefined ? path.join(dir, 'memory') : opts.memory ?? '';
  if (memory) mkdirSync(memory, { recursive: true });
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace);
  const caseFile = path.join(dir, 'case.json');
  const output = path.join(dir, 'result.json');
  writeFileSync(caseFile, JSON.stringify(item));
  const ran = await runNode(AGENT, {
    TUNE_ROOT: root, TUNE_CASE: caseFile, TUNE_MEMORY: memory, TUNE_WORKSPACE: workspace, TUNE_OUTPUT: output,
    TUNE_RUN: 'batch01-nomem-run1', TUNE_CASE_ID: item.id, ...(opts.env ?? {}),
  }, root, opts);
  const raw = existsSync(output) ? readFileSync(output, 'utf8') : null;
  let result: Json = null;
  try {
    result = raw === null ? null : JSON.parse(raw);
  } catch {
    result = null;
  }
  return { ...ran, result, raw, memory, workspace, output };
}

async function runJudge(item: Case, result: Json, root: string): Promise<Json> {
  const dir = tempDir('example-judge-');
  writeFileSync(path.join(dir, 'case.json'), JSON.stringify(item));
  writeFileSync(path.join(dir, 'result.json'), JSON.stringify(result));
  const ran = await runNode(JUDGE, { TUNE_CASE: path.join(dir, 'case.json'), TUNE_RESULT: path.join(dir, 'result.json'), TUNE_OUTPUT: path.join(dir, 'judge.json') }, root);
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(readFileSync(path.join(dir, 'judge.json'), 'utf8'));
}

async function runEditor(root: string, proposals: Json, half: 'nomem' | 'mem' = 'nomem'): Promise<{ changes: string; ran: Ran }> {
  const dir = tempDir('example-editor-');
  writeFileSync(path.join(dir, 'proposals.json'), JSON.stringify(proposals));
  writeFileSync(path.join(dir, 'findings.md'), '## NO CHANGE\n\nSome cases are still wrong.\n');
  const ran = await runNode(EDITOR, {
    TUNE_FINDINGS: path.join(dir, 'findings.md'), TUNE_PROPOSALS: path.join(dir, 'proposals.json'),
    TUNE_CHANGES: path.join(dir, 'changes.md'), TUNE_HALF: half,
  }, root);
  expect(ran.code, ran.stderr).toBe(0);
  return { changes: readFileSync(path.join(dir, 'changes.md'), 'utf8'), ran };
}

async function runPlanCheck(item: Case, result: Json, root: string): Promise<boolean> {
  const dir = tempDir('example-check-');
  writeFileSync(path.join(dir, 'case.json'), JSON.stringify(item));
  writeFileSync(path.join(dir, 'result.json'), JSON.stringify(result));
  const ran = await runNode(path.join(root, 'checks/plan-check.mjs'), { TUNE_CASE: path.join(dir, 'case.json'), TUNE_RESULT: path.join(dir, 'result.json') }, root);
  return ran.code === 0;
}

/** The checks as git-tune's runner runs them (the spine's runCheck), `command` aside. */
const checksPass = (item: Case, answer: unknown) =>
  (item.checks ?? []).filter((c) => c.type !== 'command').every((c) => runCheck(c, answer).pass);

const tokens = (result: Json) => result.usage.reduce((n: number, u: Json) => n + u.inputTokens + u.outputTokens, 0);
const withoutDuration = ({ durationMs: _d, ...rest }: Json) => rest;

function answerInProcess(item: Case, root: string) {
  const files = example.proseFilesFor(item.class);
  const read = (rel: string | null) => (rel && existsSync(path.join(root, rel)) ? readFileSync(path.join(root, rel), 'utf8') : null);
  return example.answerCase({
    item,
    prose: { house: read(files.house), cls: read(files.cls), policy: read(files.policy) },
    memory: { enabled: false, read: () => null },
    files,
  }).result;
}

describe('the example dataset (cases.yaml)', () => {
  it('has about 24 cases in 4 classes, each with id, class, input, complexity and at least one check', () => {
    expect(CASES.length).toBe(24);
    expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
    const classes = new Map<string, number>();
    for (const c of CASES) {
      expect(c.id).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(typeof c.class).toBe('string');
      expect(c.input).toBeDefined();
      expect(['simple', 'medium', 'complex']).toContain(c.complexity);
      expect(c.checks?.length ?? 0).toBeGreaterThan(0);
      expect(caseSchema.safeParse(c).success).toBe(true);
      classes.set(c.class, (classes.get(c.class) ?? 0) + 1);
    }
    expect([...classes.keys()].sort()).toEqual(['accounts', 'billing', 'returns', 'shipping']);
    expect(new Set(CASES.map((c) => c.complexity))).toEqual(new Set(['simple', 'medium', 'complex']));
    const types = new Set(CASES.flatMap((c) => (c.checks ?? []).map((k) => k.type)));
    expect(types).toEqual(new Set(['equals', 'contains', 'not-contains', 'regex', 'json', 'command']));
    expect(CASES.filter((c) => c.rubric?.length).length).toBeGreaterThanOrEqual(3);
  });

  it('uses no failure mode: input.simulate is for tests only', () => {
    for (const c of CASES) expect(c.input.simulate, c.id).toBeUndefined();
  });

  it('the shipped prose gets some cases wrong; the judge\'s rule lines fix all of them but the two broken cases', async () => {
    const root = makeRoot();
    const before = CASES.map((c) => ({ c, result: answerInProcess(c, root) }));
    const wrongBefore = before.filter(({ c, result }) => !checksPass(c, result.answer) || !example.judgeCase(c, result).right).map(({ c }) => c.id);
    // As README.md says: 8 right as shipped, 14 the loop can fix, 2 broken on purpose.
    expect(CASES.map((c) => c.id).filter((id) => !wrongBefore.includes(id))).toEqual([
      'billing-currency', 'shipping-standard', 'shipping-free-threshold', 'accounts-2fa',
      'accounts-email-change', 'accounts-export', 'returns-label', 'returns-damaged-plan',
    ]);
    expect(wrongBefore).toHaveLength(16);
    expect(wrongBefore).toEqual(expect.arrayContaining(BROKEN));

    // One pass of the loop: every wrong case's proposals, applied the way editor.mjs does.
    const proposals = before.flatMap(({ c, result }) => example.judgeCase(c, result).proposals);
    for (const p of proposals) {
      const full = path.join(root, p.file);
      const out = example.applyChange(readFileSync(full, 'utf8'), p.change);
      expect(out.op, `${p.file}: ${p.change}`).not.toBe('skipped');
      writeFileSync(full, out.text);
    }
    for (const c of CASES) {
      const result = answerInProcess(c, root);
      const verdict = example.judgeCase(c, result);
      if (BROKEN.includes(c.id)) {
        expect(checksPass(c, result.answer), c.id).toBe(false);
        expect(verdict.caseOnly, c.id).toBe(true);
        expect(verdict.proposals, c.id).toEqual([]);
      } else {
        expect(result.answer, c.id).toEqual(c.expected);
        expect(checksPass(c, result.answer), c.id).toBe(true);
        expect(verdict, c.id).toMatchObject({ right: true, caseOnly: false, proposals: [] });
        expect(Object.values(verdict.rubric).every((v) => v === 'met'), c.id).toBe(true);
      }
    }
    // The command check, spawned as git-tune would: fails on the shipped prose, passes after the fix.
    const planCase = byId('billing-payment-plan');
    expect(await runPlanCheck(planCase, before.find(({ c }) => c.id === planCase.id)!.result, root)).toBe(false);
    expect(await runPlanCheck(planCase, answerInProcess(planCase, root), root)).toBe(true);
  });
});

describe('the example agent follows its prose', () => {
  const scenarios: Array<{ id: string; fix: Record<string, (t: string) => string>; also?: Record<string, (t: string) => string> }> = [
    // a wrong rule, corrected
    { id: 'billing-refund-window', fix: { 'agents/prompts/billing.md': setLine('- refund window: 14 days', '- refund window: 30 days') } },
    // a missing rule, added
    { id: 'shipping-express', fix: { 'agents/prompts/shipping.md': addLine('- express delivery: 2 business days') } },
    // a house flag: the upset customer gets no apology
    { id: 'returns-condition', fix: { 'agents/prompts/house.md': addLine('- never apologise') } },
    // a plan needs the JSON house flag and two class rules
    {
      id: 'accounts-security-plan',
      also: { 'agents/prompts/house.md': dropLine('- answer plans as JSON') },
      fix: { 'agents/prompts/accounts.md': (t) => addLine('- session timeout: 12 hours')(setLine('24 hours', '1 hour')(t)) },
    },
  ];

  it('answers wrong when the rule line is missing or wrong, right when it is there', async () => {
    await Promise.all(scenarios.map(async (s) => {
      const item = byId(s.id);
      const broken = makeRoot(s.also ?? {});
      const fixed = makeRoot({ ...s.fix });
      const [bad, good] = await Promise.all([runAgent(item, broken), runAgent(item, fixed)]);
      expect(bad.code, bad.stderr).toBe(0);
      expect(checksPass(item, bad.result.answer), `${s.id} before`).toBe(false);
      expect(good.code, good.stderr).toBe(0);
      expect(good.result.answer, `${s.id} after`).toEqual(item.expected);
      expect(checksPass(item, good.result.answer), `${s.id} after`).toBe(true);
    }));
  });

  it('writes a plan as text, not JSON, when the house rules lack "- answer plans as JSON"', async () => {
    const item = byId('returns-damaged-plan');
    const run = await runAgent(item, makeRoot({ 'agents/prompts/house.md': dropLine('- answer plans as JSON') }));
    expect(typeof run.result.answer).toBe('string');
    expect(run.result.answer).toContain('2. Return label: prepaid');
    expect(checksPass(item, run.result.answer)).toBe(false);
  });

  it('keeps to the runner contract: result fields, a transcript in the workspace, TUNE_TARGET as the model', async () => {
    const root = makeRoot();
    const run = await runAgent(byId('billing-currency'), root, { env: { TUNE_TARGET: 'example-large' } });
    expect(run.code).toBe(0);
    expect(run.result).toMatchObject({ answer: 'EUR', llmCalls: 2, toolCalls: 2, memoryReads: 0 });
    expect(run.result.usage.map((u: Json) => u.model)).toEqual(['example-large', 'example-lookup']);
    for (const u of run.result.usage) {
      expect(Object.keys(u).sort()).toEqual(['cachedTokens', 'costUsd', 'inputTokens', 'model', 'outputTokens']);
    }
    expect(typeof run.result.durationMs).toBe('number');
    expect(readFileSync(path.join(run.workspace, 'transcript.md'), 'utf8')).toContain('look-up: currency');
  });

  it('answers a plain-text question from the rule keys it names', async () => {
    const run = await runAgent({ id: 'text-q', class: 'shipping', complexity: 'medium', input: 'Which carriers do you use, and what is the order cutoff?' }, makeRoot());
    expect(run.result.answer).toBe('Carriers: DHL, UPS. Order cutoff: 2 pm.');
  });

  it('is deterministic: the same prose, case and memory give the same result and the same memory', async () => {
    const root = makeRoot();
    const item = byId('shipping-delivery-plan');
    const [a, b] = await Promise.all([runAgent(item, root), runAgent(item, root)]);
    expect(withoutDuration(a.result)).toEqual(withoutDuration(b.result));
    expect(a.raw).toBe(b.raw); // durationMs is computed, not measured
    const files = (dir: string) => readdirSync(path.join(dir, 'facts')).sort().map((f) => [f, readFileSync(path.join(dir, 'facts', f), 'utf8')]);
    expect(files(a.memory)).toEqual(files(b.memory));
  });
});

describe('the example agent and its memory', () => {
  /** Copies a memory as git-tune does, with a pinned past mtime so any rewrite shows. */
  function copyMemory(from: string): string {
    const to = path.join(tempDir('example-mem-'), 'memory');
    cpSync(from, to, { recursive: true });
    const pinned = new Date('2001-01-01T00:00:00Z');
    for (const f of readdirSync(path.join(to, 'facts'))) utimesSync(path.join(to, 'facts', f), pinned, pinned);
    return to;
  }
  const rewritten = (dir: string) => readdirSync(path.join(dir, 'facts')).filter((f) => statSync(path.join(dir, 'facts', f)).mtime.getUTCFullYear() !== 2001);

  it('looks facts up and saves them; with that memory the next run costs clearly less', async () => {
    const root = makeRoot();
    const item = byId('billing-payment-plan');
    const first = await runAgent(item, root);
    expect(readdirSync(path.join(first.memory, 'facts')).sort()).toEqual(['currency.md', 'late-fee.md', 'payment-methods.md']);
    expect(first.result).toMatchObject({ llmCalls: 4, memoryReads: 0 });

    const second = await runAgent(item, root, { memory: copyMemory(first.memory) });
    expect(second.result.answer).toEqual(first.result.answer);
    expect(second.result.memoryReads).toBe(3);
    expect(second.result.llmCalls).toBe(1);
    expect(tokens(second.result)).toBeLessThan(tokens(first.result) / 2);
    const cost = (r: Json) => r.usage.reduce((n: number, u: Json) => n + u.costUsd, 0);
    expect(cost(second.result)).toBeLessThan(cost(first.result));
  });

  it('runs without a memory directory (TUNE_MEMORY empty): looks everything up, saves nothing', async () => {
    const run = await runAgent(byId('accounts-2fa'), makeRoot(), { memory: null });
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ answer: 'required for admins', llmCalls: 2, memoryReads: 0 });
    expect(run.result.example.memory.wrote).toEqual([]);
  });

  it('saves facts twice while the memory policy lacks the line against it, and never once it is there', async () => {
    const item = byId('returns-exchange-plan');
    const shipped = makeRoot();
    const strict = makeRoot({ 'agents/memory-policy.md': addLine('- never save a fact that is already in memory') });
    const first = await runAgent(item, shipped);
    const [loose, tight] = await Promise.all([
      runAgent(item, shipped, { memory: copyMemory(first.memory) }),
      runAgent(item, strict, { memory: copyMemory(first.memory) }),
    ]);
    // Shipped policy: every fact it read is written again, byte for byte ("saved twice" = 3).
    expect(rewritten(loose.memory).sort()).toEqual(['condition.md', 'exchange.md', 'return-window.md']);
    for (const f of rewritten(loose.memory)) {
      expect(readFileSync(path.join(loose.memory, 'facts', f), 'utf8')).toBe(readFileSync(path.join(first.memory, 'facts', f), 'utf8'));
    }
    expect(loose.result.example.memory.resaved).toHaveLength(3);
    // With the policy line: nothing written, same answer, fewer tool calls.
    expect(rewritten(tight.memory)).toEqual([]);
    expect(tight.result.example.memory.resaved).toEqual([]);
    expect(tight.result.answer).toEqual(loose.result.answer);
    expect(tight.result.toolCalls).toBeLessThan(loose.result.toolCalls);
    expect(tight.result.memoryReads).toBe(3);

    // The judge turns the re-saves into the memory-policy edit the with-memory half needs.
    const verdict = await runJudge(item, loose.result, shipped);
    expect(verdict.proposals).toContainEqual(expect.objectContaining({
      file: 'agents/memory-policy.md', change: '- never save a fact that is already in memory',
    }));
  });

  it('ignores memory when the policy does not say to check it first', async () => {
    const item = byId('returns-label');
    const root = makeRoot({ 'agents/memory-policy.md': dropLine('- check memory for a fact before looking it up') });
    const first = await runAgent(item, root);
    const second = await runAgent(item, root, { memory: copyMemory(first.memory) });
    expect(second.result.memoryReads).toBe(0);
    expect(second.result.llmCalls).toBe(first.result.llmCalls);
  });
});

// Concurrent: these wait on processes, not on each other.
describe.concurrent('the example agent\'s failure modes (input.simulate / EXAMPLE_SIMULATE)', () => {
  const root = makeRoot();
  const base = byId('billing-currency');
  const simulating = (mode: string, extra: Json = {}) => ({ ...base, input: { ...base.input, simulate: mode, ...extra } });

  it('oom exits 137 and oom-signal dies of SIGKILL, both without a result', async ({ expect }) => {
    const [oom, signal] = await Promise.all([runAgent(simulating('oom'), root), runAgent(simulating('oom-signal'), root)]);
    expect(oom.code).toBe(137);
    expect(oom.raw).toBeNull();
    expect(signal.signal).toBe('SIGKILL');
    expect(signal.raw).toBeNull();
  });

  it('hang sleeps past any timeout; hang-hard also ignores SIGTERM', async ({ expect }) => {
    const [hang, hard] = await Promise.all([
      runAgent(simulating('hang'), root, { readyOn: 'simulating a hang', killAfterMs: 200, termFirst: true }),
      runAgent(simulating('hang-hard'), root, { readyOn: 'simulating a hang', killAfterMs: 200, termFirst: true }),
    ]);
    expect(hang.killed).toBe(true);
    expect(hang.signal).toBe('SIGTERM');
    expect(hang.raw).toBeNull();
    expect(hard.killed).toBe(true);
    expect(hard.signal).toBe('SIGKILL');
    expect(hard.stderr).toContain('SIGTERM ignored');
    expect(hard.raw).toBeNull();
  });

  it('garbage writes non-JSON, no-output writes nothing, crash exits 1, error reports an error', async ({ expect }) => {
    const [garbage, none, crash, error] = (await Promise.all(['garbage', 'no-output', 'crash', 'error'].map((m) => runAgent(simulating(m), root)))) as [AgentRun, AgentRun, AgentRun, AgentRun];
    expect(garbage.code).toBe(0);
    expect(garbage.raw).not.toBeNull();
    expect(() => JSON.parse(garbage.raw!)).toThrow();
    expect(none.code).toBe(0);
    expect(none.raw).toBeNull();
    expect(crash.code).toBe(1);
    expect(crash.raw).toBeNull();
    expect(error.result.error).toMatch(/simulated/);
  });

  it('void and sandbox-down report infrastructure failures in the result', async ({ expect }) => {
    const [voided, down] = await Promise.all([runAgent(simulating('void'), root), runAgent(simulating('sandbox-down'), root)]);
    expect(voided.code).toBe(0);
    expect(voided.result.void).toMatch(/simulated/);
    expect(voided.result.error).toBeUndefined();
    expect(down.result.sandboxDown).toMatch(/simulated/);
  });

  it('escape writes beside its memory copy and plants symlinks to /etc and to the repository, then answers', async ({ expect }) => {
    const run = await runAgent(simulating('escape'), root);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result.answer).toBe('EUR');
    expect(readFileSync(path.join(run.memory, '..', 'outside.md'), 'utf8')).toContain('outside');
    expect(lstatSync(path.join(run.memory, 'etc-link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(run.memory, 'etc-link'))).toBe('/etc');
    expect(readlinkSync(path.join(run.memory, 'repo-link'))).toBe(path.resolve(root));
    expect(readlinkSync(path.join(run.memory, 'facts', 'passwd.md'))).toBe('/etc/passwd');
    expect(run.result.example.escape).toEqual(['outside', 'etc', 'repo', 'etc-file']);
    // Its own fact is still a regular file; the symlinked one was not read as a fact.
    expect(lstatSync(path.join(run.memory, 'facts', 'currency.md')).isFile()).toBe(true);
  });

  it('EXAMPLE_SIMULATE applies to every case or to the one case it names; an unknown mode is an error', async ({ expect }) => {
    const [other, named, all, unknown] = await Promise.all([
      runAgent(base, root, { env: { EXAMPLE_SIMULATE: 'oom@some-other-case' } }),
      runAgent(base, root, { env: { EXAMPLE_SIMULATE: 'oom@some-other-case,void@billing-currency' } }),
      runAgent(base, root, { env: { EXAMPLE_SIMULATE: 'oom' } }),
      runAgent(simulating('explode'), root),
    ]);
    expect(other.result.answer).toBe('EUR');
    expect(named.result.void).toMatch(/simulated/);
    expect(all.code).toBe(137);
    expect(unknown.result.error).toMatch(/unknown simulate mode "explode"/);
  });
});

describe('the example judge', () => {
  it('names exactly the rule line that fixes a wrong case', async () => {
    const root = makeRoot();
    const item = byId('billing-refund-window');
    const run = await runAgent(item, root);
    const verdict = await runJudge(item, run.result, root);
    expect(verdict.right).toBe(false);
    expect(verdict.caseOnly).toBe(false);
    expect(verdict.proposals).toEqual([expect.objectContaining({ file: 'agents/prompts/billing.md', change: '- refund window: 30 days' })]);
    expect(Object.keys(verdict.proposals[0]).sort()).toEqual(['case', 'change', 'expect', 'file', 'why']);
  });

  it('grades rubric items met, partial or missed, with evidence', () => {
    const root = makeRoot();
    const judged = (id: string) => example.judgeCase(byId(id), answerInProcess(byId(id), root));
    const how = judged('billing-refund-how');
    expect(how.rubric).toEqual({ r1: 'partial', r2: 'met' });
    expect(how.evidence.r1).toContain('14 days');
    const upset = judged('shipping-cutoff-carriers');
    expect(upset.rubric).toEqual({ r1: 'missed', r2: 'met' });
    expect(upset.proposals).toEqual([expect.objectContaining({ file: 'agents/prompts/house.md', change: '- never apologise' })]);
    const plan = judged('billing-payment-plan');
    expect(plan.rubric).toEqual({ r1: 'missed' });
    expect(plan.evidence.r1).toContain('does not know');
    expect(plan.proposals.map((p: Json) => p.change)).toEqual(['- payment methods: card, bank transfer, PayPal', '- late fee: 5% after 14 days']);
  });

  it('says caseOnly, with no proposal, for the two broken cases', async () => {
    const root = makeRoot();
    const verdicts = await Promise.all(BROKEN.map((id) => runJudge(byId(id), answerInProcess(byId(id), root), root)));
    for (const [i, verdict] of verdicts.entries()) {
      expect(verdict.caseOnly, BROKEN[i]).toBe(true);
      expect(verdict.proposals, BROKEN[i]).toEqual([]);
      expect(verdict.summary, BROKEN[i]).toMatch(/case is at fault/);
    }
  });

  it('calls a failed case wrong without proposals', () => {
    const verdict = example.judgeCase(byId('returns-fee'), { answer: null, error: 'simulated' });
    expect(verdict).toMatchObject({ right: false, caseOnly: false, proposals: [] });
  });
});

describe('the example editor', () => {
  it('applies proposals by correcting and adding rule lines, and writes changes.md', async () => {
    const root = makeRoot();
    const item = byId('billing-refund-how');
    const late = byId('billing-late-invoice');
    const proposals = [item, late].flatMap((c) => example.judgeCase(c, answerInProcess(c, root)).proposals);
    const conflicting = { file: 'agents/prompts/billing.md', change: '- Refund window: 45 days', why: 'a second opinion', expect: '45 days' };
    const { changes } = await runEditor(root, [...proposals, ...proposals, conflicting]);
    const billing = readFileSync(path.join(root, 'agents/prompts/billing.md'), 'utf8');
    expect(billing).toContain('- refund window: 30 days\n');
    expect(billing).not.toContain('refund window: 14 days');
    expect(billing).toContain('- late fee: 5% after 14 days\n');
    expect(readFileSync(path.join(root, 'agents/prompts/house.md'), 'utf8')).toContain('- never apologise\n');
    expect(changes).toContain('`- refund window: 14 days` → `- refund window: 30 days`');
    expect(changes).toContain('added `- late fee: 5% after 14 days`');
    expect(changes).toContain('after a run graded NO CHANGE');
    expect(changes).toContain('Aims: billing-refund-how, billing-late-invoice');
    expect(changes).toContain('`- Refund window: 45 days`: conflicts with an earlier proposal for the same rule');
    expect(changes.match(/added `- never apologise`/g)).toHaveLength(1); // duplicates merged
    for (const c of [item, late]) expect(answerInProcess(c, root).answer, c.id).toBe(c.expected);
  });

  it('changes only memory-policy files in the with-memory half, and refuses paths outside the prose', async () => {
    const root = makeRoot();
    const { changes } = await runEditor(root, [
      { file: 'agents/prompts/billing.md', change: '- refund window: 30 days', why: 'w', expect: 'e' },
      { file: 'agents/memory-policy.md', change: '- never save a fact that is already in memory', why: 'saved twice 3', expect: 'saved twice 0' },
      { file: '../outside.md', change: '- a: b', why: 'w', expect: 'e' },
      { file: '.tune/demo/config.yaml', change: '- a: b', why: 'w', expect: 'e' },
    ], 'mem');
    expect(readFileSync(path.join(root, 'agents/memory-policy.md'), 'utf8')).toContain('- never save a fact that is already in memory\n');
    expect(readFileSync(path.join(root, 'agents/prompts/billing.md'), 'utf8')).toContain('- refund window: 14 days');
    expect(changes).toContain('only memory-policy files may change in the with-memory half');
    expect(changes).toContain('not a path inside the repository');
    expect(changes).not.toContain('Aims:');
    expect(existsSync(path.join(root, '..', 'outside.md'))).toBe(false);
  });

  it('leaves a rule that is already there alone and skips a change that is not a rule line', () => {
    const text = '# Billing\n\n- currency: EUR\n';
    expect(example.applyChange(text, '- currency: EUR').op).toBe('unchanged');
    expect(example.applyChange(text, 'explain refunds better').op).toBe('skipped');
    expect(example.applyChange(text, '- Currency: USD')).toMatchObject({ op: 'replaced', text: '# Billing\n\n- Currency: USD\n' });
    expect(example.applyChange('# Empty\n', '- never apologise')).toMatchObject({ op: 'added', text: '# Empty\n\n- never apologise\n' });
  });
});
