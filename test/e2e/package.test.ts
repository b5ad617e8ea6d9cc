import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * What `npm install git-tune` gets: the packed tarball, unpacked with no
 * node_modules beside it. The shipped CLI is a bundle (scripts/bundle.mjs), so
 * it must run on its own files (dist/bin), with the templates and hooks it
 * finds from its own path, and `git` reached through PATH as git runs it.
 */
describe('the packed package', () => {
  let tmp: string;
  let bin: string;
  let repo: TempRepo;

  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-pack-'));
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').pop()!;
    execFileSync('tar', ['xzf', path.join(tmp, out), '-C', tmp]);
    bin = path.join(tmp, 'package', 'dist', 'bin', 'git-tune.js');
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.jsonl': '{"id":"a-1","class":"a","input":"one"}\n{"id":"b-1","class":"b","input":"two"}\n' });
  }, 120_000);
  afterAll(() => {
    repo.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: repo.dir, env: { ...process.env, ...repo.env }, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('holds the bundle, the templates and the hooks, and no node_modules, and needs none', () => {
    const pkg = path.join(tmp, 'package');
    expect(existsSync(bin)).toBe(true);
    expect(existsSync(path.join(pkg, 'dist', 'bin', 'cli.cjs'))).toBe(true);
    // Everything the CLI runs is in the bundle: an install downloads nothing else.
    const manifest = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(existsSync(path.join(pkg, 'node_modules'))).toBe(false);
    expect(readdirSync(path.join(pkg, 'hooks')).sort()).toEqual(['commit-msg', 'post-commit', 'pre-push', 'prepare-commit-msg']);
    expect(existsSync(path.join(pkg, 'templates', 'example'))).toBe(true);
    // The JSON Schema editors validate config.yaml with (docs/design.md).
    expect(existsSync(path.join(pkg, 'schema', 'config.schema.json'))).toBe(true);
    for (const preset of ['runner-api.js', 'runner-cli.js', 'judge-api.js', 'editor-api.js', 'editor-cli.js']) expect(existsSync(path.join(pkg, 'dist', 'bin', preset))).toBe(true);
  });

  it('runs on its own: --version, init with hooks, dataset import, next', () => {
    expect(run(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const init = run(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--dataset', 'cases.jsonl']);
    expect(init.code, init.stderr).toBe(0);
    // The hooks came from the package's hooks/ folder.
    expect(readdirSync(path.join(repo.dir, '.git', 'hooks')).filter((f) => !f.endsWith('.sample')).sort()).toEqual(
      ['commit-msg', 'post-commit', 'pre-push', 'prepare-commit-msg'],
    );
    const next = run(['next', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ command: 'git tune select' });
  });
});
