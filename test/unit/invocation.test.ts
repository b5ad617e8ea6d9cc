import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneInvocation } from '../../src/cli/invocation.js';

/** How printed commands start: `git tune` only when git would find git-tune on PATH. */
describe('tuneInvocation', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-invocation-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const entry = path.join(tmp, 'my clone', 'dist', 'bin', 'git-tune.js');

  it('is node and the entry\'s absolute path, quoted for the shell, when no git-tune is on PATH', () => {
    expect(tuneInvocation({ PATH: ['/nonexistent', tmp].join(':') }, entry, 'linux')).toBe(`node '${entry}'`);
    expect(tuneInvocation({}, 'dist/bin/git-tune.js', 'linux')).toBe(`node ${path.resolve('dist/bin/git-tune.js')}`);
  });

  it('is `git tune` once an executable git-tune is on PATH, and not for a file that is not executable', () => {
    const bin = path.join(tmp, 'bin');
    const other = path.join(tmp, 'other');
    for (const [dir, mode] of [[bin, 0o755], [other, 0o644]] as const) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'git-tune'), '#!/bin/sh\n');
      chmodSync(path.join(dir, 'git-tune'), mode);
    }
    expect(tuneInvocation({ PATH: `/nonexistent:${bin}` }, entry, 'linux')).toBe('git tune');
    expect(tuneInvocation({ PATH: other }, entry, 'linux')).toBe(`node '${entry}'`);
  });
});
