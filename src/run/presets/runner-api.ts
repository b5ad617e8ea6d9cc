import { readFileSync } from 'node:fs';
import path from 'node:path';
import { env, inputText, options, price, readCase, writeResult } from './common.js';

/**
 * Runner preset `openai-chat`: one chat-completions call per case against an
 * OpenAI-compatible endpoint. System prompt from prose files, user message
 * from the case input, usage from the response. Config:
 *
 *   runner:
 *     preset: openai-chat
 *     options:
 *       model: gpt-4o-mini
 *       system: [agents/prompts/system.md]   # prose files, joined
 *       baseUrlEnv: OPENAI_BASE_URL           # default; falls back to https://api.openai.com/v1
 *       apiKeyEnv: OPENAI_API_KEY             # default; the key never leaves the environment
 *       temperature: 0
 *       pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 }
 */
interface Options {
  model?: string;
  system?: string | string[];
  baseUrlEnv?: string;
  apiKeyEnv?: string;
  temperature?: number;
  pricing?: { inputPerMTok?: number; outputPerMTok?: number };
}

async function main(): Promise<void> {
  const opts = options<Options>();
  const item = readCase();
  const root = env('TUNE_ROOT');
  const files = opts.system === undefined ? [] : Array.isArray(opts.system) ? opts.system : [opts.system];
  const system = files.map((f) => readFileSync(path.join(root, f), 'utf8')).join('\n\n');
  const baseUrl = (process.env[opts.baseUrlEnv ?? 'OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1').replace(/\/$/, '');
  const key = process.env[opts.apiKeyEnv ?? 'OPENAI_API_KEY'];
  const model = opts.model ?? 'gpt-4o-mini';
  const started = Date.now();
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({
        model,
        temperature: opts.temperature ?? 0,
        messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: inputText(item.input) }],
      }),
    });
  } catch (err) {
    writeResult({ answer: null, void: `endpoint unreachable: ${(err as Error).message}` });
    return;
  }
  if (response.status === 401 || response.status === 403) {
    writeResult({ answer: null, sandboxDown: `endpoint refused the key (HTTP ${response.status})` });
    return;
  }
  if (response.status === 429 || response.status >= 500) {
    writeResult({ answer: null, void: `endpoint failed (HTTP ${response.status})` });
    return;
  }
  const body = (await response.json().catch(() => null)) as {
    choices?: Array<{ message?: { content?: string } }>;
    usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
    model?: string;
    error?: { message?: string };
  } | null;
  if (!response.ok || !body) {
    writeResult({ answer: null, error: `endpoint answered HTTP ${response.status}: ${body?.error?.message ?? 'no JSON body'}` });
    return;
  }
  const inputTokens = body.usage?.prompt_tokens ?? 0;
  const outputTokens = body.usage?.completion_tokens ?? 0;
  writeResult({
    answer: body.choices?.[0]?.message?.content ?? '',
    usage: [{
      model: body.model ?? model, inputTokens, outputTokens,
      cachedTokens: body.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      costUsd: price(inputTokens, outputTokens, opts.pricing),
    }],
    llmCalls: 1, toolCalls: 0, memoryReads: 0, durationMs: Date.now() - started,
  });
}

await main();
