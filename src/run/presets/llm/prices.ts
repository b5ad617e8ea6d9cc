import type { ApiOptions, ModelPrice } from '../../../contracts/presets.js';

/**
 * What a call cost, from a price table users can override (docs/contracts.md,
 * Presets): `options.prices` per model name, then `options.pricing` for the
 * configured model, then the built-in table below. A model none of them
 * knows costs 0, and the preset says so once on stderr (not an error: a
 * local server's model is free).
 *
 * The built-in table: US dollars per million tokens, as OpenAI and Anthropic
 * published them by late 2025. APPROXIMATE: prices change, and batch, regional
 * or negotiated prices differ; set `options.pricing` when the cost matters.
 * Anthropic's cache writes (1.25x input) are counted as plain input.
 */
export const BUILT_IN_PRICES: Readonly<Record<string, Required<ModelPrice>>> = {
  // OpenAI: input, cached input, output
  'gpt-5': { inputPerMTok: 1.25, cachedPerMTok: 0.125, outputPerMTok: 10 },
  'gpt-5-mini': { inputPerMTok: 0.25, cachedPerMTok: 0.025, outputPerMTok: 2 },
  'gpt-5-nano': { inputPerMTok: 0.05, cachedPerMTok: 0.005, outputPerMTok: 0.4 },
  'gpt-4.1': { inputPerMTok: 2, cachedPerMTok: 0.5, outputPerMTok: 8 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, cachedPerMTok: 0.1, outputPerMTok: 1.6 },
  'gpt-4.1-nano': { inputPerMTok: 0.1, cachedPerMTok: 0.025, outputPerMTok: 0.4 },
  'gpt-4o': { inputPerMTok: 2.5, cachedPerMTok: 1.25, outputPerMTok: 10 },
  'gpt-4o-mini': { inputPerMTok: 0.15, cachedPerMTok: 0.075, outputPerMTok: 0.6 },
  'gpt-4-turbo': { inputPerMTok: 10, cachedPerMTok: 10, outputPerMTok: 30 },
  'gpt-3.5-turbo': { inputPerMTok: 0.5, cachedPerMTok: 0.5, outputPerMTok: 1.5 },
  o1: { inputPerMTok: 15, cachedPerMTok: 7.5, outputPerMTok: 60 },
  'o1-mini': { inputPerMTok: 1.1, cachedPerMTok: 0.55, outputPerMTok: 4.4 },
  o3: { inputPerMTok: 2, cachedPerMTok: 0.5, outputPerMTok: 8 },
  'o3-mini': { inputPerMTok: 1.1, cachedPerMTok: 0.55, outputPerMTok: 4.4 },
  'o4-mini': { inputPerMTok: 1.1, cachedPerMTok: 0.275, outputPerMTok: 4.4 },
  // Anthropic: input, cache reads, output
  'claude-opus-4-5': { inputPerMTok: 5, cachedPerMTok: 0.5, outputPerMTok: 25 },
  'claude-opus-4-1': { inputPerMTok: 15, cachedPerMTok: 1.5, outputPerMTok: 75 },
  'claude-opus-4': { inputPerMTok: 15, cachedPerMTok: 1.5, outputPerMTok: 75 },
  'claude-sonnet-4-5': { inputPerMTok: 3, cachedPerMTok: 0.3, outputPerMTok: 15 },
  'claude-sonnet-4': { inputPerMTok: 3, cachedPerMTok: 0.3, outputPerMTok: 15 },
  'claude-haiku-4-5': { inputPerMTok: 1, cachedPerMTok: 0.1, outputPerMTok: 5 },
  'claude-3-7-sonnet': { inputPerMTok: 3, cachedPerMTok: 0.3, outputPerMTok: 15 },
  'claude-3-5-sonnet': { inputPerMTok: 3, cachedPerMTok: 0.3, outputPerMTok: 15 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, cachedPerMTok: 0.08, outputPerMTok: 4 },
  'claude-3-opus': { inputPerMTok: 15, cachedPerMTok: 1.5, outputPerMTok: 75 },
  'claude-3-haiku': { inputPerMTok: 0.25, cachedPerMTok: 0.03, outputPerMTok: 1.25 },
};

/**
 * The entry of `table` for a model name as a provider answers it: the name
 * itself, else the longest key it starts with followed by `-` (a dated
 * snapshot: `gpt-4o-mini-2024-07-18` is `gpt-4o-mini`, never `gpt-4o`;
 * `claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`). A router's vendor
 * prefix (`openai/gpt-4o`) is ignored.
 */
export function lookupPrice<P>(table: Readonly<Record<string, P>>, model: string): P | undefined {
  for (const name of [model, model.slice(model.lastIndexOf('/') + 1)]) {
    if (Object.hasOwn(table, name)) return table[name];
    const key = Object.keys(table)
      .filter((k) => name.startsWith(`${k}-`))
      .sort((a, b) => b.length - a.length)[0];
    if (key !== undefined) return table[key];
  }
  return undefined;
}

/** The price of a call to `answered` (the provider's name for the model) under a preset configured for `options.model`; null when nothing knows it. */
export function priceOf(answered: string, options: Pick<ApiOptions, 'model' | 'pricing' | 'prices'>): ModelPrice | null {
  return lookupPrice(options.prices, answered)
    ?? lookupPrice(options.prices, options.model)
    ?? options.pricing
    ?? lookupPrice(BUILT_IN_PRICES, answered)
    ?? lookupPrice(BUILT_IN_PRICES, options.model)
    ?? null;
}

/** US dollars for a call: cached input tokens (part of `inputTokens`) at the cached price, the rest at the input price. */
export function costOf(price: ModelPrice, tokens: { inputTokens: number; outputTokens: number; cachedTokens: number }): number {
  const cached = Math.min(tokens.cachedTokens, tokens.inputTokens);
  const usd = (tokens.inputTokens - cached) * price.inputPerMTok + cached * (price.cachedPerMTok ?? price.inputPerMTok) + tokens.outputTokens * price.outputPerMTok;
  return usd / 1_000_000;
}
