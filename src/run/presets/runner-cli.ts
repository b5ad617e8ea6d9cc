import { spawnSync } from 'node:child_process';
import { env, inputText, options, readCase, writeResult } from './common.js';

/**
 * Runner preset `claude-code`: runs an agent CLI whose JSON output carries
 * usage (`claude -p <input> --output-format json`) in the repository root,
 * where it finds the prose (CLAUDE.md, skills, rules) itself. Config:
 *
 *   runner:
 *     preset: claude-code
 *     options:
 *       bin: claude                 # the CLI on PATH
 *       args: [--max-turns, "8"]    # extra arguments
 *       timeoutSec: 600
 */
interface Options {
  bin?: string;
  args?: string[];
}

interface ClaudeOutput {
  result?: string;
  is_error?: boolean;
  num_turns?: number;
  total_cost_usd?: number;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  modelUsage?: Record<string, { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; costUSD?: number }>;
}

function main(): void {
  const opts = options<Options>();
  const item = readCase();
  const started = Date.now();
  const child = spawnSync(opts.bin ?? 'claude', ['-p', inputText(item.input), '--output-format', 'json', ...(opts.args ?? [])], {
    cwd: env('TUNE_ROOT'), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  if (child.error) {
    writeResult({ answer: null, sandboxDown: `${opts.bin ?? 'claude'} could not start: ${child.error.message}` });
    return;
  }
  if (child.status === 137) process.exit(137);
  let out: ClaudeOutput;
  try {
    out = JSON.parse(child.stdout) as ClaudeOutput;
  } catch {
    writeResult({ answer: null, error: `the agent CLI printed no JSON (exit ${child.status}): ${child.stderr.trim().split('\n').slice(-1)[0] ?? ''}` });
    return;
  }
  const usage = out.modelUsage && Object.keys(out.modelUsage).length > 0
    ? Object.entries(out.modelUsage).map(([model, u]) => ({
        model, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0, cachedTokens: u.cacheReadInputTokens ?? 0, costUsd: u.costUSD ?? 0,
      }))
    : [{
        model: 'claude', inputTokens: (out.usage?.input_tokens ?? 0) + (out.usage?.cache_creation_input_tokens ?? 0),
        outputTokens: out.usage?.output_tokens ?? 0, cachedTokens: out.usage?.cache_read_input_tokens ?? 0, costUsd: out.total_cost_usd ?? 0,
      }];
  writeResult({
    answer: out.result ?? '',
    usage,
    llmCalls: out.num_turns ?? 1,
    durationMs: Date.now() - started,
    ...(out.is_error ? { error: out.result ?? 'the agent reported an error' } : {}),
  });
}

main();
