import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { yamlCases } from '../helpers/tuning.js';

/**
 * Issue 20: what the runner wrote to TUNE_TRANSCRIPT is kept in the logs ref
 * (capped at 1 MiB with a marker line saying where and how much was cut,
 * secrets redacted) and `git tune show <run> <case> --transcript` prints only it.
 * The files `runner.keep` names in TUNE_WORKSPACE are kept the same way.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/transcript-runner.mjs');
const JUDGE = path.join(ROOT, 'test/fixtures/transcript-judge.mjs');
const KEY = 'sk-transcript-SECRET42';
const CASES = [
  { id: 'small', class: 'c', input: 'small', checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'big', class: 'c', input: 'big', checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'silent', class: 'c', input: 'silent', checks: [{ type: 'contains', value: 'politely' }] },
];
const RUN = 'batch01-nomem-run1';

let repo: TempRepo;
beforeAll(async () => {
  repo = TempRepo.create();
  repo.write({ 'cases.yaml': yamlCases(CASES) });
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
  for (const [k, v] of [['minBatch', '3'], ['maxBatch', '10'], ['runner.keep', '["*.md", "notes/*.md"]']]) await tuneOk(repo, ['config', 'set', k!, v!]);
  await tuneOk(repo, ['select']);
  await tuneOk(repo, ['batch']);
  await tuneOk(repo, ['run'], { OPENAI_API_KEY: KEY });
}, 120_000);
afterAll(() => repo?.cleanup());

describe('git tune show <run> <case> --transcript', () => {
  it('prints only the transcript, with the key redacted', async () => {
    const shown = await tuneOk(repo, ['show', RUN, 'small', '--transcript']);
    const lines = shown.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['request', 'reply']);
    expect(shown.stdout).not.toContain(KEY);
    expect(lines[1].text).toBe('politely, with key [redacted:OPENAI_API_KEY]');
    expect(shown.stdout).not.toContain('--- stdout');
    const json = JSON.parse((await tuneOk(repo, ['show', RUN, 'small', '--transcript', '--json'])).stdout);
    expect(json).toEqual({ run: RUN, case: 'small', transcript: repo.git('show', `refs/tune-logs/desk:${RUN}/small/transcript.jsonl`) });
  });

  it('cuts a transcript over 1 MiB at a whole line, with a marker saying where and how much', async () => {
    const kept = repo.git('cat-file', '-p', `refs/tune-logs/desk:${RUN}/big/transcript.jsonl`);
    const lines = kept.trimEnd().split('\n');
    const marker = lines.pop()!;
    const m = /^\[git-tune: cut here after (\d+) bytes; (\d+) more bytes not kept\]$/.exec(marker);
    expect(m, marker).not.toBeNull();
    const keptBytes = Number(m![1]);
    expect(keptBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(keptBytes).toBe(Buffer.byteLength(lines.join('\n')) + 1);
    // Every kept line is whole JSON; kept plus cut is the size the runner wrote.
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(keptBytes + Number(m![2])).toBeGreaterThanOrEqual(1.5 * 1024 * 1024);
    const shown = await tuneOk(repo, ['show', RUN, 'big', '--transcript']);
    expect(shown.stdout.trimEnd().split('\n').pop()).toBe(marker);
  });

  it('says so when the runner wrote none', async () => {
    const shown = await tuneAsync(repo, ['show', RUN, 'silent', '--transcript']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe('');
    expect(shown.stderr).toContain('the runner wrote no transcript');
    expect(JSON.parse((await tuneOk(repo, ['show', RUN, 'silent', '--transcript', '--json'])).stdout).transcript).toBeNull();
    expect(repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk')).not.toContain('silent/transcript.jsonl');
  });

  it('needs a case', async () => {
    const shown = await tuneAsync(repo, ['show', RUN, '--transcript']);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain('--transcript shows one case');
  });
});

describe('runner.keep: workspace files kept in the logs ref', () => {
  it('keeps the files the globs name, under workspace/, redacted, and --log prints them', async () => {
    const files = repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk').trim().split('\n');
    expect(files.filter((f) => f.startsWith(`${RUN}/small/workspace/`))).toEqual([
      `${RUN}/small/workspace/notes/plan.md`, `${RUN}/small/workspace/transcript.md`,
    ]);
    expect(files.some((f) => f.endsWith('scratch.bin'))).toBe(false);
    const md = repo.git('show', `refs/tune-logs/desk:${RUN}/small/workspace/transcript.md`);
    expect(md).toBe('# small\n\nasked the model with [redacted:OPENAI_API_KEY]\n');
    expect(repo.git('ls-tree', '-r', '--name-only', 'tune/desk')).not.toContain('workspace/');

    const log = await tuneOk(repo, ['show', RUN, 'small', '--log']);
    expect(log.stdout).toContain(`--- workspace/notes/plan.md\nplan for small\n`);
    expect(log.stdout).toContain(`--- workspace/transcript.md\n${md}`);
    const json = JSON.parse((await tuneOk(repo, ['show', RUN, 'small', '--log', '--json'])).stdout);
    expect(json.workspace).toEqual([{ path: 'notes/plan.md', text: 'plan for small\n' }, { path: 'transcript.md', text: md }]);
  });

  it('caps a kept file at 1 MiB with the same marker', () => {
    const huge = execFileSync('git', ['cat-file', '-p', `refs/tune-logs/desk:${RUN}/big/workspace/huge.md`], { cwd: repo.dir, maxBuffer: 1 << 26 }).toString();
    expect(huge.endsWith(`\n[git-tune: cut here after ${1024 * 1024} bytes; ${1024 * 1024} more bytes not kept]\n`)).toBe(true);
    expect(huge.length).toBeLessThan(1024 * 1024 + 100);
  });

  it('the logs ref is sound to native git', () => {
    expect(repo.git('fsck', '--no-dangling').trim()).toBe('');
  });
});

describe('the judge gets TUNE_TRANSCRIPT', () => {
  it('is given the case\'s kept transcript when the runner wrote one, and no variable when it did not', async () => {
    const copy = TempRepo.copyOf(repo);
    try {
      await tuneOk(copy, ['config', 'set', 'judge', JSON.stringify({ command: ['node', JUDGE] })]);
      await tuneOk(copy, ['grade', '--draft']);
      const judged = JSON.parse(readFileSync(copy.path('.tune/desk/runs', RUN, 'judge.json'), 'utf8'));
      const first = repo.git('show', `refs/tune-logs/desk:${RUN}/small/transcript.jsonl`).split('\n')[0]!.slice(0, 40);
      expect(judged.small.summary).toBe(`saw a transcript: ${first}`);
      expect(judged.big.summary).toMatch(/^saw a transcript: \{"type":"request","call":0/);
      expect(judged.silent.summary).toBe('no transcript');
    } finally {
      copy.cleanup();
    }
  });
});
