// The shipped CLI: src/ bundled by esbuild into dist/bin/ (after tsc has
// type-checked it and written dist/ module by module, which tests and the
// benchmarks import).
//
// Why a bundle: a cold `git tune next` spent a third of its time resolving,
// reading and compiling some 150 modules of ours and our dependencies'
// (BENCHMARKS.md). One file per lazily-loaded command, minified, loads in a
// fraction of that. Code splitting keeps `--version` and `--help` from loading
// any command.
//
// Layout: dist/bin/ sits at the same depth as dist/cli/, so the paths our code
// takes from import.meta.url (`../../package.json`, `../../templates`,
// `../../hooks`) hold in both; the runner presets are entries of their own
// (`./<preset>.js` beside the code that spawns them).
import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url);
const outdir = new URL('dist/bin/', root).pathname;

const result = await build({
  absWorkingDir: root.pathname,
  entryPoints: {
    'git-tune': 'src/cli/main.ts',
    'openai-chat': 'src/run/presets/openai-chat.ts',
    'claude-code': 'src/run/presets/claude-code.ts',
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifySyntax: true,
  minifyWhitespace: true,
  // Names kept: error classes and stack traces stay readable.
  minifyIdentifiers: false,
  sourcemap: 'linked',
  chunkNames: '[name]-[hash]',
  // Our CommonJS dependencies (commander, yaml) call require(): give the ESM bundle one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  define: { GIT_TUNE_BUNDLE: 'true' },
  logLevel: 'warning',
  metafile: true,
});

// Files of earlier builds are removed only once they are an hour old: a CLI
// started before this build (a test run, an `auto` loop) still loads its
// commands' chunks lazily, by their old content-hashed names.
const written = new Set(Object.keys(result.metafile.outputs).map((f) => path.resolve(root.pathname, f)));
const hourAgo = Date.now() - 3600_000;
for (const name of readdirSync(outdir)) {
  const file = path.join(outdir, name);
  if (!written.has(file) && statSync(file).mtimeMs < hourAgo) rmSync(file, { force: true });
}
chmodSync(new URL('git-tune.js', `file://${outdir}`), 0o755);
// The module-by-module build's entry stays runnable too (for debugging).
chmodSync(new URL('dist/cli/main.js', root), 0o755);
