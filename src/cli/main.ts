#!/usr/bin/env node
// The `git-tune` executable. The program itself lives in program.ts, so `git
// tune auto` can run commands in-process without importing this entry point.
import { main } from './program.js';

process.exitCode = await main(process.argv);
