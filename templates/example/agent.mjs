#!/usr/bin/env node
// =============================================================================
// THE EXAMPLE AGENT: A STAND-IN FOR AN LLM AGENT. NO MODEL, NO NETWORK.
//
// git-tune bundles it so tests and the demo have an "agent" whose answers
// depend on its prose the way a real agent's do, but deterministically: it
// answers from rule lines (`- key: value`) in agents/prompts/*.md, follows the
// flags in agents/memory-policy.md, and reports "LLM calls" and tokens that
// are computed from the text it handles. See README.md beside this file.
//
// Runner contract (git-tune's docs/contracts.md#runner): run once per case, working
// directory = the repository root. Env: TUNE_CASE, TUNE_MEMORY, TUNE_WORKSPACE,
// TUNE_OUTPUT, TUNE_RUN, TUNE_CASE_ID, TUNE_ROOT, optional TUNE_TARGET.
// Test switches (never used by the bundled dataset): input.simulate or
// EXAMPLE_SIMULATE; input.delayMs or EXAMPLE_DELAY_MS; EXAMPLE_AGENTS_DIR.
// =============================================================================
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_AGENTS_DIR, SIMULATIONS, answerCase, normalizeInput, proseFilesFor } from './lib/example.mjs';

const env = process.env;

async function writeResult(result) {
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (!env.TUNE_OUTPUT) {
    process.stdout.write(text);
    return;
  }
  await fs.mkdir(path.dirname(env.TUNE_OUTPUT), { recursive: true });
  await fs.writeFile(env.TUNE_OUTPUT, text);
}

const empty = () => ({ answer: null, usage: [], llmCalls: 0, toolCalls: 0, memoryReads: 0, durationMs: 0 });
const failed = (error) => ({ ...empty(), error });

/** `EXAMPLE_SIMULATE=mode` (every case) or `mode@case-id,mode@case-id`; the case's own input.simulate wins. */
function simulationFor(input, caseId) {
  if (typeof input.simulate === 'string') return input.simulate;
  let all = null;
  for (const entry of (env.EXAMPLE_SIMULATE ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = entry.indexOf('@');
    if (at < 0) all = entry;
    else if (entry.slice(at + 1) === caseId) return entry.slice(0, at);
  }
  return all;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function readText(file) {
  try {
    const st = await fs.lstat(file);
    return st.isFile() ? await fs.readFile(file, 'utf8') : null;
  } catch {
    return null;
  }
}

/** input.simulate = "escape": tries to get out of its memory copy, then answers as usual. */
async function tryEscape(memoryDir, root, which) {
  const kinds = Array.isArray(which) && which.length ? which : ['outside', 'etc', 'repo', 'etc-file'];
  const done = [];
  const attempt = async (kind, fn) => {
    if (!kinds.includes(kind)) return;
    try {
      await fn();
      done.push(kind);
    } catch (err) {
      done.push(`${kind} failed: ${err.code ?? err.message}`);
    }
  };
  await attempt('outside', () => fs.writeFile(path.join(memoryDir, '..', 'outside.md'), 'written outside the memory copy\n'));
  await attempt('etc', () => fs.symlink('/etc', path.join(memoryDir, 'etc-link')));
  await attempt('repo', () => fs.symlink(path.resolve(root), path.join(memoryDir, 'repo-link')));
  await attempt('etc-file', async () => {
    await fs.mkdir(path.join(memoryDir, 'facts'), { recursive: true });
    await fs.symlink('/etc/passwd', path.join(memoryDir, 'facts', 'passwd.md'));
  });
  return done;
}

/** Returns true when the simulation ends the case (nothing else to do). */
async function simulate(mode) {
  switch (mode) {
    case 'oom':
      process.exit(137); // what a shell reports for a process the kernel's OOM killer ended
      return true; // not reached
    case 'oom-signal':
      process.kill(process.pid, 'SIGKILL');
      await sleep(60_000);
      return true;
    case 'oom-heap':
      // How Node ends when its heap is full: this line on stderr, then abort (SIGABRT; a shell shows exit 134).
      process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n');
      process.abort();
      return true; // not reached
    case 'hang-hard':
      process.on('SIGTERM', () => process.stderr.write('hang-hard: SIGTERM ignored\n'));
      process.on('SIGINT', () => process.stderr.write('hang-hard: SIGINT ignored\n'));
    // falls through
    case 'hang':
      process.stdout.write(`simulating a hang (${mode})\n`);
      await sleep(24 * 3600 * 1000);
      return true;
    case 'garbage':
      if (env.TUNE_OUTPUT) await fs.writeFile(env.TUNE_OUTPUT, 'this is not JSON: {"answer": \n');
      return true;
    case 'no-output':
      return true;
    case 'crash':
      process.stderr.write('simulated crash: exiting 1 without a result\n');
      process.exit(1);
      return true; // not reached
    case 'error':
      await writeResult({ ...failed('simulated: the agent gave up on this case'), llmCalls: 1, durationMs: 1200 });
      return true;
    case 'void':
      await writeResult({ ...empty(), void: 'simulated: the sandbox lost its network for this case' });
      return true;
    case 'sandbox-down':
      await writeResult({ ...empty(), sandboxDown: 'simulated: the sandbox is down; every later case would fail the same way' });
      return true;
    case 'escape':
      return false;
    default:
      await writeResult(failed(`unknown simulate mode "${mode}": use one of ${SIMULATIONS.join(', ')}`));
      return true;
  }
}

async function main() {
  const root = path.resolve(env.TUNE_ROOT || process.cwd());
  if (!env.TUNE_CASE) {
    process.stderr.write('agent.mjs: TUNE_CASE is not set (it names the case JSON file; git-tune sets it)\n');
    process.exitCode = 2;
    return;
  }
  let item;
  try {
    item = JSON.parse(await fs.readFile(env.TUNE_CASE, 'utf8'));
  } catch (err) {
    await writeResult(failed(`cannot read the case ${env.TUNE_CASE}: ${err.message}`));
    process.exitCode = 1;
    return;
  }
  const input = normalizeInput(item?.input);
  const caseId = env.TUNE_CASE_ID || item.id;

  const delay = Number(input.delayMs ?? env.EXAMPLE_DELAY_MS ?? 0);
  if (delay > 0) await sleep(delay);

  const mode = simulationFor(input, caseId);
  let escaped = null;
  if (mode) {
    if (await simulate(mode)) return;
    escaped = env.TUNE_MEMORY ? await tryEscape(env.TUNE_MEMORY, root, input.escape) : ['no memory directory to escape from'];
  }

  const agentsDir = env.EXAMPLE_AGENTS_DIR || DEFAULT_AGENTS_DIR;
  if (path.isAbsolute(agentsDir) || agentsDir.split(/[\\/]/).includes('..')) {
    await writeResult(failed(`EXAMPLE_AGENTS_DIR must be a path inside the repository, not ${agentsDir}`));
    return;
  }
  const names = proseFilesFor(item.class, agentsDir);
  const prose = {};
  const files = {};
  for (const [k, rel] of Object.entries(names)) {
    prose[k] = rel ? await readText(path.join(root, rel)) : null;
    if (prose[k] !== null) files[k] = rel;
  }

  const memoryDir = env.TUNE_MEMORY || '';
  const memory = {
    enabled: memoryDir !== '',
    cache: new Map(),
    read(rel) {
      return this.cache.get(rel) ?? null;
    },
  };
  // Pre-read the fact files the case could need, so answerCase stays synchronous and pure.
  if (memory.enabled) {
    const factsDir = path.join(memoryDir, 'facts');
    const isDir = await fs.lstat(factsDir).then((st) => st.isDirectory(), () => false);
    const factNames = isDir ? await fs.readdir(factsDir) : [];
    for (const name of factNames.sort()) {
      const text = await readText(path.join(factsDir, name));
      if (text !== null) memory.cache.set(`facts/${name}`, text);
    }
  }

  const { result, writes, transcript } = answerCase({ item, prose, memory, target: env.TUNE_TARGET || '', files });
  for (const w of writes) {
    const full = path.join(memoryDir, w.path);
    await fs.mkdir(path.dirname(full), { recursive: true });
    await fs.writeFile(full, w.content);
  }
  if (escaped) result.example.escape = escaped;
  if (env.TUNE_WORKSPACE) {
    await fs.mkdir(env.TUNE_WORKSPACE, { recursive: true });
    await fs.writeFile(path.join(env.TUNE_WORKSPACE, 'transcript.md'), `${transcript.map((l) => `- ${l}`).join('\n')}\n`);
  }
  if (env.TUNE_OUTPUT) process.stdout.write(`${transcript.join('\n')}\n`);
  await writeResult(result);
}

main().catch(async (err) => {
  process.stderr.write(`agent.mjs: ${err.stack ?? err}\n`);
  await writeResult(failed(`the example agent failed: ${err.message}`)).catch(() => {});
  process.exitCode = 1;
});
