import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shellQuote, singleQuoted, splitArgs } from '../../src/core/argv.js';

/** What /bin/sh makes of command lines (no expansion in them): one sh for them all, each argument NUL-ended, each line's end marked. */
function shSplits(lines: string[]): string[][] {
  const script = lines.map((l) => `set -- ${l}\nprintf '%s\\0' "$@"; printf '\\001\\0'\n`).join('');
  const out = execFileSync('sh', ['-c', script], { encoding: 'utf8' }).split('\0');
  const all: string[][] = [[]];
  for (const a of out.slice(0, -1)) {
    if (a === '\u0001') all.push([]);
    else all.at(-1)!.push(a);
  }
  return all.slice(0, -1);
}

/** Any argument, with the characters a shell treats specially over-represented. */
const arg = fc.string({ unit: fc.oneof(fc.constantFrom(...` '"\\$\`*?[]{}()|&;<>#~!\t\n=%,:@+.-/`), fc.char(), fc.fullUnicode()) });

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

  it('round-trips any argv through splitArgs (property)', () => {
    fc.assert(fc.property(fc.array(arg, { maxLength: 6 }), (args) => {
      expect(splitArgs(args.map(shellQuote).join(' '))).toEqual(args);
      expect(splitArgs(args.map(singleQuoted).join(' '))).toEqual(args);
    }), { numRuns: 500 });
  });

  it('quotes as /bin/sh reads it back: the same argv', () => {
    const samples = fc.sample(fc.array(arg.filter((a) => !a.includes('\0')), { minLength: 1, maxLength: 4 }), { numRuns: 150, seed: 16 });
    const lines = samples.map((args) => args.map(shellQuote).join(' '));
    expect(shSplits(lines)).toEqual(samples);
  });
});

describe('splitArgs reads a command line as /bin/sh does', () => {
  // Lines made of plain words, '…' and "…" (with \" \\ \$ \` and other backslashes inside) and \x outside: no expansion in them.
  const plain = fc.constantFrom(...'ab-_./=:,'.split(''));
  const word = fc.array(fc.oneof(
    fc.string({ unit: plain, minLength: 1 }),
    fc.string({ unit: fc.constantFrom(...`ab "\\$\`*|;`.split('')) }).map((t) => `'${t}'`),
    fc.array(fc.oneof(fc.constantFrom('a', ' ', "'", '*', '|', '\\n', '\\a'), fc.constantFrom('\\"', '\\\\', '\\$', '\\`'))).map((t) => `"${t.join('')}"`),
    fc.constantFrom('\\ ', "\\'", '\\"', '\\\\', '\\$', '\\*', '\\|', '\\a'),
  ), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
  const line = fc.array(fc.tuple(word, fc.constantFrom(' ', '  ', '\t')), { minLength: 1, maxLength: 5 }).map((ws) => ws.map(([w, sp]) => w + sp).join(''));

  it('the same argv as sh for lines of words, quotes and backslashes (property, one sh for all)', () => {
    const lines = fc.sample(line, { numRuns: 300, seed: 16 });
    expect(lines.map(splitArgs)).toEqual(shSplits(lines));
  });
});
