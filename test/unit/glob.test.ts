import { describe, expect, it } from 'vitest';
import { globToRegExp, isToolPath, matcher } from '../../src/core/glob.js';

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

  it('matcher: the tool\'s own directory .tune/ is never prose, whatever the globs say', () => {
    const everyMd = matcher(['**/*.md']);
    expect(everyMd('agents/prompt.md')).toBe(true);
    expect(everyMd('README.md')).toBe(true);
    for (const own of ['.tune/desk/README.md', '.tune/desk/USAGE.md', '.tune/desk/runs/batch01-nomem-run1/changes.md', '.tune/desk/runs/batch01-nomem-run1/findings.md', './.tune/desk/README.md']) {
      expect(globToRegExp('**/*.md').test(own.replace(/^\.\//, '')), own).toBe(true); // the glob alone would take it
      expect(everyMd(own), own).toBe(false);
    }
    expect(matcher(['**'])('.tune/desk/config.yaml')).toBe(false);
    expect(matcher(['.tune/**'])('.tune/desk/memory/last-good/notes.md')).toBe(false);
    expect(matcher(['.tune/desk/README.md'])('.tune/desk/README.md')).toBe(false);
    // Only the top-level .tune directory: look-alikes and nested .tune dirs are the user's.
    expect(everyMd('.tuneup/notes.md')).toBe(true);
    expect(everyMd('.tune.md')).toBe(true);
    expect(everyMd('docs/.tune/notes.md')).toBe(true);
  });

  it('isToolPath: .tune itself and anything under it, with or without a leading ./', () => {
    expect(isToolPath('.tune')).toBe(true);
    expect(isToolPath('.tune/desk/config.yaml')).toBe(true);
    expect(isToolPath('./.tune/desk')).toBe(true);
    expect(isToolPath('.tuned/x')).toBe(false);
    expect(isToolPath('agents/.tune/x')).toBe(false);
  });
});
