import { readFileSync } from 'node:fs';

/** The package's version (package.json is two levels up from dist/cli/ and dist/bin/ alike). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** `--version` alone answers before commander and the program load (BENCHMARKS.md: start-up). */
export function answeredVersion(args: readonly string[]): boolean {
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  process.stdout.write(`${packageVersion()}\n`);
  return true;
}
