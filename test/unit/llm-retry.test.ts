import { describe, expect, it } from 'vitest';
import { decideRetry, serverWaitMs, type AttemptFailure, type RetryPolicy } from '../../src/run/presets/llm/retry.js';

/** The API presets' retry policy: which failures are tried again, and after how long (a pure table). */
const policy: RetryPolicy = { maxRetries: 3, baseMs: 500, maxBackoffMs: 4_000, maxWaitMs: 60_000 };
const NOW = Date.parse('2026-12-03T12:00:00Z');
const status = (s: number, headers: Record<string, string> = {}): AttemptFailure => ({ kind: 'status', status: s, headers });

describe('decideRetry', () => {
  const rows: Array<[string, AttemptFailure, number, number, ReturnType<typeof decideRetry>]> = [
    ['429, first failure, no header: base backoff', status(429), 0, 0, { retry: true, waitMs: 500 }],
    ['429, second failure: doubled', status(429), 1, 0, { retry: true, waitMs: 1000 }],
    ['500, third failure: doubled again', status(500), 2, 0, { retry: true, waitMs: 2000 }],
    ['jitter takes off up to a quarter', status(503), 2, 0.999, { retry: true, waitMs: 1501 }],
    ['jitter halfway', status(502), 0, 0.5, { retry: true, waitMs: 438 }],
    ['backoff capped at maxBackoffMs', status(500), 2, 0, { retry: true, waitMs: 2000 }],
    ['529 overloaded (Anthropic) is retried', status(529), 0, 0, { retry: true, waitMs: 500 }],
    ['408 request timeout is retried', status(408), 0, 0, { retry: true, waitMs: 500 }],
    ['a network error is retried', { kind: 'network' }, 0, 0, { retry: true, waitMs: 500 }],
    ['a timeout is retried', { kind: 'timeout' }, 1, 0, { retry: true, waitMs: 1000 }],
    ['Retry-After seconds wins over backoff', status(429, { 'retry-after': '7' }), 0, 0.9, { retry: true, waitMs: 7000 }],
    ['Retry-After fractional seconds', status(429, { 'retry-after': '1.5' }), 0, 0, { retry: true, waitMs: 1500 }],
    ['Retry-After as an HTTP date', status(503, { 'retry-after': new Date(NOW + 12_000).toUTCString() }), 0, 0, { retry: true, waitMs: 12_000 }],
    ['Retry-After date in the past: at once', status(503, { 'retry-after': new Date(NOW - 5_000).toUTCString() }), 0, 0, { retry: true, waitMs: 0 }],
    ['retry-after-ms wins over Retry-After', status(429, { 'retry-after-ms': '250', 'retry-after': '9' }), 0, 0, { retry: true, waitMs: 250 }],
    ['a server asking for an hour gets maxWaitMs', status(429, { 'retry-after': '3600' }), 0, 0, { retry: true, waitMs: 60_000 }],
    ['unreadable Retry-After: backoff', status(429, { 'retry-after': 'soon' }), 1, 0, { retry: true, waitMs: 1000 }],
    ['past maxRetries: give up', status(429, { 'retry-after': '1' }), 3, 0, { retry: false }],
    ['timeouts past maxRetries: give up', { kind: 'timeout' }, 3, 0, { retry: false }],
    ['400 is final', status(400), 0, 0, { retry: false }],
    ['404 is final', status(404), 0, 0, { retry: false }],
    ['422 is final', status(422), 0, 0, { retry: false }],
    ['401 is final (the client makes it auth)', status(401), 0, 0, { retry: false }],
  ];
  it.each(rows)('%s', (_name, failure, retry, random, expected) => {
    expect(decideRetry(failure, retry, policy, random, NOW)).toEqual(expected);
  });

  it('caps the backoff at maxBackoffMs for late retries', () => {
    expect(decideRetry(status(500), 6, { ...policy, maxRetries: 10 }, 0, NOW)).toEqual({ retry: true, waitMs: 4000 });
  });

  it('never retries with maxRetries 0', () => {
    expect(decideRetry(status(500), 0, { ...policy, maxRetries: 0 }, 0, NOW)).toEqual({ retry: false });
  });
});

describe('serverWaitMs', () => {
  it('reads seconds, milliseconds and dates, and nothing else', () => {
    expect(serverWaitMs({}, NOW)).toBeNull();
    expect(serverWaitMs({ 'retry-after': '0' }, NOW)).toBe(0);
    expect(serverWaitMs({ 'retry-after': ' 3 ' }, NOW)).toBe(3000);
    expect(serverWaitMs({ 'retry-after-ms': 'x', 'retry-after': '2' }, NOW)).toBe(2000);
    expect(serverWaitMs({ 'retry-after': 'Thu, 03 Dec 2026 12:00:30 GMT' }, NOW)).toBe(30_000);
    expect(serverWaitMs({ 'retry-after': '-1' }, NOW)).toBeNull();
  });
});
