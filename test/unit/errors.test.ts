import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { ERROR_CODES, EXIT, EXIT_CODES, exitCodesHelp, exitCodesTable } from '../../src/errors.js';

const root = new URL('../../', import.meta.url).pathname;
const sources = (dir: string): string[] =>
  readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
const code = sources('src').filter((f) => f !== path.join('src', 'errors.ts')).map((f) => readFileSync(path.join(root, f), 'utf8')).join('\n');

describe('error codes', () => {
  it('every code of the ErrorCode union is thrown somewhere, and each is listed once', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    const unused = ERROR_CODES.filter((c) => !code.includes(`'${c}'`));
    expect(unused).toEqual([]);
  });

  it('every code a TuneError is made with is in the union (tsc checks the types; this checks the spelling in the sources)', () => {
    const made = [...code.matchAll(/(?:new TuneError|usageError|historyError|conflictError)\(\s*'([^']+)'/g)].map((m) => m[1]!);
    expect(made.length).toBeGreaterThan(90);
    expect(made.filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });
});

describe('exit codes: one table', () => {
  it('EXIT names each code of the table, and no two share a number', () => {
    expect(Object.entries(EXIT)).toEqual(EXIT_CODES.map((e) => [e.name, e.code]));
    expect(new Set(EXIT_CODES.map((e) => e.code)).size).toBe(EXIT_CODES.length);
  });

  it('`git tune --help` lists every exit code from the table, in the words it always had', () => {
    let help = '';
    const program = buildProgram().configureOutput({ writeOut: (s) => (help += s), writeErr: () => {} });
    program.outputHelp();
    expect(help).toContain(`\n${exitCodesHelp()}\n`);
    const listed = [...exitCodesHelp().matchAll(/(\d+) ([^,.]+)[,.]/g)].map((m) => [Number(m[1]), m[2]]);
    expect(listed).toEqual(EXIT_CODES.map((e) => [e.code, e.help]));
    expect(exitCodesHelp()).toBe(
      'Exit codes: 0 ok, 1 unexpected, 2 usage or bad input, 3 not allowed by the history now,\n' +
      '4 another command moved the branch, 5 runner sandbox down, 6 final check not VERIFIED, 7 disk full,\n' +
      '130 interrupted.',
    );
  });

  it('docs/design.md shows the same table', () => {
    const design = readFileSync(path.join(root, 'docs', 'design.md'), 'utf8');
    expect(design).toContain(`## Exit codes\n`);
    expect(design).toContain(`\n${exitCodesTable()}\n`);
  });
});
