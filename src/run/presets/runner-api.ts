import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { apiOptionsSchema, isApiPreset, type ApiOptions } from '../../contracts/presets.js';
import { redactText, secretsOf } from '../../core/redact.js';
import { inputText, writeResult } from './common.js';
import { makeModel } from './llm/client.js';
import { findProse, parseProseScope } from './prose-files.js';
import { runAgent, type ProseFile, type TranscriptEntry } from './llm/runner.js';

/**
 * Runner presets `openai-chat` and `anthropic` (TUNE_PRESET says which):
 * the agent of ./llm/runner.ts over the HTTP client of ./llm/client.ts,
 * speaking the runner contract (docs/contracts.md) like any user's runner.
 *
 *   runner:
 *     preset: openai-chat              # or anthropic
 *     options:
 *       model: gpt-4o-mini             # required
 *       system: [agents/prompt.md]     # default: every file the prose and memoryPolicy globs match
 *       baseUrlEnv: OPENAI_BASE_URL    # default; ANTHROPIC_BASE_URL for anthropic
 *       apiKeyEnv: OPENAI_API_KEY      # default; ANTHROPIC_API_KEY for anthropic
 *       maxTurns: 8                    # model calls per case (tool calls between them)
 *       maxRetries: 4
 *       requestTimeoutSec: 120
 *       pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 }
 *
 * Nothing here throws for anything the options, the prose or the endpoint
 * do: every failure is a result (`error`, `void` or `sandboxDown`).
 */
type Env = Readonly<Record<string, string | undefined>>;

const describeIssues = (issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>, got: unknown) =>
  issues.map((i) => {
    const at = i.path.map(String).join('.');
    const value = i.path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), got);
    if (at && value === undefined) return `options.${at} is required`;
    return `options${at ? `.${at}` : ''}: ${i.message}${at ? ` (got ${JSON.stringify(value)})` : ''}`;
  }).join('; ');

/** The options, or why they are wrong (naming the option). */
export function parseOptions(preset: string, raw: string | undefined): { options: ApiOptions } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(raw ?? '{}');
  } catch {
    return { error: `runner preset ${preset}: TUNE_PRESET_OPTIONS is not JSON` };
  }
  const parsed = apiOptionsSchema().safeParse(json);
  if (!parsed.success) return { error: `runner preset ${preset}: ${describeIssues(parsed.error.issues, json)} (e.g. options: {model: ${preset === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini'}})` };
  return { options: parsed.data };
}

/** The prose of the system prompt: the files options.system names, else every file the tuning's globs match. */
export async function readProse(root: string, options: ApiOptions, globsJson: string | undefined): Promise<ProseFile[]> {
  let files: string[];
  if (options.system !== undefined) files = Array.isArray(options.system) ? options.system : [options.system];
  else {
    const scope = parseProseScope(globsJson);
    files = await findProse(root, [scope.prose, scope.memoryPolicy]);
  }
  return files.map((f) => {
    try {
      return { path: f, text: readFileSync(path.join(root, f), 'utf8') };
    } catch (err) {
      throw new Error(`options.system: cannot read ${f} in the repository (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  });
}

export async function runApiRunner(env: Env): Promise<Record<string, unknown>> {
  const started = Date.now();
  const preset = env.TUNE_PRESET ?? '';
  if (!isApiPreset(preset)) return { answer: null, error: `runner-api runs the openai-chat and anthropic presets; TUNE_PRESET is ${JSON.stringify(preset)}` };
  const parsed = parseOptions(preset, env.TUNE_PRESET_OPTIONS);
  if ('error' in parsed) return { answer: null, error: parsed.error };
  const { options } = parsed;
  const root = env.TUNE_ROOT ?? process.cwd();
  let prose: ProseFile[];
  try {
    prose = await readProse(root, options, env.TUNE_PROSE_GLOBS);
  } catch (err) {
    return { answer: null, error: `runner preset ${preset}: ${(err as Error).message}` };
  }
  const item = JSON.parse(readFileSync(env.TUNE_CASE!, 'utf8')) as { input: unknown };
  // The transcript holds what the model saw and said; secrets never (the key least of all).
  const secrets = secretsOf(env, { key: env[options.apiKeyEnv ?? (preset === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY')] });
  const transcript = env.TUNE_TRANSCRIPT
    ? (entry: TranscriptEntry) => appendFileSync(env.TUNE_TRANSCRIPT!, `${redactText(JSON.stringify(entry), secrets)}\n`)
    : undefined;
  const result = await runAgent({
    model: makeModel(preset, options, env),
    prose,
    question: inputText(item.input),
    memoryDir: env.TUNE_MEMORY || null,
    maxTurns: options.maxTurns,
    ...(transcript ? { transcript } : {}),
  });
  return { ...result, durationMs: Date.now() - started };
}

if (process.env.TUNE_OUTPUT) {
  // Not a top-level await: dist/bin/ is CommonJS (scripts/bundle.mjs).
  void runApiRunner(process.env).then(writeResult).catch((err: Error) => {
    // A fault of ours, not the model's: still a result, still without secrets.
    writeResult({ answer: null, error: redactText(`the runner preset failed: ${err.stack ?? String(err)}`, secretsOf(process.env)) });
  });
}
