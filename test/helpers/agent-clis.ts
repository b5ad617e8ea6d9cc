import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The real agent CLIs, pinned, installed once into a test cache folder (not
 * a dependency of package.json: `npm ci` never pays for them). The folder is
 * `$GIT_TUNE_CLI_CACHE`, else `<tmp>/git-tune-agent-clis`; each version gets
 * its own `<name>-<version>/` with a `.installed` mark written last. Parallel
 * vitest workers take a lock (a folder made with mkdir, atomic) and the
 * second one waits for the first one's install. CI needs the npm registry.
 */
export const CLI_VERSIONS = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
} as const;

export type RealCli = keyof typeof CLI_VERSIONS;

const cacheRoot = () => process.env.GIT_TUNE_CLI_CACHE ?? path.join(os.tmpdir(), 'git-tune-agent-clis');

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The installed CLI's executable (installing it first when the cache lacks it), and how long the install took (0 when cached). */
export function installCli(cli: RealCli): { bin: string; installMs: number } {
  const { pkg, version, bin } = CLI_VERSIONS[cli];
  const dir = path.join(cacheRoot(), `${cli}-${version}`);
  const exe = path.join(dir, 'node_modules/.bin', bin);
  const mark = path.join(dir, '.installed');
  if (existsSync(mark)) return { bin: exe, installMs: 0 };
  mkdirSync(cacheRoot(), { recursive: true });
  const lock = `${dir}.lock`;
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(mark)) return { bin: exe, installMs: 0 };
      // A lock left by a dead install (older than 10 minutes) is taken over.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (Date.now() - started > 900_000) throw new Error(`waited 15 minutes for ${lock}`);
      sleep(250);
    }
  }
  try {
    if (existsSync(mark)) return { bin: exe, installMs: 0 };
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
    const r = spawnSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', `${pkg}@${version}`], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000,
      // The registry's certificates, which vitest.config.ts keeps from every other process the tests start.
      env: { ...process.env, ...(process.env.GIT_TUNE_TEST_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.GIT_TUNE_TEST_CA_CERTS } : {}) },
    });
    if (r.status !== 0) throw new Error(`npm install ${pkg}@${version} failed (exit ${r.status}; the real-CLI tests need the npm registry, or GIT_TUNE_SKIP_REAL_CLIS=1):\n${r.stderr}`);
    const v = spawnSync(exe, ['--version'], { encoding: 'utf8' });
    if (v.status !== 0 || !v.stdout.includes(version)) throw new Error(`${exe} --version printed ${JSON.stringify(v.stdout)} (exit ${v.status}): ${v.stderr}`);
    writeFileSync(mark, `${version}\n`);
    return { bin: exe, installMs: Date.now() - started };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether the real-CLI tests run (they do unless GIT_TUNE_SKIP_REAL_CLIS=1 says the machine has no registry). */
export const realClis = process.env.GIT_TUNE_SKIP_REAL_CLIS !== '1';
