import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mayHaveKept, nextOptions } from '../../src/cli/kept-gate.js';
import { buildProgram } from '../../src/cli/program.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * A warm `git tune next` is answered by the entry from what the tuning keeps
 * for its tip (dist/bin/next.cjs, src/app/kept-next.ts), before the program
 * (dist/bin/cli.cjs) loads. Which of the two answered shows in the code cache:
 * each bundle writes its own file after its first successful run
 * (`<id>-next-kept.bin`, `<id>-next.bin`), in a temp dir of the test's own.
 */
describe('next answered from the kept answer', () => {
  let template: TempRepo;
  let repo: TempRepo;
  let tmp: string;
  const uid = process.getuid?.() ?? 'user';
  const cacheFiles = () => {
    const dir = path.join(tmp, `git-tune-code-cache-${uid}`);
    return existsSync(dir) ? readdirSync(dir).map((f) => f.slice(17)).sort() : [];
  };
  /** Which bundles ran since the last call (each writes its code cache file after its first successful run, answering or not). */
  const ran = () => {
    const files = cacheFiles();
    rmSync(tmp, { recursive: true, force: true });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-kept-'));
    return files;
  };
  const tune = (args: string[], env: Record<string, string> = {}) => repo.tune(args, { TMPDIR: tmp, ...env });
  /** What the program answers: the kept answer and the fold cache dropped first (nothing kept: the kept answer's bundle is not even loaded). */
  const programAnswer = (args: string[]) => {
    rmSync(repo.path('.git/tune/desk/cache'), { recursive: true, force: true });
    const r = tune(args);
    expect(ran()).toEqual(['next.bin']);
    return r;
  };

  beforeAll(() => {
    template = TempRepo.create({
      'agents/prompt.md': 'Answer politely.\n',
      'cases.jsonl': '{"id":"a-1","class":"a","input":"one"}\n{"id":"b-1","class":"b","input":"two"}\n',
    });
    template.tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--dataset', 'cases.jsonl', '--no-hooks']);
    // The first command after init settles the run tags at its tip (the program does that, once per tip).
    expect(template.tune(['status']).code).toBe(0);
  });
  afterAll(() => template.cleanup());
  beforeEach(() => {
    repo = TempRepo.copyOf(template);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-kept-'));
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('prints what the program prints, text and --json, without loading the program', () => {
    for (const args of [['next'], ['next', '--json'], ['next', '-t', 'desk', '--json'], ['next', '--tuning=desk']]) {
      // The step that wrote the tip kept its answer (init here): next is answered from it.
      const kept = tune(args);
      expect(kept.code).toBe(0);
      expect(ran()).toEqual(['next-kept.bin']);
      const program = programAnswer(args);
      expect(kept).toEqual(program);
      // The program kept its answer again: the next call is the kept one, the same.
      expect(tune(args)).toEqual(program);
      expect(ran()).toEqual(['next-kept.bin']);
    }
    expect(JSON.parse(tune(['next', '--json']).stdout)).toMatchObject({ kind: 'select', command: expect.stringContaining('git tune select') });
  });

  it('after a step, the step kept the answer for the new tip; after a commit by hand, the program answers (and keeps it)', () => {
    expect(repo.tune(['select']).code).toBe(0);
    const kept = tune(['next', '--json']);
    expect(ran()).toEqual(['next-kept.bin']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ kind: 'batch' });
    expect(kept).toEqual(programAnswer(['next', '--json']));
    repo.write({ 'agents/prompt.md': 'Answer politely and briefly.\n' });
    repo.git('commit', '-qam', 'a prose edit by hand');
    const afterHand = tune(['next', '--json']);
    expect(ran()).toEqual(['next-kept.bin', 'next.bin']);
    expect(tune(['next', '--json'])).toEqual(afterHand);
    expect(ran()).toEqual(['next-kept.bin']);
  });

  it('leaves to the program what only it can do: settle run tags at a new tip, --debug, another backend, a bad one', () => {
    rmSync(repo.path('.git/tune/desk/cache/run-tags-checked'));
    const settled = tune(['next']);
    expect(ran()).toEqual(['next-kept.bin', 'next.bin']);
    expect(existsSync(repo.path('.git/tune/desk/cache/run-tags-checked'))).toBe(true);
    expect(tune(['next'])).toEqual(settled);
    expect(ran()).toEqual(['next-kept.bin']);
    expect(tune(['--debug', 'next'])).toEqual(settled);
    expect(ran()).toEqual(['next.bin']);
    expect(tune(['next'], { GIT_TUNE_BACKEND: 'iso' })).toEqual(settled);
    expect(ran()).toEqual(['next-kept.bin', 'next.bin']);
    const bad = tune(['next'], { GIT_TUNE_BACKEND: 'svn' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('GIT_TUNE_BACKEND must be iso or native');
    expect(bad.stdout).toBe('');
    // An option next does not take: the program says so.
    const unknown = tune(['next', '--jsn']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--jsn'");
  });

  it("makes the command's start as every command does: a dead writer's temporary file is removed first", () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const left = repo.path('.git/tune/desk', `pending-step.json.tmp-${dead}-1-deadbeef`);
    writeFileSync(left, '{');
    const kept = tune(['next']);
    expect(ran()).toEqual(['next-kept.bin']);
    expect(existsSync(left)).toBe(false);
    expect(kept).toEqual(programAnswer(['next']));
  });

  it('outside a repository or on no tuning branch, the program says what is wrong', () => {
    repo.git('switch', '-q', 'main');
    const off = tune(['next']);
    expect(off.code).toBe(2);
    expect(off.stderr).toContain('is not a tuning branch');
    expect(off.stderr).toContain('fix: git switch tune/desk');
    const outside = mkdtempSync(path.join(os.tmpdir(), 'git-tune-norepo-'));
    try {
      const r = spawnSync(process.execPath, [path.join(__dirname, '../../dist/bin/git-tune.js'), 'next'], { cwd: outside, env: { ...process.env, ...repo.env, TMPDIR: tmp }, encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('is not inside a git repository');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('the look before the kept answer\'s bundle loads', () => {
  let repo: TempRepo;
  beforeAll(() => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    repo.tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--no-hooks']);
  });
  afterAll(() => repo.cleanup());

  it('finds the memo of the tuning checked out or named, from any folder of the working tree; nothing else passes', () => {
    const sub = repo.path('agents');
    expect(mayHaveKept(['next'], repo.dir)).toEqual({ json: false, tuning: undefined });
    expect(mayHaveKept(['next', '--json'], sub)).toEqual({ json: true, tuning: undefined });
    expect(mayHaveKept(['next', '-t', 'desk'], repo.dir)).toEqual({ json: false, tuning: 'desk' });
    expect(mayHaveKept(['next', '-t', 'other'], repo.dir)).toBeNull();
    // A name that is not one, even when the path it makes reaches the memo.
    expect(mayHaveKept(['next', '-t', 'x/../desk'], repo.dir)).toBeNull();
    expect(mayHaveKept(['status'], repo.dir)).toBeNull();
    expect(mayHaveKept(['next', '--verbose'], repo.dir)).toBeNull();
    repo.git('switch', '-q', 'main');
    expect(mayHaveKept(['next'], repo.dir)).toBeNull();
    expect(mayHaveKept(['next', '--tuning=desk'], repo.dir)).toEqual({ json: false, tuning: 'desk' });
    repo.git('switch', '-q', 'tune/desk');
    rmSync(repo.path('.git/tune/desk/cache/memo.json'));
    expect(mayHaveKept(['next'], repo.dir)).toBeNull();
    const outside = mkdtempSync(path.join(os.tmpdir(), 'git-tune-norepo-'));
    try {
      expect(mayHaveKept(['next'], outside)).toBeNull();
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('the options the kept answer takes', () => {
  it('are the options the program declares for next, with no default and no environment variable', () => {
    const next = buildProgram(['node', 'git-tune', 'next']).commands.find((c) => c.name() === 'next')!;
    expect(next.options.map((o) => [o.flags, o.defaultValue, o.envVar])).toEqual([['--json', undefined, undefined], ['-t, --tuning <name>', undefined, undefined]]);
  });


  it('are next, --json and one tuning name; anything else is the program\'s to parse', () => {
    expect(nextOptions(['next'])).toEqual({ json: false, tuning: undefined });
    expect(nextOptions(['next', '--json', '-t', 'desk'])).toEqual({ json: true, tuning: 'desk' });
    expect(nextOptions(['next', '--tuning', 'desk'])).toEqual({ json: false, tuning: 'desk' });
    expect(nextOptions(['next', '--tuning=desk', '--json'])).toEqual({ json: true, tuning: 'desk' });
    for (const args of [['status'], ['--debug', 'next'], ['next', '--json', '--json'], ['next', '-t'], ['next', '-t', '--json'],
      ['next', '--tuning='], ['next', '-t', 'a', '-t', 'b'], ['next', '--help'], ['next', 'extra'], ['next', '-tdesk']]) {
      expect(nextOptions(args), args.join(' ')).toBeNull();
    }
  });
});
