#!/usr/bin/env node
// The module-by-module entry (dist/cli/main.js), for debugging: the shipped
// one is bin.ts. The program itself lives in program.ts, so `git tune auto`
// can run commands in-process without importing an entry point.
import { answeredVersion } from './io.js';

if (!answeredVersion(process.argv.slice(2))) {
  const { main } = await import('./program.js');
  process.exitCode = await main(process.argv);
}
