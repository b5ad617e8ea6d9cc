// The shipped CLI: src/ bundled by esbuild into dist/bin/ (after tsc has
// type-checked it and written dist/ module by module, which tests and the
// benchmarks import).
//
// Why a bundle: a cold `git tune next` spent a third of its time resolving,
// reading and compiling some 150 modules of ours and our dependencies'
// (BENCHMARKS.md). Three kinds of file, all CommonJS (a package.json of
// dist/bin/ says so): an ES-module entry cost every command ~3.5 ms, Node's
// ESM loader and its facade of node:fs (which loads the streams);
// - git-tune.js, the entry (src/cli/bin.ts): small, so `--version` answers
//   before anything else loads;
// - cli.cjs, the whole program as one CommonJS file, which the entry compiles
//   through V8's code cache (src/cli/code-cache.ts): Node 20 keeps no compiled
//   code for ES modules, and V8 takes cached code for a script. Modules the
//   program imports lazily stay lazy (esbuild runs a module's body on first
//   import), so a command pays only for running what it uses;
// - next.cjs, the warm `git tune next` (src/cli/next-kept.ts): the answer kept
//   for the tip, tried by the entry before it loads cli.cjs, through its own
//   code cache;
// - the presets' programs (`./<program>.js`: runner, judge and editor), run as processes of their own.
//
// Layout: dist/bin/ sits at the same depth as dist/cli/, so the paths our code
// takes from import.meta.url (`../../package.json`, `../../templates`,
// `../../hooks`) hold in both.
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const outdir = path.join(root, 'dist/bin');

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  minifySyntax: true,
  minifyWhitespace: true,
  // Names kept: error classes and stack traces stay readable.
  minifyIdentifiers: false,
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
};

// The build's id, which keys the fold cache (src/app/cache.ts): a hash of the
// bundle's own text, written into it in place of this placeholder once the
// text is final (same length, so the source map's columns hold).
const BUILD_ID_PLACEHOLDER = 'git-tune-build-id-0000000000000000000000';

// import.meta.url as a CommonJS module has it (the file's own URL); read by the paths above.
const commonJs = {
  format: 'cjs',
  define: { 'import.meta.url': '__importMetaUrl' },
  banner: { js: 'var __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
};

// Node's builtins that a short command rarely uses but that cost a start
// their load (node:crypto and node:child_process, with the streams and net
// they pull in, ~2 ms of a warm `next`): in the bundles each is an object
// whose properties load the module on first use (so a module's top level
// must not read them: src/core/steps.ts, src/git/identity.ts). The names are this Node's (the
// build's): a name a later Node adds is simply not there to import.
// Bare names too: a dependency's `require('crypto')` is the same module.
const LAZY_BUILTINS = ['node:crypto', 'node:child_process', 'node:zlib', 'crypto', 'child_process', 'zlib'];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(${LAZY_BUILTINS.map((m) => m.replace(/[:]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) => (args.namespace === 'lazy-builtin' ? { path: args.path, external: true } : { path: args.path, namespace: 'lazy-builtin' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const names = Object.keys(await import(args.path)).filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
      const getters = names.map((n) => `  ${n}: { get: () => load().${n}, enumerable: true },`).join('\n');
      return {
        loader: 'js',
        contents: `let mod;\nconst load = () => (mod ??= require(${JSON.stringify(args.path)}));\nmodule.exports = Object.defineProperties({}, {\n${getters}\n});\n`,
      };
    });
  },
};

/** A bundle the entry loads through the code cache (`<name>.cjs`), carrying a build id. */
const cjsBundle = (name, entry, buildId) => build({
  ...common,
  ...commonJs,
  plugins: [lazyBuiltins],
  entryPoints: { [name]: entry },
  outExtension: { '.js': '.cjs' },
  define: { ...commonJs.define, GIT_TUNE_BUILD_ID: JSON.stringify(buildId) },
});

const program = await cjsBundle('cli', 'src/cli/program.ts', BUILD_ID_PLACEHOLDER);

// esbuild writes ASCII everywhere but inside regular expressions (ours and
// isomorphic-git's hold a few): one non-ASCII character makes V8 hold the
// whole file as a two-byte string, read in 7 ms instead of 1. A \u escape
// means the same character there (and in a kept comment).
const toAscii = (text) => text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const cli = path.join(outdir, 'cli.cjs');
const ascii = toAscii(readFileSync(cli, 'utf8'));
if (!ascii.includes(BUILD_ID_PLACEHOLDER)) throw new Error('the build id placeholder is missing from cli.cjs: is GIT_TUNE_BUILD_ID still read?');
const buildId = createHash('sha256').update(ascii).digest('hex').slice(0, BUILD_ID_PLACEHOLDER.length);
writeFileSync(cli, ascii.replaceAll(BUILD_ID_PLACEHOLDER, buildId));

// The warm `next` (src/cli/next-kept.ts): the answer kept for the tip, read by a bundle of its own before the
// program loads. It reads the memo the program wrote, so it carries the program's build id.
const nextKept = await cjsBundle('next', 'src/cli/next-kept.ts', buildId);
const nextFile = path.join(outdir, 'next.cjs');
writeFileSync(nextFile, toAscii(readFileSync(nextFile, 'utf8')));
const contentHash = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

const entries = await build({
  ...common,
  plugins: [lazyBuiltins],
  entryPoints: {
    'git-tune': 'src/cli/bin.ts',
    // The presets' programs (src/run/presets/index.ts names them per role).
    'runner-api': 'src/run/presets/runner-api.ts',
    'runner-cli': 'src/run/presets/runner-cli.ts',
    'judge-api': 'src/run/presets/judge-api.ts',
    'editor-api': 'src/run/presets/editor-api.ts',
    'editor-cli': 'src/run/presets/editor-cli.ts',
  },
  ...commonJs,
  // The entry loads cli.cjs by path (never by import) and keys its code cache by cli.cjs's hash.
  define: { ...commonJs.define, GIT_TUNE_PROGRAM_HASH: JSON.stringify(contentHash(cli)), GIT_TUNE_NEXT_HASH: JSON.stringify(contentHash(nextFile)) },
});
// The package is "type": "module"; its .js files here are CommonJS.
const binPackage = path.join(outdir, 'package.json');
writeFileSync(binPackage, `${JSON.stringify({ type: 'commonjs' })}\n`);

// Whatever an earlier build left (its chunks) goes.
const written = new Set([entries, program, nextKept].flatMap((b) => Object.keys(b.metafile.outputs)).map((f) => path.resolve(root, f)).concat(binPackage));
for (const name of readdirSync(outdir)) {
  const file = path.join(outdir, name);
  if (!written.has(file)) rmSync(file, { force: true, recursive: true });
}
chmodSync(path.join(outdir, 'git-tune.js'), 0o755);
// The module-by-module build's entry stays runnable too (for debugging).
chmodSync(path.join(root, 'dist/cli/main.js'), 0o755);
