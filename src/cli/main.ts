#!/usr/bin/env node
// The `git-tune` executable. The program itself lives in program.ts, so `git
// tune auto` can run commands in-process without importing this entry point.
import { readFileSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+ keeps compiled code between runs (in the OS temp dir): a cold
// start then skips most of compiling what it loads. Node 20 has no such cache.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// `--version` alone answers before commander and the program load (BENCHMARKS.md: start-up).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${version}\n`);
} else {
  const { main } = await import('./program.js');
  process.exitCode = await main(process.argv);
}
