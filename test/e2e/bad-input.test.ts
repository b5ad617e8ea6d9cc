import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { tuneAsync, type CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * docs/method.md#selection: a bad dataset is refused whole, with every problem listed (file,
 * case index or line, field, what was found), and nothing is written.
 * Unknown extra keys on a case are kept (docs/contracts.md#dataset). A config key that is not a
 * setting is refused with the closest known key.
 */
const LONG_ID = 'a'.repeat(200);

const FILES: Record<string, string> = {
  'agents/prompt.md': 'Answer politely.\n',
  'bad/syntax.json': '[\n  {"id": "a-1", "class": "a", "input": "one"},\n  {"id": "a-2" "class": "a", "input": "two"}\n]\n',
  'bad/syntax.jsonl': [
    '{"id": "a-1", "class": "a", "input": "one"}',
    '{"id": "a-2", class: "a", "input": "two"}',
    '',
    '{"id": "a-3", "class": "a", "input": "three"}',
    '{oops',
    '',
  ].join('\n'),
  'bad/syntax.yaml': '- id: a-1\n  class: a\n  input: one\n- id: a-2\n  class: [a\n  input: two\n',
  'bad/ids.json': `${JSON.stringify([
    { id: 'dup', class: 'x', input: 'q' },
    { id: 'dup', class: 'x', input: 'q' },
    { id: '../x', class: 'x', input: 'q' },
    { id: '', class: 'x', input: 'q' },
    { id: '.', class: 'x', input: 'q' },
    { id: '..', class: 'x', input: 'q' },
    { id: 'case\u0430', class: 'x', input: 'q' }, // a Cyrillic "а" that looks like a Latin "a"
    { id: LONG_ID, class: 'x', input: 'q' },
    { id: 7, class: 'x', input: 'q' },
  ], null, 2)}\n`,
  'bad/fields.yaml': [
    '- id: ok-1',
    '  class: billing',
    '  input: fine',
    '- id: no-input',
    '  class: billing',
    '- id: no-class',
    '  input: where is the class?',
    '- id: wrong-types',
    '  class: 3',
    '  input: [a, b]',
    '  complexity: hard',
    '  rubric: names the window',
    '- id: bad-checks',
    '  class: billing',
    '  input: x',
    '  checks:',
    '    - { type: similar, value: x }',
    '    - { type: json, path: plan, value: 1 }',
    '',
  ].join('\n'),
  'bad/folder/a.jsonl': '{"id": "a-1", "class": "a", "input": "one"}\n',
  'bad/folder/b.json': '[{"id": "a-1", "class": "a", "input": "again"}, {"id": "b-1", "class": "b"}]\n',
  'good/extra.json': `${JSON.stringify([
    { id: 'a-1', class: 'a', input: { question: 'one', locale: 'de' }, owner: 'ops', tags: ['x'], checks: [{ type: 'contains', value: 'eins', why: 'German' }] },
    { id: 'b-1', class: 'b', input: 'two', rubric: [{ id: 'r1', text: 'polite', weight: 2 }] },
  ])}\n`,
};

let repo: TempRepo;
let tip: string;

beforeAll(() => {
  repo = TempRepo.create(FILES);
  expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']).code).toBe(0);
  tip = repo.git('rev-parse', 'HEAD').trim();
});
afterAll(() => repo.cleanup());

/** The real CLI, asynchronously: refusals write nothing, so they run side by side. */
const tune = (args: string[]): Promise<CliResult> => tuneAsync(repo, args);

describe.concurrent('a bad dataset is refused whole, every problem listed, nothing written', () => {
  /** Imports `file`, expects the refusal, and returns the problems listed. */
  async function refused(expect: ExpectStatic, file: string, count: number): Promise<string[]> {
    const r = await tune(['dataset', 'import', file, '--json']);
    expect(r.code, r.stderr).toBe(2);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe('bad-dataset');
    expect(error.message).toBe(`the dataset was refused: ${count} problem${count === 1 ? '' : 's'}; nothing was written`);
    expect(error.hint).toBe('git tune dataset import <file|dir>   # again, once every problem listed is fixed (nothing was written)');
    expect(error.details).toHaveLength(count);
    // stderr lists the same problems, one `- ` line each.
    for (const d of error.details) expect(r.stderr).toContain(`\n  - ${d}\n`);
    // Nothing written: the branch tip, the working tree and the index are as they were.
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(tip);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(existsSync(repo.path('.tune/support-desk/dataset.jsonl'))).toBe(false);
    return error.details;
  }

  it('malformed JSON: the line of the syntax error', async ({ expect }) => {
    const [problem] = await refused(expect, 'bad/syntax.json', 1);
    expect(problem).toMatch(/^bad\/syntax\.json line 3: is not valid JSON \(.+\)$/);
  });

  it('malformed JSONL: every bad line, and the good lines are not imported either', async ({ expect }) => {
    const problems = await refused(expect, 'bad/syntax.jsonl', 2);
    expect(problems[0]).toMatch(/^bad\/syntax\.jsonl line 2: is not valid JSON \(.+\)$/);
    expect(problems[1]).toMatch(/^bad\/syntax\.jsonl line 5: is not valid JSON \(.+\)$/);
  });

  it('malformed YAML: the line', async ({ expect }) => {
    const [problem] = await refused(expect, 'bad/syntax.yaml', 1);
    expect(problem).toMatch(/^bad\/syntax\.yaml line 6: is not valid YAML: /);
  });

  it('duplicate and unsafe ids: each named with its case number (from 1, as lines are) and what was found', async ({ expect }) => {
    const rule = 'must use only A-Z a-z 0-9 . _ - and not be "." or ".." (it names a folder)';
    expect(await refused(expect, 'bad/ids.json', 9)).toEqual([
      'bad/ids.json case 2: field `id` repeats the id of bad/ids.json case 1; ids must be unique (found "dup")',
      `bad/ids.json case 3: field \`id\` ${rule} (found "../x")`,
      'bad/ids.json case 4: field `id` must not be empty (found "")',
      `bad/ids.json case 4: field \`id\` ${rule} (found "")`,
      `bad/ids.json case 5: field \`id\` ${rule} (found ".")`,
      `bad/ids.json case 6: field \`id\` ${rule} (found "..")`,
      `bad/ids.json case 7: field \`id\` ${rule} (found "case\\u0430")`,
      `bad/ids.json case 8: field \`id\` must be at most 128 characters (found "${'a'.repeat(37)}...")`,
      'bad/ids.json case 9: field `id` must be a string like "billing-refund-03" (found number 7)',
    ]);
  });

  it('missing input or class, wrong types, an unknown check type: case index, its line, the field', async ({ expect }) => {
    const problems = await refused(expect, 'bad/fields.yaml', 7);
    expect(problems).toEqual([
      'bad/fields.yaml case 2 (line 4): field `input` is required: text, or any JSON value the runner understands (found nothing)',
      'bad/fields.yaml case 3 (line 6): field `class` must be a string naming the class, e.g. "billing" (found nothing)',
      'bad/fields.yaml case 4 (line 8): field `class` must be a string naming the class, e.g. "billing" (found number 3)',
      'bad/fields.yaml case 4 (line 8): field `complexity` must be simple, medium or complex (found "hard")',
      expect.stringMatching(/^bad\/fields\.yaml case 4 \(line 8\): field `rubric` .*array.* \(found "names the window"\)$/),
      'bad/fields.yaml case 5 (line 13): field `checks[0].type` type must be one of equals, contains, not-contains, regex, json, command (found "similar")',
      'bad/fields.yaml case 5 (line 13): field `checks[1].path` must start with $, e.g. "$.plan.steps[0]" (found "plan")',
    ]);
  });

  it('a folder: every file read, problems across files listed together', async ({ expect }) => {
    expect(await refused(expect, 'bad/folder', 2)).toEqual([
      'bad/folder/b.json case 1: field `id` repeats the id of bad/folder/a.jsonl line 1; ids must be unique (found "a-1")',
      'bad/folder/b.json case 2: field `input` is required: text, or any JSON value the runner understands (found nothing)',
    ]);
  });

  it('a file that does not exist', async ({ expect }) => {
    const r = await tune(['dataset', 'import', 'nope.yaml', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'no-such-file', message: 'nope.yaml does not exist' });
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(tip);
  });

});

describe('a good dataset', () => {
  it('unknown extra keys on a case (and on its checks and rubric items) are kept in dataset.jsonl', () => {
    const r = repo.tune(['dataset', 'import', 'good/extra.json']);
    expect(r.code, r.stderr).toBe(0);
    const cases = readFileSync(repo.path('.tune/support-desk/dataset.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(cases).toEqual([
      {
        id: 'a-1', class: 'a', input: { question: 'one', locale: 'de' }, owner: 'ops', tags: ['x'],
        checks: [{ type: 'contains', value: 'eins', why: 'German' }], complexity: 'medium', rev: expect.stringMatching(/^[0-9a-f]{12}$/),
      },
      {
        id: 'b-1', class: 'b', input: 'two', rubric: [{ id: 'r1', text: 'polite', weight: 2 }], complexity: 'medium',
        rev: expect.stringMatching(/^[0-9a-f]{12}$/),
      },
    ]);
    expect(repo.git('show', 'HEAD:.tune/support-desk/dataset.jsonl')).toBe(readFileSync(repo.path('.tune/support-desk/dataset.jsonl'), 'utf8'));
  });
});

describe('a config key that is not a setting', () => {
  it('names the closest known key, with the line, in config.yaml and in config set', () => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    try {
      expect(repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js']).code).toBe(0);
      const file = '.tune/support-desk/config.yaml';
      const text = readFileSync(repo.path(file), 'utf8');
      const lines = text.split('\n');
      const at = lines.findIndex((l) => l.startsWith('maxBatch:'));
      lines.splice(at + 1, 0, 'maxbatch: 8');
      const runner = lines.findIndex((l) => l === '    - agent.js');
      lines.splice(runner + 1, 0, '  timeoutSecs: 30');
      repo.write({ [file]: lines.join('\n') });
      repo.git('commit', '-q', '-am', 'hand-edited settings');

      const r = repo.tune(['next', '--json']);
      expect(r.code).toBe(2);
      const error = JSON.parse(r.stdout).error;
      expect({ ...error, details: [...error.details].sort() }).toEqual({
        code: 'bad-config',
        message: `${file} is not a valid config (2 problems)`,
        hint: `git log -p -1 -- ${file}   # the commit that changed it last; fix the lines listed (or put back what it changed), then commit ${file}`,
        details: [
          `${file} line ${at + 2}: field \`maxbatch\` is not a setting; did you mean \`maxBatch\`?`,
          `${file} line ${runner + 2}: field \`runner.timeoutSecs\` is not a setting; did you mean \`runner.timeoutSec\`?`,
        ],
      });

      const set = repo.tune(['config', 'set', 'recheck_count', '2', '--json']);
      expect(set.code).toBe(2);
      expect(JSON.parse(set.stdout).error.code).toBe('bad-config'); // the file is read first, and it is still bad
      const unknown = TempRepo.create({ 'agents/prompt.md': 'x\n' });
      try {
        expect(unknown.tune(['init', 'support-desk', '--prose', 'agents/**/*.md']).code).toBe(0);
        const u = unknown.tune(['config', 'set', 'maxRun', '2', '--json']);
        expect(u.code).toBe(2);
        expect(JSON.parse(u.stdout).error).toMatchObject({ code: 'unknown-config-key', message: '`maxRun` is not a setting; did you mean `maxRuns`?' });
      } finally {
        unknown.cleanup();
      }
    } finally {
      repo.cleanup();
    }
  });
});
