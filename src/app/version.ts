import { readFileSync } from 'node:fs';

/** The package's version (package.json is two levels up from dist/app/ and dist/bin/ alike). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
