import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** A program's end (src/run/exit-when-settled.ts), in a Node process of its own: dist/ as the build wrote it. */
const program = (main: string) => {
  const url = pathToFileURL(path.join(ROOT, 'dist/run/exit-when-settled.js')).href;
  return spawnSync(process.execPath, ['--input-type=module', '-e', `import { exitWhenSettled } from ${JSON.stringify(url)}; exitWhenSettled(${main}, 'prog');`], { encoding: 'utf8' });
};

describe('a program ends with its main promise', () => {
  it('exits with the code the promise settles to', () => {
    const r = program('new Promise((resolve) => setTimeout(() => resolve(3), 20))');
    expect(r.status).toBe(3);
    expect(r.stderr).toBe('');
  });

  it('exits only once nothing is left to do: work after the promise and a large write to a pipe all finish', () => {
    const r = program(`new Promise((resolve) => { process.stdout.write('x'.repeat(1 << 19)); setTimeout(() => process.stdout.write('late'), 30); resolve(4); })`);
    expect(r.status).toBe(4);
    expect(r.stdout.length).toBe((1 << 19) + 'late'.length);
    expect(r.stdout.endsWith('late')).toBe(true);
  });

  it('a promise nothing settles is an internal error (exit 1, said), not a silent 0', () => {
    const r = program('new Promise(() => {})');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('prog: internal error: it stopped before its work was done');
  });
});
