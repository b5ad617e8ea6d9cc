// The layers (docs/design.md), checked by `npm run lint:layers` (run by `npm test`):
// - src/core decides: it imports only src/core and src/contracts, and no Node module that does I/O;
// - src/run runs cases: it imports nothing from src/app;
// - src/faults (crash points) imports nothing of ours, so app, run and git can all mark them;
// - src/git is the only git toucher: the only importer of isomorphic-git and of the git
//   runner (src/git/native.ts, which spawns `git`); only src/git and src/run (the runner,
//   judge and editor processes) spawn processes at all; src/git imports no upper layer;
// - src/app never imports src/cli; src/contracts imports only contracts.
// An exception (pathNot) names each crossing allowed, with why.
const IO = '^(node:)?(fs|fs/promises|child_process|net|http|https|http2|dgram|dns|dns/promises|os|readline|tty|worker_threads|cluster|vm|module|inspector|process|repl)$';
const SPAWN = '^(node:)?child_process$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-core-and-contracts',
      comment: 'src/core is pure decisions: it reads only other core modules and the contracts (schemas).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/(core|contracts)/' },
    },
    {
      name: 'core-does-no-io',
      comment: 'src/core does no I/O: no file system, processes, network, OS or module loading (hashing and paths are pure).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { dependencyTypes: ['core'], path: IO },
    },
    {
      name: 'run-imports-no-app',
      comment: 'src/run runs cases for src/app, never the other way round.',
      severity: 'error',
      from: { path: '^src/run/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'faults-import-nothing',
      comment: 'src/faults (crash points for the crash tests) sits below every layer that writes (app, run, git): it imports nothing of ours.',
      severity: 'error',
      from: { path: '^src/faults/' },
      to: { path: '^src/', pathNot: '^src/faults/' },
    },
    {
      name: 'only-cli-imports-cli',
      comment: 'src/app returns data and src/cli renders it (reports, the CI summary, the live view): nothing below the CLI imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-git-imports-isomorphic-git',
      comment: 'isomorphic-git stays behind the GitRepo port (src/git).',
      severity: 'error',
      from: { pathNot: '^src/git/' },
      to: { path: '(^|/)node_modules/isomorphic-git/' },
    },
    {
      name: 'only-git-runs-git',
      comment: 'Only src/git runs `git` (src/git/native.ts): push, fetch, switch, status and config are GitRepo methods.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/git/' },
      to: { path: '^src/git/native\\.ts$' },
    },
    {
      name: 'git-imports-no-upper-layer',
      comment: 'src/git is below app, cli and run, and knows no schema (src/contracts).',
      severity: 'error',
      from: { path: '^src/git/' },
      to: { path: '^src/(app|cli|run|contracts)/' },
    },
    {
      name: 'git-imports-no-decisions',
      comment: 'src/git takes no decision of src/core. Allowed crossings: shell quoting (core/argv.ts) for the commands a lock message names, and the names of a tuning\'s local files (core/paths.ts: where the lock lives).',
      severity: 'error',
      from: { path: '^src/git/' },
      to: { path: '^src/core/', pathNot: '^src/core/(argv|paths)\\.ts$' },
    },
    {
      name: 'app-imports-no-cli',
      comment: 'src/app is the use cases; src/cli calls them and renders, never the other way round.',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'contracts-import-contracts',
      comment: 'src/contracts holds the schemas: it imports other contracts only (and zod). Allowed crossing: the case-id rule (core/names.ts) the dataset schema checks ids with.',
      severity: 'error',
      from: { path: '^src/contracts/' },
      to: { path: '^src/', pathNot: ['^src/contracts/', '^src/core/names\\.ts$'] },
    },
    {
      name: 'only-git-and-run-spawn',
      comment: 'Processes are spawned by src/git (git) and src/run (runner, judge, editor, presets) only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(git|run)/' },
      to: { dependencyTypes: ['core'], path: SPAWN },
    },
  ],
  options: {
    // Unchanged files are not parsed again (keyed by their content): ~1.8 s instead of ~3 s after a first run.
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    moduleSystems: ['es6'],
  },
};
