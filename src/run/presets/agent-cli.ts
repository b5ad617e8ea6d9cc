import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliOptions, ModelPrice } from '../../contracts/presets.js';

/**
 * What the agent-CLI presets (claude-code, codex; runner and editor) share:
 * running the CLI, and reading what it printed. Each CLI prints JSON events
 * as it works; these functions turn them into the runner result's fields
 * (docs/presets.md says what each CLI exposes and what is counted).
 */
export type AgentCli = 'claude-code' | 'codex';

export interface CliUsage {
  model: string;
  /** Every input token, the cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those served from the provider's prompt cache. */
  cachedTokens: number;
  costUsd: number;
}

/** What one CLI run printed, in the runner result's terms. */
export interface CliRun {
  answer: string;
  usage: CliUsage[];
  llmCalls: number;
  toolCalls: number;
  memoryReads: number;
  /** The agent said it failed (claude's is_error, codex's turn.failed / error). */
  error?: string;
  /** The HTTP status of the model API's refusal behind `error`, when the CLI says (claude's api_error_status; codex's message). */
  apiStatus?: number;
}

export const defaultBin = (cli: AgentCli) => (cli === 'claude-code' ? 'claude' : 'codex');

/** A CLI's arguments, the prompt on its stdin when it is too long for one argument, and the environment it runs in. */
export interface CliCall {
  args: string[];
  stdin?: string;
  /** Variables set over (or, when undefined, removed from) the preset's own environment. */
  env?: Record<string, string | undefined>;
}

/**
 * Linux refuses one argument over 128 KiB (E2BIG, which would read as "the
 * CLI could not start"): a longer prompt goes on stdin, which both CLIs read
 * (claude -p without a prompt argument; codex exec with `-`).
 */
const PROMPT_ARG_MAX = 100_000;
export const onStdin = (prompt: string) => Buffer.byteLength(prompt) > PROMPT_ARG_MAX;

/** The CLI run to its end; `spawnError` when it could not start at all (not installed, not executable). */
export function runCli(bin: string, call: CliCall, cwd: string): { stdout: string; stderr: string; status: number | null; signal?: string | null; spawnError?: string } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(call.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const child = spawnSync(bin, call.args, {
    cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024,
    ...(call.stdin !== undefined ? { input: call.stdin, stdio: ['pipe', 'pipe', 'pipe'] } : { stdio: ['ignore', 'pipe', 'pipe'] }),
  });
  if (child.error) return { stdout: '', stderr: '', status: null, spawnError: child.error.message };
  return { stdout: child.stdout, stderr: child.stderr, status: child.status, signal: child.signal };
}

/** Each CLI's login, the one thing of the user's home a case's home gets unasked (a logged-in CLI stays logged in). */
const LOGIN: Record<AgentCli, string> = { 'claude-code': '.claude/.credentials.json', codex: '.codex/auth.json' };

/** Where a path of the user's home (`.claude/…`, `.codex/…`, anything else) really is: the CLIs' own config-dir variables win. */
function userPath(rel: string): string {
  const [top, ...rest] = rel.split('/');
  if (top === '.claude' && process.env.CLAUDE_CONFIG_DIR) return path.join(process.env.CLAUDE_CONFIG_DIR, ...rest);
  if (top === '.codex' && process.env.CODEX_HOME) return path.join(process.env.CODEX_HOME, ...rest);
  return path.join(os.homedir(), rel);
}

/** A throwaway home for one CLI run, and the environment that points the CLI at it. */
export interface CaseHome {
  dir: string;
  env: Record<string, string | undefined>;
  /** Removes the home (call when the CLI is done). */
  remove(): void;
}

/**
 * A run hermetic from the user's setup: the CLI gets a home of its own,
 * empty but for its login and the `fromHome` paths the user asked for (a
 * file or folder of their home, copied to the same place), so neither the
 * user's CLAUDE.md/AGENTS.md, settings, hooks, MCP servers, plugins, skills,
 * sessions and history nor Claude Code's auto-memory reach a case, and
 * nothing one case writes outside TUNE_MEMORY reaches the next (the home
 * is removed after the run). The XDG folders and the CLIs' own config-dir
 * variables (CLAUDE_CONFIG_DIR, CODEX_HOME) point into it; Claude Code's
 * auto-memory, updater and non-essential traffic are off, its API retries
 * bounded. Everything else of the environment (keys, base URLs, proxies)
 * passes through.
 */
export function caseHome(cli: AgentCli, opts: Pick<CliOptions, 'fromHome' | 'maxRetries'>): CaseHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-agent-home-'));
  for (const rel of [LOGIN[cli], ...(opts.fromHome ?? [])]) {
    const clean = path.normalize(rel.replace(/^~\//, ''));
    if (path.isAbsolute(clean) || clean.startsWith('..')) throw new Error(`options.fromHome: "${rel}" is not a path inside your home (write it as .claude/settings.json)`);
    const from = userPath(clean);
    if (!existsSync(from)) {
      if (rel === LOGIN[cli]) continue;
      throw new Error(`options.fromHome: ${from} does not exist`);
    }
    mkdirSync(path.dirname(path.join(dir, clean)), { recursive: true });
    cpSync(from, path.join(dir, clean), { recursive: true });
  }
  const claudeDir = path.join(dir, '.claude');
  const codexDir = path.join(dir, '.codex');
  mkdirSync(claudeDir, { recursive: true });
  mkdirSync(codexDir, { recursive: true });
  const env: Record<string, string | undefined> = {
    HOME: dir, USERPROFILE: dir,
    XDG_CONFIG_HOME: path.join(dir, '.config'), XDG_DATA_HOME: path.join(dir, '.local/share'),
    XDG_STATE_HOME: path.join(dir, '.local/state'), XDG_CACHE_HOME: path.join(dir, '.cache'),
    CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexDir, CODEX_SQLITE_HOME: codexDir,
  };
  if (cli === 'claude-code') {
    Object.assign(env, {
      CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: String(opts.maxRetries ?? 4),
    });
  }
  return { dir, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Whether a failure the CLI reported is the whole sandbox's (the key is
 * refused: every later case fails the same way), passing (a rate limit or
 * an overloaded server the CLI's own retries did not outlast: the case is
 * VOID, run again later), or the case's own error.
 */
export function failureKind(run: Pick<CliRun, 'error' | 'apiStatus'>): 'down' | 'void' | 'error' | null {
  if (run.error === undefined) return null;
  const status = run.apiStatus;
  if (status === 401 || status === 403) return 'down';
  if (status === 408 || status === 429 || (status !== undefined && status >= 500)) return 'void';
  return 'error';
}

/** The JSON objects of a JSONL stream (a single JSON document is one line too); null when a non-empty line is not JSON. */
export function jsonLines(text: string): Array<Record<string, unknown>> | null {
  const out: Array<Record<string, unknown>> = [];
  const trimmed = text.trim();
  if (!trimmed) return null;
  try {
    // `--output-format json` pretty-prints nothing today, but one document over many lines is still one.
    const whole = JSON.parse(trimmed) as unknown;
    if (whole && typeof whole === 'object' && !Array.isArray(whole)) return [whole as Record<string, unknown>];
    if (Array.isArray(whole)) return whole.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object');
  } catch {
    // JSONL: one event a line.
  }
  for (const line of trimmed.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  return out;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** A path an agent's tool call names, inside `dir`. */
function inside(dir: string, p: unknown): boolean {
  if (typeof p !== 'string' || !p) return false;
  const rel = path.relative(dir, path.resolve(dir, p));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Whether a shell command names the memory folder (itself or a path in it, not a sibling that starts alike). */
function namesFolder(command: string, dir: string): boolean {
  let at = command.indexOf(dir);
  while (at !== -1) {
    const next = command[at + dir.length];
    if (next === undefined || next === '/' || /[\s'"`;|&)]/.test(next)) return true;
    at = command.indexOf(dir, at + 1);
  }
  return false;
}

/** Claude Code's file tools and the input keys that name what they read. */
const CLAUDE_READ_TOOLS: Record<string, string[]> = { Read: ['file_path'], Glob: ['path', 'pattern'], Grep: ['path'], LS: ['path'] };

/**
 * Claude Code's output: `--output-format stream-json --verbose` prints one
 * event a line (system init, each assistant message with its content blocks,
 * the tool results, and a last `result` event); `--output-format json`
 * prints the `result` event alone. The result event carries `result` (the
 * answer), `is_error`, `num_turns`, `total_cost_usd`, `usage` (input_tokens,
 * output_tokens, cache_read_input_tokens, cache_creation_input_tokens) and
 * `modelUsage` per model (inputTokens, outputTokens, cacheReadInputTokens,
 * cacheCreationInputTokens, costUSD). Tool calls are the assistant messages'
 * `tool_use` blocks, so only the stream shows them; a memory read is a
 * Read/Glob/Grep/LS call (or a Bash command) that names the memory folder.
 */
export function readClaude(events: ReadonlyArray<Record<string, unknown>>, memoryDir: string | null): CliRun | { unreadable: string } {
  const result = [...events].reverse().find((e) => e.type === 'result' || ('result' in e && 'usage' in e));
  if (!result) return { unreadable: 'no result event (was the output format changed in options.args?)' };
  let toolCalls = 0;
  let memoryReads = 0;
  const messages = new Set<string>();
  let apiStatus = typeof result.api_error_status === 'number' ? result.api_error_status : undefined;
  for (const event of events) {
    if (event.type !== 'assistant') continue;
    const message = obj(event.message);
    // Claude Code's own "<synthetic>" message (an API error told as a reply) is no model call.
    if (message.model === '<synthetic>') {
      if (apiStatus === undefined && typeof event.api_error_status === 'number') apiStatus = event.api_error_status;
      continue;
    }
    if (typeof message.id === 'string') messages.add(message.id);
    for (const block of Array.isArray(message.content) ? message.content : []) {
      const b = obj(block);
      if (b.type !== 'tool_use') continue;
      toolCalls++;
      const input = obj(b.input);
      const name = String(b.name);
      if (!memoryDir) continue;
      const keys = CLAUDE_READ_TOOLS[name];
      if (keys && keys.some((k) => inside(memoryDir, input[k]))) memoryReads++;
      else if (name === 'Bash' && typeof input.command === 'string' && namesFolder(input.command, memoryDir)) memoryReads++;
    }
  }
  const u = obj(result.usage);
  const perModel = Object.entries(obj(result.modelUsage)).map(([model, raw]) => {
    const m = obj(raw);
    const cached = num(m.cacheReadInputTokens);
    return { model, inputTokens: num(m.inputTokens) + num(m.cacheCreationInputTokens) + cached, outputTokens: num(m.outputTokens), cachedTokens: cached, costUsd: num(m.costUSD) };
  });
  const usage = perModel.length > 0 ? perModel : [{
    model: 'claude',
    inputTokens: num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens),
    outputTokens: num(u.output_tokens), cachedTokens: num(u.cache_read_input_tokens), costUsd: num(result.total_cost_usd),
  }];
  // Per-model costs may leave out what total_cost_usd counts (sub-agents): the total wins.
  const total = num(result.total_cost_usd);
  const summed = usage.reduce((s, x) => s + x.costUsd, 0);
  if (total > 0 && Math.abs(total - summed) > 1e-9 && usage[0]) usage[0].costUsd += total - summed;
  const answer = typeof result.result === 'string' ? result.result : '';
  return {
    answer,
    usage,
    // Each assistant message is one model call; with the json format only num_turns is there (and none answered an API error).
    llmCalls: messages.size > 0 ? messages.size : apiStatus !== undefined ? 0 : Math.max(1, num(result.num_turns)),
    toolCalls,
    memoryReads,
    ...(result.is_error === true ? { error: answer || `the agent reported an error (${String(result.subtype ?? 'unknown')})` } : {}),
    ...(result.is_error === true && apiStatus !== undefined ? { apiStatus } : {}),
  };
}

/** The model named by `-m`/`--model` in a CLI's arguments. */
export function modelArg(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if ((a === '-m' || a === '--model') && args[i + 1]) return args[i + 1]!;
    if (a.startsWith('--model=')) return a.slice('--model='.length);
  }
  return null;
}

/** US dollars for tokens at a price (per million; cached input at its own price, else the input price). */
export function costAt(price: ModelPrice | undefined, inputTokens: number, cachedTokens: number, outputTokens: number): number {
  if (!price) return 0;
  const cached = price.cachedPerMTok ?? price.inputPerMTok ?? 0;
  return ((inputTokens - cachedTokens) * (price.inputPerMTok ?? 0) + cachedTokens * cached + outputTokens * (price.outputPerMTok ?? 0)) / 1_000_000;
}

/** Codex's items that are the agent acting (each one tool call). */
const CODEX_TOOL_ITEMS = new Set(['command_execution', 'mcp_tool_call', 'web_search', 'file_change']);

/**
 * Codex's output: `codex exec --json` prints one event a line:
 * thread.started, turn.started, item.started / item.updated / item.completed
 * (an item is an agent_message, reasoning, command_execution, file_change,
 * mcp_tool_call, web_search or todo_list), turn.completed with `usage`
 * (input_tokens, cached_input_tokens, output_tokens; the cached ones are
 * part of the input), turn.failed / error. It prints no cost and no model
 * name: the model is the `-m` in options.args (else "codex"), the cost comes
 * from options.prices for it (else 0). Codex reports one usage per turn, not
 * per model call, so llmCalls counts turns. A memory read is a shell command
 * that names the memory folder (codex reads files through its shell).
 */
export function readCodex(events: ReadonlyArray<Record<string, unknown>>, memoryDir: string | null, opts: Pick<CliOptions, 'args' | 'prices'>): CliRun | { unreadable: string } {
  if (!events.some((e) => typeof e.type === 'string' && /^(thread|turn|item)\.|^error$/.test(e.type))) {
    return { unreadable: 'no codex events (thread.started, item.completed, turn.completed)' };
  }
  const model = modelArg(opts.args ?? []) ?? 'codex';
  let answer = '';
  let toolCalls = 0;
  let memoryReads = 0;
  let turns = 0;
  let inputTokens = 0;
  let cachedTokens = 0;
  let outputTokens = 0;
  let failed: string | undefined;
  let error: string | undefined;
  let apiStatus: number | undefined;
  for (const event of events) {
    if (event.type === 'item.completed') {
      const item = obj(event.item);
      if (item.type === 'agent_message' && typeof item.text === 'string') answer = item.text;
      if (typeof item.type === 'string' && CODEX_TOOL_ITEMS.has(item.type)) {
        toolCalls++;
        if (memoryDir && item.type === 'command_execution' && typeof item.command === 'string' && namesFolder(item.command, memoryDir)) memoryReads++;
      }
    } else if (event.type === 'turn.completed') {
      turns++;
      const u = obj(event.usage);
      inputTokens += num(u.input_tokens);
      cachedTokens += num(u.cached_input_tokens);
      outputTokens += num(u.output_tokens);
    } else if (event.type === 'turn.failed') {
      failed = String(obj(event.error).message ?? 'the turn failed');
      const status = /\bstatus (\d{3})\b|\b(\d{3}) (?:Unauthorized|Forbidden|Too Many Requests)\b/.exec(failed);
      if (status) apiStatus = Number(status[1] ?? status[2]);
    } else if (event.type === 'error') {
      error = String(event.message ?? 'codex reported an error');
    }
  }
  const price = (opts.prices ?? {})[model];
  return {
    answer,
    usage: [{ model, inputTokens, outputTokens, cachedTokens, costUsd: costAt(price, inputTokens, cachedTokens, outputTokens) }],
    llmCalls: Math.max(turns, answer ? 1 : 0),
    toolCalls,
    memoryReads,
    // A top-level error event may be a retried stream (codex goes on): it fails the case only when no turn completed.
    ...(failed !== undefined ? { error: failed } : error !== undefined && turns === 0 ? { error } : {}),
    ...(failed !== undefined && apiStatus !== undefined ? { apiStatus } : {}),
  };
}

/** What the agent is told about its memory (claude: appended to its system prompt; codex: before the input). */
export function memoryNote(memoryDir: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(memoryDir).filter((f) => !f.startsWith('.')).sort();
  } catch {
    // No folder yet: nothing saved.
  }
  const listed = names.length === 0 ? 'It is empty so far.' : `Its files now: ${names.slice(0, 50).join(', ')}${names.length > 50 ? `, and ${names.length - 50} more` : ''}.`;
  return [
    `Your memory is the folder ${memoryDir}.`,
    listed,
    'The files there are facts you saved while answering earlier requests: look there first when one may help.',
    'To remember a fact for later requests, save it there as a short markdown file (one fact a file, a name that says what it is).',
    'Do not save what is already there, and change no other file.',
  ].join(' ');
}

/** The runner's CLI arguments for one case (the memory contract: runner-cli.ts). */
export function runnerArgs(cli: AgentCli, input: string, memoryDir: string | null, args: readonly string[]): CliCall {
  if (cli === 'claude-code') {
    const memory = memoryDir
      ? ['--add-dir', memoryDir, '--append-system-prompt', memoryNote(memoryDir),
        // File tools everywhere for reading; writing only inside the memory folder (`//` starts an absolute path in a permission rule).
        '--allowedTools', ['Read', 'Glob', 'Grep', 'LS', `Edit(/${memoryDir}/**)`, `Write(/${memoryDir}/**)`].join(',')]
      : [];
    // stream-json (which needs --verbose with -p) shows each tool call; the last line is the same result json prints.
    // The input comes last, after `--`: data whatever its first character (`--where`, a `- ` bullet).
    const big = onStdin(input);
    return { args: ['-p', '--output-format', 'stream-json', '--verbose', ...memory, ...args, ...(big ? [] : ['--', input])], ...(big ? { stdin: input } : {}) };
  }
  const prompt = memoryDir ? `${memoryNote(memoryDir)}\n\n${input}` : input;
  const big = onStdin(prompt);
  return {
    args: ['exec', '--json', '--skip-git-repo-check', ...(memoryDir ? ['--sandbox', 'workspace-write', '--add-dir', memoryDir] : []), ...args, ...(big ? ['-'] : ['--', prompt])],
    ...(big ? { stdin: prompt } : {}),
  };
}

/** The last lines of a CLI's stderr, for an error message. */
export function lastLines(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join(' / ');
}
