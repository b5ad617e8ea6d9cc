/**
 * When a failed HTTP call to a model is tried again, and after how long:
 * a pure decision (no clock, no randomness of its own), so every case is a
 * row of a table test. The client (./client.ts) does the waiting.
 *
 * - 408, 429 and 5xx (Anthropic's 529 "overloaded" among them), a network
 *   error and a call past its timeout are tried again, up to `maxRetries`
 *   times; anything else is final.
 * - The server's own word wins: `retry-after-ms` (OpenAI's), then
 *   `Retry-After` as seconds or as an HTTP date, capped at `maxWaitMs` (a
 *   server asking for an hour gets the cap, not a hung run).
 * - Otherwise exponential backoff, `baseMs * 2^retry` capped at
 *   `maxBackoffMs`, with jitter: a random part of up to a quarter taken off,
 *   so cases that failed together do not come back together.
 */
export interface RetryPolicy {
  maxRetries: number;
  baseMs: number;
  maxBackoffMs: number;
  maxWaitMs: number;
}

export const DEFAULT_RETRY: Omit<RetryPolicy, 'maxRetries'> = { baseMs: 500, maxBackoffMs: 30_000, maxWaitMs: 120_000 };

/** What one attempt ended with, as far as retrying goes. */
export type AttemptFailure =
  | { kind: 'status'; status: number; headers: Readonly<Record<string, string>> }
  | { kind: 'network' }
  | { kind: 'timeout' };

export type RetryDecision = { retry: true; waitMs: number } | { retry: false };

export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * The wait a server asks for in its headers (lower-case names), in ms, or
 * null when it asks for none (or says something unreadable).
 * `nowMs` reads an HTTP-date `Retry-After`.
 */
export function serverWaitMs(headers: Readonly<Record<string, string>>, nowMs: number): number | null {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const after = headers['retry-after'];
  if (after === undefined) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.round(Number(after) * 1000);
  if (!/[a-z]/i.test(after)) return null; // an HTTP date names its day and month; Date.parse would take '-1' for a year
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/**
 * Whether to try again after the `retry`-th failure (0 for the first call's),
 * and how long to wait first. `random` is in [0, 1).
 */
export function decideRetry(failure: AttemptFailure, retry: number, policy: RetryPolicy, random: number, nowMs: number): RetryDecision {
  if (retry >= policy.maxRetries) return { retry: false };
  if (failure.kind === 'status' && !isRetryableStatus(failure.status)) return { retry: false };
  const asked = failure.kind === 'status' ? serverWaitMs(failure.headers, nowMs) : null;
  if (asked !== null) return { retry: true, waitMs: Math.min(asked, policy.maxWaitMs) };
  const backoff = Math.min(policy.baseMs * 2 ** retry, policy.maxBackoffMs);
  return { retry: true, waitMs: Math.round(backoff * (1 - 0.25 * random)) };
}
