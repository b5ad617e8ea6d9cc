import { describe, expect, it } from 'vitest';
import { globToRegExp, matcher } from '../../src/core/glob.js';

const matches = (glob: string, path: string) => globToRegExp(glob).test(path);

describe('globs for prose and memoryPolicy', () => {
  it('`*` stays within one segment', () => {
    expect(matches('agents/*.md', 'agents/prompt.md')).toBe(true);
    expect(matches('agents/*.md', 'agents/sub/prompt.md')).toBe(false);
    expect(matches('*.md', 'README.md')).toBe(true);
    expect(matches('*.md', 'docs/README.md')).toBe(false);
  });

  it('`**/` matches any depth, none included', () => {
    expect(matches('agents/**/*.md', 'agents/prompt.md')).toBe(true);
    expect(matches('agents/**/*.md', 'agents/a/b/c.md')).toBe(true);
    expect(matches('agents/**/*.md', 'other/agents/x.md')).toBe(false);
    expect(matches('**/*.md', 'x.md')).toBe(true);
    expect(matches('agents/**', 'agents/a/b.txt')).toBe(true);
  });

  it('`?` is one character, not a slash', () => {
    expect(matches('skill?.md', 'skill1.md')).toBe(true);
    expect(matches('skill?.md', 'skill12.md')).toBe(false);
    expect(matches('a?b', 'a/b')).toBe(false);
  });

  it('`{a,b}` are alternatives', () => {
    expect(matches('prompts/*.{md,txt}', 'prompts/x.txt')).toBe(true);
    expect(matches('prompts/*.{md,txt}', 'prompts/x.md')).toBe(true);
    expect(matches('prompts/*.{md,txt}', 'prompts/x.yaml')).toBe(false);
  });

  it('takes regex characters literally', () => {
    expect(matches('rules(v2)+.md', 'rules(v2)+.md')).toBe(true);
    expect(matches('a.md', 'abmd')).toBe(false);
    expect(matches('[x].md', '[x].md')).toBe(true);
    expect(matches('$HOME^.md', '$HOME^.md')).toBe(true);
  });

  it('matcher: any of the globs, a leading ./ ignored', () => {
    const isProse = matcher(['./agents/**/*.md', 'house-rules.md']);
    expect(isProse('agents/billing/refunds.md')).toBe(true);
    expect(isProse('house-rules.md')).toBe(true);
    expect(isProse('src/house-rules.md')).toBe(false);
    expect(matcher([])('anything')).toBe(false);
  });
});
