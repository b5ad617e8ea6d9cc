import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

/**
 * docs/ stands alone: every link between the README and the pages lands on
 * a file of the repository and, with a #fragment, on a heading there (as
 * GitHub makes its anchors); the troubleshooting page names real error codes.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchor(m[1]!)));
}

describe('the docs', () => {
  it('link only to files that exist, and to headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, fragment] = target!.split('#') as [string, string | undefined];
        const resolved = file ? path.normalize(path.join(path.dirname(page), file)) : page;
        checked++;
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${page}: ${target} (no ${resolved})`);
        else if (fragment && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) broken.push(`${page}: ${target} (no heading #${fragment} in ${resolved})`);
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });

  it('are reached from the README and from docs/design.md', () => {
    for (const page of ['method.md', 'contracts.md', 'troubleshooting.md', 'git-model.md']) {
      expect(read('README.md'), page).toContain(`](docs/${page}`);
      expect(read('docs/design.md'), page).toContain(`](${page}`);
    }
  });

  it('troubleshooting names only error codes git-tune has', () => {
    const named = [...read('docs/troubleshooting.md').matchAll(/\[((?:`[a-z-]+`(?:, )?)+)\]/g)].flatMap((m) => m[1]!.split(', ').map((c) => c.replace(/`/g, '')));
    expect(named.length).toBeGreaterThan(30);
    for (const code of named) expect(ERROR_CODES as readonly string[], code).toContain(code);
  });

  it('the method draws the seed\'s picture: batches, both halves, grading, edits, the difficult list, memory, the final check', () => {
    const chart = /```mermaid\n([\s\S]*?)```/.exec(read('docs/method.md'))?.[1] ?? '';
    for (const word of ['plan batch', 'no-memory run', 'with-memory run', 'grade', 'edit the prose', 'difficult list', 'candidate memory', 'last good memory', 'checkpoint', 'final check', 'done']) {
      expect(chart, word).toContain(word);
    }
    for (const heading of ['Batches', 'Halves', 'Grading', 'Edits', 'Difficult list', 'Memory', 'Final check', 'Next']) {
      expect(anchorsOf('docs/method.md'), heading).toContain(anchor(heading));
    }
  });
});
