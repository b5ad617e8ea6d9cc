// The logs ref's size (issue 20): a 24-case, 20-run tuning whose runner writes
// a transcript of about 20 KB per case, shaped like a real one (the same system
// prompt and tool definitions in every request, the conversation re-sent as it
// grows, tool calls and results, answers and usage that vary from run to run,
// the prose edited a little between runs), plus stdout, stderr and result.json.
// Each run is written through the real logs-ref writer (src/run/logs.ts), then
// the repository is packed (`git gc`, then `git gc --aggressive`) and the
// logs ref's objects are summed as stored on disk.
// `node bench/logs-size.mjs` runs this scenario alone (after a build).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, ROOT, TMP, git } from './lib/fixtures.mjs';

export const CASES = 24;
export const RUNS = 20;
/** The target: packed bytes per case-run. */
export const TARGET_BYTES = 2048;

/** A seeded generator (mulberry32): the same transcripts on every machine. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('order refund shipping invoice account password delivery warranty return label address customer days '
  + 'business policy receipt charge card billing plan upgrade cancel subscription store credit exchange damaged '
  + 'tracking number courier weekend holiday manager ticket escalate confirm verify email phone note').split(' ');
const pick = (r, list) => list[Math.floor(r() * list.length)];
// What varies from run to run (answers, tool results) is drawn from 600 made-up words as well, so it
// compresses no better than a model's prose would (about 9.2 bits a word before any repeat).
const SYLLABLES = 'ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu'.split(' ');
const MADE_UP = Array.from({ length: 600 }, (_, i) => { const r = rng(50_000 + i); return Array.from({ length: 2 + Math.floor(r() * 3) }, () => pick(r, SYLLABLES)).join(''); });
const VOCABULARY = [...WORDS, ...MADE_UP];
const sentence = (r, n) => Array.from({ length: n }, () => pick(r, WORDS)).join(' ');
const prose = (r, n) => Array.from({ length: n }, () => pick(r, VOCABULARY)).join(' ');

const RULES = Array.from({ length: 40 }, (_, i) => `- Rule ${i + 1}: ${sentence(rng(1000 + i), 12)}.`);
const TOOLS = [
  { name: 'read_memory', description: 'Read a file of the memory folder by name; returns its text.', parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  { name: 'save_memory', description: 'Save a fact to the memory folder, under a short file name.', parameters: { type: 'object', properties: { name: { type: 'string' }, text: { type: 'string' } }, required: ['name', 'text'] } },
  { name: 'search_orders', description: 'Search the order system by customer email or order number.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
];

/** The system prompt of run `run`: the prose, one rule of it edited per run. */
function systemPrompt(run) {
  const rules = RULES.map((rule, i) => (i === run % RULES.length ? `${rule} (edited in run ${run})` : rule));
  return `# Help desk\n\nYou answer customers of the store. Be brief and exact.\n\n${rules.join('\n')}\n`;
}

/** One case's transcript in one run: JSONL of requests (whole conversation each time), replies, tool calls. */
export function transcriptOf(caseNo, run) {
  const r = rng(caseNo * 7919 + run * 104729);
  const fixed = rng(caseNo * 31);
  const system = systemPrompt(run);
  const question = `Case ${caseNo}: ${sentence(fixed, 30)}?`;
  const messages = [{ role: 'system', content: system }, { role: 'user', content: question }];
  const lines = [];
  const calls = 3 + Math.floor(r() * 2);
  for (let call = 1; call <= calls; call++) {
    lines.push({ type: 'request', call, model: 'gpt-4o-mini', tools: TOOLS, messages });
    const inputTokens = Math.round(JSON.stringify(messages).length / 4);
    const usage = { model: 'gpt-4o-mini-2025-01-01', inputTokens, outputTokens: 40 + Math.floor(r() * 200), cachedTokens: call > 1 ? inputTokens - 200 : 0 };
    if (call < calls) {
      const tool = call === 1 ? 'read_memory' : pick(r, ['search_orders', 'read_memory']);
      const args = tool === 'read_memory' ? { name: `${pick(fixed, WORDS)}.md` } : { query: `order ${1000 + caseNo}` };
      const result = tool === 'read_memory' ? sentence(fixed, 40) : `order ${1000 + caseNo}: ${prose(r, 25)}`;
      lines.push({ type: 'reply', call, usage, text: prose(r, 12), toolCalls: [{ id: `call_${run}_${call}`, name: tool, arguments: args }] });
      lines.push({ type: 'tool', call, name: tool, arguments: args, result });
      messages.push({ role: 'assistant', content: lines[lines.length - 2].text, tool_calls: [{ id: `call_${run}_${call}`, name: tool, arguments: JSON.stringify(args) }] });
      messages.push({ role: 'tool', tool_call_id: `call_${run}_${call}`, content: result });
    } else {
      lines.push({ type: 'reply', call, usage, text: `Answer: ${prose(r, 60)}.` });
    }
  }
  lines.push({ type: 'end', llmCalls: calls, toolCalls: calls - 1 });
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

const diskBytes = (dir) => {
  const objects = git(dir, 'rev-list', '--objects', 'refs/tune-logs/desk').split('\n').filter(Boolean).map((l) => l.split(' ')[0]).join('\n');
  const sizes = execFileSync('git', ['cat-file', '--batch-check=%(objectsize:disk)'], { cwd: dir, input: `${objects}\n`, encoding: 'utf8', maxBuffer: 1 << 28 });
  return sizes.split('\n').filter(Boolean).reduce((a, s) => a + Number(s), 0);
};

export async function logsSizeScenario({ log = () => {} } = {}) {
  const { openRepo } = await import(path.join(ROOT, 'dist/git/open.js'));
  const { writeRunLogs } = await import(path.join(ROOT, 'dist/run/logs.js'));
  const root = path.join(TMP, 'logs-size');
  rmSync(root, { recursive: true, force: true });
  const dir = path.join(root, 'repo');
  const files = path.join(root, 'files');
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'project');
  const env = { ...process.env, ...ENV };
  const repo = await openRepo(dir, env);
  let raw = 0;
  let transcriptBytes = 0;
  for (let run = 1; run <= RUNS; run++) {
    const name = `batch${String(Math.ceil(run / 4)).padStart(2, '0')}-nomem-run${((run - 1) % 4) + 1}`;
    const logs = [];
    for (let c = 1; c <= CASES; c++) {
      const id = `case-${String(c).padStart(2, '0')}`;
      const base = path.join(files, `${run}`, id);
      mkdirSync(base, { recursive: true });
      const transcript = transcriptOf(c, run);
      const stdout = `answering ${id}\n`;
      const result = JSON.stringify({ answer: transcript.slice(-200, -60), usage: [{ model: 'gpt-4o-mini', inputTokens: 4000 + run * c, outputTokens: 300 }], llmCalls: 4 });
      writeFileSync(path.join(base, 'stdout'), stdout);
      writeFileSync(path.join(base, 'stderr'), '');
      writeFileSync(path.join(base, 'transcript.jsonl'), transcript);
      raw += transcript.length + stdout.length + result.length;
      transcriptBytes += transcript.length;
      logs.push({ id, stdoutFile: path.join(base, 'stdout'), stderrFile: path.join(base, 'stderr'), rawResult: result, transcriptFile: path.join(base, 'transcript.jsonl') });
    }
    await writeRunLogs(repo, 'desk', name, logs, { env, now: new Date(Date.UTC(2026, 0, 1, 0, run)) });
  }
  const caseRuns = CASES * RUNS;
  const loose = diskBytes(dir);
  git(dir, 'gc', '-q', '--prune=now');
  const gc = diskBytes(dir);
  git(dir, 'gc', '-q', '--aggressive', '--prune=now');
  const aggressive = diskBytes(dir);
  const out = {
    cases: CASES, runs: RUNS, caseRuns,
    transcriptKbPerCase: Number((transcriptBytes / caseRuns / 1024).toFixed(1)),
    rawBytesPerCaseRun: Math.round(raw / caseRuns),
    looseBytesPerCaseRun: Math.round(loose / caseRuns),
    gcBytesPerCaseRun: Math.round(gc / caseRuns),
    aggressiveBytesPerCaseRun: Math.round(aggressive / caseRuns),
    targetBytesPerCaseRun: TARGET_BYTES,
  };
  const targets = [{
    what: `logs ref packed (\`git gc\`), per case-run: ${CASES} cases × ${RUNS} runs, transcripts of ~${Math.round(out.transcriptKbPerCase)} KB`,
    ratio: out.gcBytesPerCaseRun, spread: null, cpu: null, limit: TARGET_BYTES, met: out.gcBytesPerCaseRun < TARGET_BYTES, unit: 'B',
  }];
  const section = `## The logs ref's size

A tuning of ${CASES} cases and ${RUNS} runs whose runner writes a JSONL transcript of ${out.transcriptKbPerCase} KB per case (bench/logs-size.mjs): 3–4 model calls, each request re-sending the system prompt (40 rules, one edited per run), the three tool definitions and the conversation so far; tool calls and results; answers, tool results and usage that differ in every run, drawn from 600 made-up words so they compress no better than a model's prose. Beside it stdout, an empty stderr and result.json. Each run is one commit of the real logs-ref writer (src/run/logs.ts); the logs ref's objects are then summed as stored on disk (\`git cat-file --batch-check=%(objectsize:disk)\`).

| per case-run | bytes |
| --- | ---: |
| written (transcript, stdout, result.json) | ${out.rawBytesPerCaseRun} |
| loose objects, as git-tune writes them | ${out.looseBytesPerCaseRun} |
| after \`git gc\` | ${out.gcBytesPerCaseRun} |
| after \`git gc --aggressive\` | ${out.aggressiveBytesPerCaseRun} |

The pack keeps a transcript as a delta against a similar one (the same system prompt and tools, the same conversation's start), so what a case-run costs is mostly what varies in it: the answers and tool results. Until \`git gc\` (git runs it on its own as loose objects pile up) each blob is stored whole, zlib-compressed.`;
  log(`  logs ref: ${caseRuns} case-runs, transcripts ${out.transcriptKbPerCase} KB each; per case-run: raw ${out.rawBytesPerCaseRun} B, loose ${out.looseBytesPerCaseRun} B, git gc ${out.gcBytesPerCaseRun} B, git gc --aggressive ${out.aggressiveBytesPerCaseRun} B (target < ${TARGET_BYTES} B)`);
  rmSync(root, { recursive: true, force: true });
  return { section, targets, raw: out };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { raw } = await logsSizeScenario({ log: (t) => process.stderr.write(`${t}\n`) });
  process.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
}
