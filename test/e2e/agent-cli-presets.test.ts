import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { RUNNER } from '../helpers/tuning.js';

/**
 * The agent-CLI presets (claude-code, codex) as runner and editor
 * (docs/presets.md), against fake `claude` and `codex` executables that
 * print what the real ones print (test/fixtures/fake-agent-cli.mjs). The
 * preset programs are run as git-tune runs them (the built
 * dist/bin/runner-cli.js and editor-cli.js, with the contract's env), and
 * once through `git tune auto`.
 */
const FAKE = path.join(ROOT, 'test/fixtures/fake-agent-cli.mjs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-agent-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The fake installed as `claude` and `codex` in a folder of its own (for options.bin and PATH). */
const bin = path.join(tmp, 'bin');
mkdirSync(bin);
for (const name of ['claude', 'codex']) {
  copyFileSync(FAKE, path.join(bin, name));
  chmodSync(path.join(bin, name), 0o755);
}

let n = 0;
/** One case run by the runner preset, as git-tune runs it: the result file, the CLI's arguments, the memory folder after. */
function runCase(preset: 'claude-code' | 'codex', options: Record<string, unknown>, env: Record<string, string> = {}, memoryFiles: Record<string, string> = {}, input = 'where is my refund?', status = 0) {
  const dir = path.join(tmp, `case-${++n}`);
  const root = path.join(dir, 'root');
  const memory = path.join(dir, 'memory');
  mkdirSync(path.join(root, 'agents'), { recursive: true });
  mkdirSync(memory);
  writeFileSync(path.join(root, 'agents/prompt.md'), 'Answer politely.\n');
  for (const [f, text] of Object.entries(memoryFiles)) writeFileSync(path.join(memory, f), text);
  writeFileSync(path.join(dir, 'case.json'), JSON.stringify({ id: 'a', input }));
  const argsFile = path.join(dir, 'args.jsonl');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/bin/runner-cli.js')], {
    cwd: root, encoding: 'utf8',
    env: {
      PATH: `${bin}${path.delimiter}${process.env.PATH}`, FAKE_ARGS: argsFile, ...env,
      TUNE_PRESET: preset, TUNE_PRESET_OPTIONS: JSON.stringify(options), TUNE_ROOT: root, TUNE_MEMORY: memory,
      TUNE_CASE: path.join(dir, 'case.json'), TUNE_OUTPUT: path.join(dir, 'result.json'), TUNE_WORKSPACE: dir,
      TUNE_TRANSCRIPT: path.join(dir, 'transcript.jsonl'),
    },
  });
  expect(r.status, r.stderr).toBe(status);
  if (status !== 0) return { result: existsSync(path.join(dir, 'result.json')) ? JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8')) : null, args: [], memory, saved: [], transcript: null };
  const transcriptFile = path.join(dir, 'transcript.jsonl');
  const transcript = existsSync(transcriptFile) ? readFileSync(transcriptFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : null;
  const args = existsSync(argsFile) ? readFileSync(argsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]) : [];
  return { result: JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8')), args: args[0] ?? [], memory, saved: readdirSync(memory).sort(), transcript };
}

describe('runner presets claude-code and codex', () => {
  it('claude-code: the answer, usage per model, model calls, tool calls and memory reads from its stream; told where its memory is', () => {
    const { result, args, memory, saved, transcript } = runCase('claude-code', {}, {}, { 'index.md': 'refunds take 30 days\n' });
    // The whole event stream is the transcript: every assistant turn and tool call, and the result with its usage.
    expect(transcript?.filter((e) => e.type === 'assistant')).toHaveLength(3);
    expect(transcript?.at(-1)).toMatchObject({ type: 'result' });
    expect(result).toMatchObject({ answer: 'where is my refund? Answer politely.', llmCalls: 3, toolCalls: 2, memoryReads: 1 });
    expect(result.usage).toEqual([{ model: 'claude-sonnet-4-5-20250929', inputTokens: 1000, outputTokens: 50, cachedTokens: 600, costUsd: 0.0123 }]);
    expect(result.error).toBeUndefined();
    expect(saved).toEqual(['fact-2.md', 'index.md']); // the write git-tune counts (it compares the folder before and after)
    expect(args.slice(0, 4)).toEqual(['-p', '--output-format', 'stream-json', '--verbose']);
    expect(args.slice(-2)).toEqual(['--', 'where is my refund?']);
    expect(args[args.indexOf('--add-dir') + 1]).toBe(memory);
    expect(args[args.indexOf('--append-system-prompt') + 1]).toContain(`Your memory is the folder ${memory}.`);
    expect(args[args.indexOf('--allowedTools') + 1]).toBe(`Read,Glob,Grep,LS,Edit(/${memory}/**),Write(/${memory}/**)`);
  });

  it('codex: the last agent message, turn usage priced from options.prices for the -m model, tool items counted', () => {
    const prices = { 'gpt-5-codex': { inputPerMTok: 1, outputPerMTok: 10, cachedPerMTok: 0.1 } };
    const { result, args, memory } = runCase('codex', { bin: path.join(bin, 'codex'), args: ['-m', 'gpt-5-codex'], prices }, {}, { 'index.md': 'x\n' });
    expect(result).toMatchObject({ llmCalls: 1, toolCalls: 2, memoryReads: 1 });
    expect(result.answer).toMatch(/where is my refund\? Answer politely\.$/);
    expect(result.usage).toHaveLength(1);
    expect(result.usage[0]).toMatchObject({ model: 'gpt-5-codex', inputTokens: 2000, outputTokens: 80, cachedTokens: 1500 });
    expect(result.usage[0].costUsd).toBeCloseTo((500 * 1 + 1500 * 0.1 + 80 * 10) / 1e6, 12);
    expect(args.slice(0, 3)).toEqual(['exec', '--json', '--skip-git-repo-check']);
    expect(args.slice(3, 7)).toEqual(['--sandbox', 'workspace-write', '--add-dir', memory]);
    expect(args.at(-1)).toContain(`Your memory is the folder ${memory}.`);
    expect(args.at(-2)).toBe('--');
    // No price for the model: tokens still counted, cost 0.
    expect(runCase('codex', {}).result.usage[0]).toMatchObject({ model: 'codex', inputTokens: 2000, costUsd: 0 });
  });

  it('a CLI that is not there is sandbox-down; one that prints no JSON or reports a failure is the case\'s error', () => {
    const missing = runCase('claude-code', { bin: path.join(tmp, 'no-such-claude') }).result;
    expect(missing.sandboxDown).toMatch(/no-such-claude could not start: .*ENOENT.*options\.bin/);
    const text = runCase('claude-code', {}, { FAKE_MODE: 'text' }).result;
    expect(text.error).toBe('claude printed no JSON (exit 1): Error: not logged in. Run claude login.');
    expect(text.sandboxDown).toBeUndefined();
    expect(runCase('claude-code', {}, { FAKE_MODE: 'error' }).result.error).toBe('Credit balance is too low');
    expect(runCase('codex', {}, { FAKE_MODE: 'error' }).result.error).toBe('stream disconnected before completion');
  });

  it('a CLI dead of memory makes the case VOID, never an error: its heap full (SIGABRT), or killed (SIGKILL, passed on as exit 137)', () => {
    const heap = runCase('claude-code', {}, { FAKE_MODE: 'oom-heap' }).result;
    expect(heap).toMatchObject({ answer: null, void: 'out of memory (SIGABRT): claude: FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory' });
    expect(heap.error).toBeUndefined();
    expect(runCase('codex', {}, { FAKE_MODE: 'oom-kill' }, {}, 'where is my refund?', 137).result).toBeNull();
  });

  it('an input too long for one argument (Linux: 128 KiB) goes on the CLI\'s stdin', () => {
    const long = `${'context line\n'.repeat(12_000)}so where is my refund?`;
    const claude = runCase('claude-code', {}, {}, {}, long);
    expect(claude.result.answer).toBe('so where is my refund? Answer politely.');
    expect(claude.args.slice(0, 2)).toEqual(['-p', '--output-format']);
    expect(claude.args).not.toContain('--');
    const codex = runCase('codex', {}, {}, {}, long);
    expect(codex.result.answer).toBe('so where is my refund? Answer politely.');
    expect(codex.args.at(-1)).toBe('-');
  });
});

/** A folder as the editor finds the repository: prose, memory policy, a findings file and the merged proposals. */
function runEditorPreset(preset: 'claude-code' | 'codex', half: 'nomem' | 'mem', env: Record<string, string> = {}) {
  const root = path.join(tmp, `editor-${++n}`);
  mkdirSync(path.join(root, 'agents'), { recursive: true });
  mkdirSync(path.join(root, '.tune/desk/runs/r1'), { recursive: true });
  writeFileSync(path.join(root, 'agents/prompt.md'), 'Answer politely.\n');
  writeFileSync(path.join(root, 'agents/memory-policy.md'), 'Save facts.\n');
  writeFileSync(path.join(root, '.tune/desk/runs/r1/findings.md'), '# Findings\n\nb: never mentions a refund\n');
  const proposals = path.join(tmp, `proposals-${n}.json`);
  writeFileSync(proposals, JSON.stringify([{ file: 'agents/prompt.md', change: 'offer a refund', why: 'b missed', expect: 'b right', cases: ['b', 'c'] }]));
  const argsFile = path.join(tmp, `editor-args-${n}.jsonl`);
  const changes = path.join(root, '.tune/desk/runs/r1/changes.md');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/bin/editor-cli.js')], {
    cwd: root, encoding: 'utf8',
    env: {
      PATH: `${bin}${path.delimiter}${process.env.PATH}`, FAKE_ARGS: argsFile, ...env,
      TUNE_PRESET: preset, TUNE_PRESET_OPTIONS: '{}', TUNE_ROOT: root, TUNE_RUN: 'r1', TUNE_HALF: half,
      TUNE_PROSE_GLOBS: JSON.stringify({ prose: ['agents/**/*.md'], memoryPolicy: ['agents/memory-policy.md'] }),
      TUNE_FINDINGS: path.join(root, '.tune/desk/runs/r1/findings.md'), TUNE_PROPOSALS: proposals, TUNE_CHANGES: changes,
    },
  });
  const args = JSON.parse(readFileSync(argsFile, 'utf8').trim().split('\n')[0]!) as string[];
  const read = (f: string) => readFileSync(path.join(root, f), 'utf8');
  return { r, root, args, read, changes: existsSync(changes) ? readFileSync(changes, 'utf8') : null };
}

describe('editor presets claude-code and codex', () => {
  it('claude-code edits the prose it is offered, limited to file tools on the prose and changes.md, and keeps the changes.md it wrote', () => {
    const { r, root, args, read, changes } = runEditorPreset('claude-code', 'nomem');
    expect(r.status, r.stderr).toBe(0);
    // The fake edits the first file listed: the memory policy (sorted before the prompt), which a no-memory half may change.
    expect(read('agents/memory-policy.md')).toBe('Save facts.\nOffer a refund.\n');
    expect(read('agents/prompt.md')).toBe('Answer politely.\n');
    expect(changes).toBe('# Refunds\n\nThe prompt now offers a refund.\n\nAims: b\n');
    const prompt = args[args.indexOf('--') + 1]!;
    expect(prompt).toContain('b: never mentions a refund');
    expect(prompt).toContain('"change":"offer a refund"');
    expect(prompt).toContain('## Files you may change\n- agents/memory-policy.md\n- agents/prompt.md\n');
    expect(prompt).toContain('Then write .tune/desk/runs/r1/changes.md:');
    const allowed = args[args.indexOf('--allowedTools') + 1]!.split(',');
    expect(allowed).toEqual(['Read', 'Glob', 'Grep', 'LS',
      `Edit(/${root}/agents/**/*.md)`, `Write(/${root}/agents/**/*.md)`,
      `Edit(/${root}/agents/memory-policy.md)`, `Write(/${root}/agents/memory-policy.md)`,
      `Edit(/${root}/.tune/desk/runs/r1/changes.md)`, `Write(/${root}/.tune/desk/runs/r1/changes.md)`]);
    expect(args[args.indexOf('--disallowedTools') + 1]).toBe('Bash');
    expect(r.stdout).toContain('claude-code editor: changed agents/memory-policy.md');
  });

  it('codex in a with-memory half is offered the memory policy alone; changed prose and no changes.md gets one aiming at the proposals\' cases', () => {
    const { r, root, args, read, changes } = runEditorPreset('codex', 'mem', { FAKE_NO_CHANGES: '1' });
    expect(r.status, r.stderr).toBe(0);
    expect(read('agents/memory-policy.md')).toBe('Save facts.\nOffer a refund.\n');
    expect(read('agents/prompt.md')).toBe('Answer politely.\n');
    expect(args.slice(0, 7)).toEqual(['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', '-C', root]);
    expect(args.at(-1)).toContain('## Files you may change\n- agents/memory-policy.md\nA new file');
    expect(args.at(-1)).toContain('This is a with-memory half');
    expect(changes).toBe('# Changes\n\nThe codex editor changed agents/memory-policy.md:\n\nEdited agents/memory-policy.md.\n\nAims: b, c\n');
  });

  it('a failing editor CLI fails the editor step with its reason', () => {
    const { r } = runEditorPreset('claude-code', 'nomem', { FAKE_MODE: 'error' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('editor-cli: claude failed (exit 0): Credit balance is too low');
  });
});

describe('git tune auto with the claude-code editor preset', () => {
  it('the editor fixes the prose, writes changes.md; what it touched outside the prose is put back and named', () => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'notes.txt': 'mine\n' });
    try {
      repo.write({ 'cases.yaml': [
        '- { id: a, class: c, input: a, checks: [{ type: contains, value: politely }] }',
        '- { id: b, class: c, input: b, checks: [{ type: contains, value: refund }] }',
      ].join('\n') + '\n' });
      const ok = (args: string[]) => {
        const r = repo.tune(args, { PATH: `${bin}${path.delimiter}${process.env.PATH}` });
        expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}\n${r.stdout}`).toBe(0);
        return r;
      };
      ok(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
      ok(['config', 'set', 'editor', '{preset: claude-code}']);
      ok(['config', 'set', 'minBatch', '2']);
      ok(['auto', '--until', 'final']);
      const edits = repo.git('log', '--format=%H %s', '--grep=^Tune-Step: edit', 'tune/desk').trim().split('\n').filter(Boolean);
      expect(edits.length).toBeGreaterThanOrEqual(1);
      const first = edits.at(-1)!.split(' ')[0]!;
      expect(repo.git('show', `${first}:agents/prompt.md`)).toBe('Answer politely.\nOffer a refund.\n');
      const files = repo.git('show', '--name-only', '--format=', first).trim().split('\n');
      expect(files).toEqual(expect.arrayContaining(['.tune/desk/runs/batch01-nomem-run1/changes.md', 'agents/prompt.md']));
      expect(files).not.toContain('notes.txt');
      const changes = repo.git('show', `${first}:.tune/desk/runs/batch01-nomem-run1/changes.md`);
      expect(changes).toContain('Aims: b');
      expect(changes).toContain('Put back by git-tune: the editor also changed notes.txt');
      expect(readFileSync(repo.path('notes.txt'), 'utf8')).toBe('mine\n');
      repo.fsck();
    } finally {
      repo.cleanup();
    }
  });
});
