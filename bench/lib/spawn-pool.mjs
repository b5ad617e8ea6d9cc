// The plain baseline of a run: `node bench/lib/spawn-pool.mjs <n> <concurrency> <out-dir> <program> [args…]`
// starts <program> [args…] <out-dir>/<i>.json for i = 1..n, <concurrency> at a time, each
// with its stdout and stderr piped to files as git-tune captures them, and nothing
// else: no git, no case files, no results read. Run with bench/lib/rss.mjs
// preloaded, its peak resident memory is what starting that many processes costs Node.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';

const [n, concurrency, out, program, ...args] = process.argv.slice(2);
let next = 1;
const one = (i) => new Promise((resolve, reject) => {
  const child = spawn(program, [...args, path.join(out, `${i}.json`)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TUNE_CASE_ID: `case-${i}` } });
  child.stdout.pipe(createWriteStream(path.join(out, `${i}.stdout`)));
  child.stderr.pipe(createWriteStream(path.join(out, `${i}.stderr`)));
  child.on('error', reject);
  child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program}: exit ${code}`))));
});
const worker = async () => {
  while (next <= Number(n)) await one(next++);
};
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
