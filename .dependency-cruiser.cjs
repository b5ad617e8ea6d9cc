// The layers (docs/design.md), checked by `npm run lint:layers` (run by `npm test`):
// - src/core decides: it imports only src/core and src/contracts, and no Node module that does I/O;
// - src/run runs cases: it imports nothing from src/app;
// - src/git is the only git toucher: the only importer of isomorphic-git and of the git
//   runner (src/git/native.ts, which spawns `git`); only src/git and src/run (the runner,
//   judge and editor processes) spawn processes at all.
// An exception names each crossing today's code has; issue 16 removes them, and with them the exception.
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
      from: { path: '^src/run/', pathNot: '^src/run/(logs|store)\\.ts$' },
      to: { path: '^src/app/' },
    },
    {
      name: 'run-imports-no-app-but-crash-points',
      comment: 'Allowed crossing, to be removed by issue 16: the run store and logs mark crash points (src/app/crash.ts) for the crash tests.',
      severity: 'error',
      from: { path: '^src/run/(logs|store)\\.ts$' },
      to: { path: '^src/app/', pathNot: '^src/app/crash\\.ts$' },
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
      comment: 'Only src/git runs `git` (src/git/native.ts). Allowed crossings, to be removed by issue 16 (push, fetch, switch, status and config join the GitRepo port): ' +
        'app/hooks, app/demo, app/auto, cli/commands/sync and cli/commands/pr call runGit.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/git/', '^src/app/(hooks|demo|auto)\\.ts$', '^src/cli/commands/(sync|pr)\\.ts$'] },
      to: { path: '^src/git/native\\.ts$' },
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
