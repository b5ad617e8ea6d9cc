// One git operation on one backend, in a fresh process, as a command pays for
// it: `node bench/lib/ops.mjs <iso|native> <op> <repo>` prints JSON
// {importMs, ms} — the backend module's import, then the operation itself
// (its first call included: a process to spawn, a pack index to read).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [backend, op, dir] = process.argv.slice(2);
const gitdir = path.join(dir, '.git');
const now = () => Number(process.hrtime.bigint()) / 1e6;

const t0 = now();
const { IsoGitRepo } = backend === 'iso' ? await import(path.join(ROOT, 'dist/git/iso.js')) : {};
const { NativeGitRepo } = backend === 'native' ? await import(path.join(ROOT, 'dist/git/native-repo.js')) : {};
const importMs = now() - t0;
const { readHistory } = await import(path.join(ROOT, 'dist/app/tuning.js'));
const repo = backend === 'iso' ? new IsoGitRepo(dir, gitdir) : new NativeGitRepo(dir, gitdir);
const person = { name: 'Bench', email: 'bench@example.com', timestamp: 1767225600, timezoneOffset: 0 };
const tip = await repo.resolveRef('refs/heads/tune/desk');

const ops = {
  /** The fold's input: every first-parent commit to the init commit, hand commits diffed. */
  async history() {
    return (await readHistory(repo, 'desk', tip, (p) => p.startsWith('agents/'))).length;
  },
  /** One small file at the tip (config.yaml). */
  async blob() {
    return (await repo.readBlobAt(tip, '.tune/desk/config.yaml')).length;
  },
  /** A step commit of two small files on the tip (objects only; no ref moves). */
  async commit() {
    return repo.writeCommit({
      parent: tip, message: 'bench: a step\n', author: person, committer: person,
      changes: new Map([['.tune/desk/runs/bench/findings.md', { content: '## PASSED\n' }], ['.tune/desk/runs/bench/changes.md', { content: 'none\n' }]]),
    });
  },
  /**
   * What a run of 500 cases writes at its end: the logs commit (stdout,
   * stderr, result.json of each case) and the run commit (run.json,
   * results.json), each moved by compare-and-swap onto a scratch ref.
   */
  async 'run-commit'() {
    const logs = new Map();
    const results = [];
    for (let i = 1; i <= 500; i++) {
      const id = `case-${String(i).padStart(5, '0')}`;
      logs.set(`bench/${id}/stdout`, { content: `case ${id} done\n` });
      logs.set(`bench/${id}/stderr`, { content: '' });
      logs.set(`bench/${id}/result.json`, { content: `{"answer":"your order ships today","id":"${id}"}` });
      results.push({ id, right: true, tokens: 15, llmCalls: 1, costUsd: 0, durationMs: 40 });
    }
    const logCommit = await repo.writeCommit({ parent: null, changes: logs, message: 'logs of bench\n', author: person, committer: person });
    await repo.compareAndSwapRef('refs/bench/logs', logCommit, null);
    const run = await repo.writeCommit({
      parent: tip, message: 'bench: run\n', author: person, committer: person,
      changes: new Map([
        ['.tune/desk/runs/bench/run.json', { content: `${JSON.stringify({ run: 'bench', cases: results.map((r) => r.id) }, null, 2)}\n` }],
        ['.tune/desk/runs/bench/results.json', { content: `${JSON.stringify(results, null, 2)}\n` }],
      ]),
    });
    await repo.compareAndSwapRef('refs/bench/run', run, null);
    await repo.deleteRef('refs/bench/run', run);
    await repo.deleteRef('refs/bench/logs', logCommit);
    return run;
  },
};

const t1 = now();
await ops[op]();
const ms = now() - t1;
process.stdout.write(`${JSON.stringify({ importMs, ms, rssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
