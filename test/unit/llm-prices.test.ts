import { describe, expect, it } from 'vitest';
import { apiOptionsSchema } from '../../src/contracts/presets.js';
import { BUILT_IN_PRICES, costOf, lookupPrice, priceOf } from '../../src/run/presets/llm/prices.js';

const opts = (o: Record<string, unknown>) => apiOptionsSchema().parse({ model: 'gpt-4o-mini', ...o });

describe('the price table', () => {
  it('finds a model by its name, its dated snapshot, and behind a router prefix, by the longest key', () => {
    expect(lookupPrice(BUILT_IN_PRICES, 'gpt-4o-mini')).toBe(BUILT_IN_PRICES['gpt-4o-mini']);
    expect(lookupPrice(BUILT_IN_PRICES, 'gpt-4o-mini-2024-07-18')).toBe(BUILT_IN_PRICES['gpt-4o-mini']);
    expect(lookupPrice(BUILT_IN_PRICES, 'gpt-4o-2024-08-06')).toBe(BUILT_IN_PRICES['gpt-4o']);
    expect(lookupPrice(BUILT_IN_PRICES, 'claude-sonnet-4-5-20250929')).toBe(BUILT_IN_PRICES['claude-sonnet-4-5']);
    expect(lookupPrice(BUILT_IN_PRICES, 'claude-sonnet-4-20250514')).toBe(BUILT_IN_PRICES['claude-sonnet-4']);
    expect(lookupPrice(BUILT_IN_PRICES, 'claude-3-5-haiku-latest')).toBe(BUILT_IN_PRICES['claude-3-5-haiku']);
    expect(lookupPrice(BUILT_IN_PRICES, 'openai/gpt-4.1-nano')).toBe(BUILT_IN_PRICES['gpt-4.1-nano']);
    expect(lookupPrice(BUILT_IN_PRICES, 'o3-mini-2025-01-31')).toBe(BUILT_IN_PRICES['o3-mini']);
  });

  it('does not take a model for another whose name it merely starts with', () => {
    expect(lookupPrice(BUILT_IN_PRICES, 'gpt-4oo')).toBeUndefined();
    expect(lookupPrice(BUILT_IN_PRICES, 'o3x')).toBeUndefined();
    expect(lookupPrice(BUILT_IN_PRICES, 'llama3.1:8b')).toBeUndefined();
    expect(lookupPrice(BUILT_IN_PRICES, 'gpt-4.1-mini')).toBe(BUILT_IN_PRICES['gpt-4.1-mini']); // not gpt-4.1's
  });

  it('prices cached input at the cached price, the rest at input and output prices', () => {
    const p = BUILT_IN_PRICES['gpt-4o-mini']!;
    expect(costOf(p, { inputTokens: 1_000_000, outputTokens: 0, cachedTokens: 0 })).toBeCloseTo(0.15, 9);
    expect(costOf(p, { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedTokens: 400_000 })).toBeCloseTo(0.6 * 0.15 + 0.4 * 0.075 + 0.6, 9);
    expect(costOf({ inputPerMTok: 2, outputPerMTok: 4 }, { inputTokens: 1000, outputTokens: 500, cachedTokens: 100 })).toBeCloseTo((1000 * 2 + 500 * 4) / 1e6, 12);
    expect(costOf(p, { inputTokens: 10, outputTokens: 0, cachedTokens: 50 })).toBeCloseTo(10 * 0.075 / 1e6, 12); // cached never exceeds input
  });
});

describe('priceOf: the user overrides the table', () => {
  it('takes options.prices for the answered name, then for the configured model, then options.pricing, then the table', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18', opts({}))).toBe(BUILT_IN_PRICES['gpt-4o-mini']);
    const pricing = { inputPerMTok: 9, outputPerMTok: 9 };
    expect(priceOf('gpt-4o-mini-2024-07-18', opts({ pricing }))).toEqual(pricing);
    const prices = { 'gpt-4o-mini': { inputPerMTok: 1, outputPerMTok: 2 } };
    expect(priceOf('gpt-4o-mini-2024-07-18', opts({ pricing, prices }))).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
    expect(priceOf('some-alias', opts({ prices }))).toEqual({ inputPerMTok: 1, outputPerMTok: 2 }); // the configured model's entry
  });

  it('knows a local model only from the options, and nothing otherwise', () => {
    expect(priceOf('llama3.1:8b', opts({ model: 'llama3.1:8b' }))).toBeNull();
    expect(priceOf('llama3.1:8b', opts({ model: 'llama3.1:8b', prices: { 'llama3.1:8b': { inputPerMTok: 0.01 } } }))).toEqual({ inputPerMTok: 0.01, outputPerMTok: 0 });
    // the provider answers with a name the table does not know: the configured model's price serves
    expect(priceOf('my-deployment-7', opts({ model: 'gpt-4o' }))).toBe(BUILT_IN_PRICES['gpt-4o']);
  });
});
