import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { tuneAsync, type CliResult } from '../helpers/cli.js';
import { revOrNull, TempRepo } from '../helpers/repo.js';

/**
 * Issue 9, secrets (docs/contracts.md#secrets: "none is ever written to the repository, a log,
 * or a report"): a key planted in the environment, which the runner prints
 * to stdout and stderr, puts in its answer, its error, extra result keys and
 * its memory, and the judge repeats, is found nowhere afterwards: not in any
 * object, ref, file of the working tree, .git/tune, nor git-tune's own output.
 */
const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

const KEY = `sk-planted-${randomBytes(12).toString('hex')}`;
const PASSWORD = `hunter2-${randomBytes(6).toString('hex')}`;
const ENV = { OPENAI_API_KEY: KEY, DB_PASSWORD: PASSWORD, NOT_A_SECRET_NAME: 'visible-value-123' };

const RUNNER = `import fs from 'node:fs';
import path from 'node:path';
const item = JSON.parse(fs.readFileSync(process.env.TUNE_CASE, 'utf8'));
const key = process.env.OPENAI_API_KEY;
console.log('calling the model with ' + key);
console.error('Authorization: Bearer ' + key + ' (db ' + process.env.DB_PASSWORD + ')');
const mem = process.env.TUNE_MEMORY;
fs.mkdirSync(path.join(mem, 'notes'), { recursive: true });
fs.writeFileSync(path.join(mem, 'notes', item.id + '.md'), 'remember: the key is ' + key + '\\n');
fs.writeFileSync(process.env.TUNE_TRANSCRIPT, JSON.stringify({ type: 'request', headers: { authorization: 'Bearer ' + key } }) + '\\n');
const usage = [{ model: 'm', inputTokens: 10, outputTokens: 2 }];
fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify(item.input === 'fail'
  ? { answer: null, usage, error: 'the endpoint refused key ' + key }
  : { answer: { text: 'politely: your key is ' + key, quoted: JSON.stringify({ key }) }, usage, debug: { headers: { authorization: 'Bearer ' + key } } }));
`;

const JUDGE = `import fs from 'node:fs';
const result = JSON.parse(fs.readFileSync(process.env.TUNE_RESULT, 'utf8'));
const key = process.env.OPENAI_API_KEY;
console.log('judging with ' + key);
fs.writeFileSync(process.env.TUNE_OUTPUT, JSON.stringify({
  right: !result.error, summary: 'judged with ' + key, evidence: { r1: 'the answer quotes ' + key },
  rubric: { r1: 'met' }, proposals: [{ file: 'agents/prompt.md', change: 'never print ' + key, why: 'it leaked', expect: 'no ' + key }],
}));
`;

function expectNoSecret(expect: any, where: string, text: string): void {
  expect(text.includes(KEY), `${where} holds the planted key`).toBe(false);
  expect(text.includes(PASSWORD), `${where} holds the planted password`).toBe(false);
}

function grepAll(repo: TempRepo): Record<string, string> {
  const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { cwd: repo.dir, maxBuffer: 1 << 30 }).stdout.toString('latin1');
  return {
    'git objects': run('git', ['cat-file', '--batch-all-objects', '--batch']),
    refs: run('git', ['for-each-ref', '--format=%(refname) %(objectname)']),
    'working tree': run('grep', ['-r', '-a', '-h', '', '.', '--exclude-dir=.git']),
    '.git/tune': existsSync(repo.path('.git/tune')) ? run('grep', ['-r', '-a', '-h', '', '.git/tune']) : '',
    '.git (loose files)': run('grep', ['-r', '-a', '-l', KEY, '.git']),
  };
}

describe('a planted secret', () => {
  it('is redacted from logs, results, memory writes, judge output, findings and reports, and found nowhere in the repository', async ({ expect }) => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'runner.mjs': RUNNER, 'judge.mjs': JUDGE });
    repos.push(repo);
    repo.write({
      'cases.yaml': [
        { id: 'k1', class: 'c', input: 'talk', rubric: [{ id: 'r1', text: 'polite' }], checks: [{ type: 'contains', value: 'politely' }] },
        { id: 'k2', class: 'c', input: 'fail', rubric: [{ id: 'r1', text: 'polite' }] },
      ].map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n',
    });
    const outputs: CliResult[] = [];
    const tune = async (args: string[]) => {
      const r = await tuneAsync(repo, args, ENV);
      outputs.push(r);
      if (r.code !== 0) throw new Error(`git tune ${args.join(' ')} exited ${r.code}\n${r.stderr}`);
      return r;
    };
    await tune(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node runner.mjs', '--judge', 'node judge.mjs', '--dataset', 'cases.yaml']);
    await tune(['config', 'set', 'minBatch', '2']);
    await tune(['select']);
    await tune(['batch']);
    const run = await tune(['run', '--json']);
    const results = JSON.parse(run.stdout).results;
    expect(JSON.stringify(results)).toContain('[redacted:OPENAI_API_KEY]');
    expect(results.find((r: { id: string }) => r.id === 'k2').error).toBe('the endpoint refused key [redacted:OPENAI_API_KEY]');
    await tune(['grade', '--draft']);
    const findings = readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/findings.md'), 'utf8');
    expect(findings).toContain('[redacted:OPENAI_API_KEY]'); // the judge's summary, redacted, is in the draft
    await tune(['grade']);
    await tune(['difficult', 'add', 'k2', '--why', 'wrong', '--note', 'the endpoint refuses the key']);
    for (const id of ['k1', 'k2']) {
      const log = await tune(['show', 'batch01-nomem-run1', id, '--log']);
      expect(log.stdout).toContain('[redacted:OPENAI_API_KEY]');
      expect(log.stdout).toContain('[redacted:DB_PASSWORD]');
    }
    await tune(['status']);
    await tune(['report', 'batch01-nomem-run1']);
    // A variable not named like a secret is not touched.
    expect(readFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/results.json'), 'utf8')).not.toContain('visible-value-123');

    for (const [where, text] of Object.entries(grepAll(repo))) expectNoSecret(expect, where, text);
    outputs.forEach((o, i) => expectNoSecret(expect, `the output of command ${i + 1}`, o.stdout + o.stderr));
    expect(repo.git('ls-tree', '-r', '--name-only', 'refs/tune-logs/desk')).toContain('batch01-nomem-run1/k1/stdout');
    expect(repo.git('show', 'refs/tune-logs/desk:batch01-nomem-run1/k1/transcript.jsonl')).toContain('Bearer [redacted:OPENAI_API_KEY]');
  });

  it('pasted into a file a step commits (findings, prose, settings), the step is refused, naming the file and the variable, not the value', async ({ expect }) => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'runner.mjs': RUNNER });
    repos.push(repo);
    repo.write({ 'cases.yaml': `- ${JSON.stringify({ id: 'k1', class: 'c', input: 'talk', checks: [{ type: 'contains', value: 'politely' }] })}\n` });
    const ok = async (args: string[]) => {
      const r = await tuneAsync(repo, args, ENV);
      expect(r.code, r.stderr).toBe(0);
    };
    await ok(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node runner.mjs', '--dataset', 'cases.yaml']);
    await ok(['select']);
    await ok(['batch']);
    await ok(['run']);
    await ok(['grade', '--draft']);
    const findings = '.tune/desk/runs/batch01-nomem-run1/findings.md';
    const draft = readFileSync(repo.path(findings), 'utf8');
    const refusals: Array<[string[], () => void, string]> = [
      [['grade'], () => writeFileSync(repo.path(findings), `${draft}\nTried it by hand with ${KEY}.\n`), findings],
      [['config', 'set', 'runner.env', JSON.stringify({ OPENAI_API_KEY: KEY })], () => {}, '.tune/desk/config.yaml'],
    ];
    for (const [args, prepare, file] of refusals) {
      prepare();
      const tip = revOrNull(repo, 'refs/heads/tune/desk');
      const r = await tuneAsync(repo, args, ENV);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`refusing to commit a secret: ${file} holds the value of $OPENAI_API_KEY`);
      expectNoSecret(expect, 'the refusal', r.stdout + r.stderr);
      expect(revOrNull(repo, 'refs/heads/tune/desk')).toBe(tip);
    }
    writeFileSync(repo.path(findings), draft);
    await ok(['grade']);
    await ok(['grade', '--verdict', 'NO CHANGE']);
    writeFileSync(repo.path('agents/prompt.md'), `Answer politely. Use the key ${KEY}.\n`);
    writeFileSync(repo.path('.tune/desk/runs/batch01-nomem-run1/changes.md'), '# Changes\n\n- give the agent its key\n');
    const edit = await tuneAsync(repo, ['edit'], ENV);
    expect(edit.code).toBe(2);
    expect(edit.stderr).toContain('agents/prompt.md holds the value of $OPENAI_API_KEY');
    for (const [where, text] of Object.entries(grepAll(repo))) {
      if (where === 'working tree') continue; // the user's own file, as they wrote it
      expectNoSecret(expect, where, text);
    }
  });
});
