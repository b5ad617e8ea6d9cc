import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/**
 * The presets' `init` lines a newcomer copies from the README and
 * docs/presets.md are complete: without `--memory-policy` every with-memory
 * half has nothing to edit (issue 29, item 3).
 */
describe('the docs\' preset init lines', () => {
  const lines = ['README.md', 'docs/presets.md'].flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8').split('\n').filter((l) => /^git tune init .*--preset /.test(l)).map((l) => [file, l] as const));

  it('are there', () => {
    expect(lines.length).toBeGreaterThanOrEqual(4);
  });

  it.each(lines)('%s: %s names the memory-policy file', (_file, line) => {
    expect(line).toMatch(/ --memory-policy \S+/);
  });
});
