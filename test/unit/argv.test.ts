import { describe, expect, it } from 'vitest';
import { shellQuote, splitArgs } from '../../src/core/argv.js';

describe('splitArgs: a command line given as one string', () => {
  it('splits plain words on any whitespace', () => {
    expect(splitArgs('node agent.js')).toEqual(['node', 'agent.js']);
    expect(splitArgs('  node \t agent.js\n--fast  ')).toEqual(['node', 'agent.js', '--fast']);
    expect(splitArgs('')).toEqual([]);
  });

  it('keeps quoted words whole, with no expansion', () => {
    expect(splitArgs(`python -c 'print("hi there")'`)).toEqual(['python', '-c', 'print("hi there")']);
    expect(splitArgs(`echo "a b" '$HOME' "$HOME"`)).toEqual(['echo', 'a b', '$HOME', '$HOME']);
    expect(splitArgs(`pre"fix"'ed'`)).toEqual(['prefixed']);
  });

  it('keeps empty quoted arguments', () => {
    expect(splitArgs(`run '' ""`)).toEqual(['run', '', '']);
  });

  it('reads backslashes the way a POSIX shell does', () => {
    expect(splitArgs('a\\ b c')).toEqual(['a b', 'c']);
    expect(splitArgs('"a \\"q\\" \\\\ \\n"')).toEqual(['a "q" \\ \\n']);
    expect(splitArgs(`'a\\b'`)).toEqual(['a\\b']);
  });

  it('refuses an unclosed quote', () => {
    expect(() => splitArgs(`node 'agent.js`)).toThrow(`unclosed ' quote in: node 'agent.js`);
    expect(() => splitArgs('node "agent.js')).toThrow(/unclosed " quote/);
  });
});

describe('shellQuote', () => {
  it('leaves safe words alone and quotes the rest', () => {
    expect(shellQuote('agents/**/*.md')).toBe(`'agents/**/*.md'`);
    expect(shellQuote('batch01-nomem-run1')).toBe('batch01-nomem-run1');
    expect(shellQuote('a b')).toBe(`'a b'`);
    expect(shellQuote(`it's`)).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe(`''`);
  });

  it('round-trips through splitArgs', () => {
    const args = ['node', 'agent.js', 'a b', `it's`, '"quoted"', '$HOME', '', 'x\\y'];
    expect(splitArgs(args.map(shellQuote).join(' '))).toEqual(args);
  });
});
