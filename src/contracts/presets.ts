import * as z from 'zod';

/**
 * The presets' names per role and their `options:` (docs/contracts.md,
 * Presets). A preset is valid only in its own role; config parsing and
 * `git tune config set` refuse an unknown or misplaced one and list the
 * valid ones. Which program runs a preset is src/run/presets/index.ts's.
 */
export type Role = 'runner' | 'judge' | 'editor';

export const PRESET_NAMES = {
  runner: ['openai-chat', 'anthropic', 'claude-code', 'codex'],
  judge: ['openai-chat', 'anthropic'],
  editor: ['openai-chat', 'anthropic', 'claude-code', 'codex'],
} as const satisfies Record<Role, readonly string[]>;

/** The presets that talk to a model over HTTP (the rest run an agent CLI). */
export const API_PRESETS = ['openai-chat', 'anthropic'] as const;
export type ApiPreset = (typeof API_PRESETS)[number];

/** Why a preset name is not valid in a role (unknown, or another role's), listing the valid ones; null when it is. */
export function presetProblem(role: Role, preset: string): string | null {
  if ((PRESET_NAMES[role] as readonly string[]).includes(preset)) return null;
  const valid = `${role} presets: ${PRESET_NAMES[role].join(', ')}`;
  const elsewhere = (Object.keys(PRESET_NAMES) as Role[]).filter((r) => (PRESET_NAMES[r] as readonly string[]).includes(preset));
  return elsewhere.length > 0
    ? `"${preset}" is a ${elsewhere.join(' and ')} preset, not a ${role} preset (${valid})`
    : `preset "${preset}" does not exist (${valid})`;
}

/**
 * The options' schemas are built on first use: most config.yaml files name no
 * preset, and building zod schemas is a cost of every start that loads them
 * (these were ~4 ms of a cold `git tune next`).
 */
function onFirstUse<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/** Prices of one model, US dollars per million tokens. */
const modelPriceSchema = onFirstUse(() => z.strictObject({
  inputPerMTok: z.number().min(0).default(0),
  outputPerMTok: z.number().min(0).default(0),
  /** Input tokens served from the provider's prompt cache; default: the input price. */
  cachedPerMTok: z.number().min(0).optional(),
}));
export type ModelPrice = z.infer<ReturnType<typeof modelPriceSchema>>;

/**
 * `options:` of the API presets (openai-chat, anthropic), in every role.
 * The key never appears here: it is read from the environment variable
 * `apiKeyEnv` names, and never written to a log, a result or a commit.
 */
export const apiOptionsSchema = onFirstUse(() => z.strictObject({
  model: z.string().min(1, 'must name the model, e.g. gpt-4o-mini'),
  /** The environment variable holding the endpoint's base URL (default OPENAI_BASE_URL / ANTHROPIC_BASE_URL). */
  baseUrlEnv: z.string().optional(),
  /** The environment variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY). */
  apiKeyEnv: z.string().optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  /** Calls retried on 429/5xx/timeouts before the case is VOID (the judge's own retries come on top). */
  maxRetries: z.number().int().min(0).max(10).default(4),
  /** Seconds one HTTP call may take before it is abandoned (and retried). */
  requestTimeoutSec: z.number().positive().default(120),
  /** Prices of the configured model, overriding the built-in table. */
  pricing: modelPriceSchema().optional(),
  /** Prices per model name, overriding the built-in table (for models the table does not know). */
  prices: z.record(z.string(), modelPriceSchema()).default({}),
  /** Runner: the prose files the system prompt is made of, in order (default: every file the `prose` globs match). */
  system: z.union([z.string(), z.array(z.string())]).optional(),
  /** Runner: model calls per case before it must answer (tool calls happen between them). */
  maxTurns: z.number().int().positive().default(8),
}));
export type ApiOptions = z.infer<ReturnType<typeof apiOptionsSchema>>;

/** `options:` of the agent-CLI presets (claude-code, codex). */
export const cliOptionsSchema = onFirstUse(() => z.strictObject({
  /** The CLI on PATH (default: claude / codex). */
  bin: z.string().optional(),
  /** Extra arguments for the CLI. */
  args: z.array(z.string()).default([]),
  /** Prices per model name, for a CLI whose output carries tokens but no cost. */
  prices: z.record(z.string(), modelPriceSchema()).default({}),
  /**
   * Files or folders of your home the CLI may see, copied into each run's
   * own home (e.g. `.claude/settings.json`, `.codex/config.toml`): a run is
   * hermetic otherwise (docs/presets.md, Hermetic runs).
   */
  fromHome: z.array(z.string().min(1)).default([]),
  /** Claude Code's own retries of a failed API call (CLAUDE_CODE_MAX_RETRIES; its default is 10). */
  maxRetries: z.number().int().min(0).max(10).default(4),
}));
export type CliOptions = z.infer<ReturnType<typeof cliOptionsSchema>>;

export const isApiPreset = (preset: string): preset is ApiPreset => (API_PRESETS as readonly string[]).includes(preset);

/** The options schema of a preset. */
export const presetOptionsSchema = (preset: string) => (isApiPreset(preset) ? apiOptionsSchema() : cliOptionsSchema());
