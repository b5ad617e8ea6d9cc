import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Shared by the runner presets: each is a small program that speaks the
 * runner contract (docs/contracts.md#runner) like any user's runner would.
 */
export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the runner contract sets it)`);
  return value;
}

export function readCase(): { id: string; input: unknown; [k: string]: unknown } {
  return JSON.parse(readFileSync(env('TUNE_CASE'), 'utf8'));
}

export function options<T>(): T {
  return JSON.parse(process.env.TUNE_PRESET_OPTIONS ?? '{}') as T;
}

export function writeResult(result: Record<string, unknown>): void {
  writeFileSync(env('TUNE_OUTPUT'), `${JSON.stringify(result)}\n`);
}

export function inputText(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input, null, 2);
}
