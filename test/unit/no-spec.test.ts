import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository cites its own docs, never the product specification it
 * was built from (which users never see): a comment, a test title, a help
 * text or a page says the rule in words or names the docs page that does
 * (docs/method.md, docs/contracts.md, docs/git-model.md, …). Every file git
 * tracks, or would (untracked but not ignored), is read; only this test
 * itself is left out.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));
const WORD = new RegExp(`\\b${'SP'}EC\\b`);

describe('the repository', () => {
  it('cites docs/, never the spec it was built from', () => {
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0').filter((f) => f && f !== SELF && !f.split('/').includes('node_modules'));
    expect(files.length).toBeGreaterThan(100);
    const hits: string[] = [];
    for (const file of new Set(files)) {
      let text: string;
      try {
        text = readFileSync(path.join(ROOT, file), 'utf8');
      } catch {
        continue; // listed but deleted in the working tree
      }
      if (text.includes('\0')) continue;
      text.split('\n').forEach((line, i) => {
        if (WORD.test(line)) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
    }
    expect(hits, 'cite the docs page that says the rule (docs/method.md#…, docs/contracts.md#…) or say it in words').toEqual([]);
  });
});
