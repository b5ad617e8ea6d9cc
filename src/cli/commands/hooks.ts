import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { HooksOutcome } from '../../app/hooks.js';
import { act, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from '../render-next.js';

export function register(program: CommandUnknownOpts): void {
  const hooks = program.command('hooks').description('the git hooks git-tune installs (chained with yours, never overwriting them), and the merge driver of its generated files');
  act(
    hooks
      .command('install')
      .description('install the hooks into the repository (respects core.hooksPath), and the merge driver of .tune/*/README.md and USAGE.md (.git/info/attributes, [merge "git-tune"] in .git/config), so native git revert and cherry-pick of a step do not conflict in them')
      .addOption(json()),
    install,
  );
  act(
    hooks
      .command('uninstall')
      .description('remove the hooks and restore the ones that were there; remove the merge driver')
      .addOption(json()),
    uninstall,
  );
  act(
    program
      .command('hook <name> [args...]', { hidden: true })
      .description('run by the installed git hooks'),
    hook,
  );
  act(
    program
      .command('merge-driver <base> <ours> <theirs> <path>', { hidden: true })
      .description('run by git as the merge driver of the files git-tune generates (.tune/<name>/README.md, USAGE.md)'),
    mergeDriver,
  );
}

const modules = () => Promise.all([import('../../app/hooks.js'), import('../../git/open.js')]);

function describe(o: HooksOutcome): string {
  const lines: string[] = [];
  if (o.installed.length) lines.push(`installed ${o.installed.join(', ')}`);
  if (o.chained.length) lines.push(`installed ${o.chained.join(', ')}, chained after the hooks that were there (kept as <name>.pre-git-tune)`);
  if (o.updated.length) lines.push(`updated ${o.updated.join(', ')}`);
  if (o.removed.length) lines.push(`removed ${o.removed.join(', ')}`);
  if (o.restored.length) lines.push(`restored the hooks that were there: ${o.restored.join(', ')}`);
  for (const s of o.skipped) lines.push(`left ${s.hook} alone: ${s.why}`);
  const md = o.mergeDriver;
  if (md && (md.config !== 'unchanged' || md.attributeLines !== 'unchanged') && !(md.config === 'absent' && md.attributeLines === 'absent')) {
    const verb = md.config === 'removed' || md.attributeLines === 'removed' ? 'removed' : 'installed';
    lines.push(`${verb} the merge driver for README.md and USAGE.md (${md.attributes}, [merge "git-tune"] in .git/config)`);
  }
  if (lines.length === 0) lines.push('nothing to do');
  return `${o.dir}: ${lines.join('; ')}`;
}

async function install(io: CommandIO, opts: { json?: boolean }): Promise<void> {
  const [{ installHooks }, { openRepo }] = await modules();
  const out = await installHooks(await openRepo(io.cwd), io.env);
  if (opts.json) printJson(io, out);
  else io.out(describe(out));
}

async function uninstall(io: CommandIO, opts: { json?: boolean }): Promise<void> {
  const [{ uninstallHooks }, { openRepo }] = await modules();
  const out = await uninstallHooks(await openRepo(io.cwd), io.env);
  if (opts.json) printJson(io, out);
  else io.out(describe(out));
}

/**
 * `git-tune merge-driver <base> <ours> <theirs> <path>`: the merged file into
 * <ours>, exit 0 when clean, 1 when it holds conflict markers (what git
 * expects of a driver). Anything unexpected leaves git's own line merge.
 */
async function mergeDriver(io: CommandIO, base: string, ours: string, theirs: string, file: string, _opts: unknown): Promise<void> {
  const { runMergeDriver } = await import('../../app/merge-driver.js');
  const clean = await runMergeDriver(io.cwd, io.env, { base, ours, theirs, path: file });
  if (!clean) process.exitCode = 1;
}

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve('');
    let data = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c) => (data += c));
    process.stdin.on('end', () => resolve(data));
    process.stdin.on('error', () => resolve(data));
  });
}

/**
 * `git-tune hook <name> [args...]`, run by the installed hooks. A hook never
 * stops a commit or a push for a reason of its own: problems are warnings.
 */
async function hook(io: CommandIO, name: string, args: string[], _opts: unknown): Promise<void> {
  const stdin = name === 'pre-push' ? await readStdin() : '';
  try {
    const [[{ clearHookState, messageHook, prePushRefspecs, pushAlong, tuningOnHead }, { openRepo }], { nextFor }, { startTuning }] = await Promise.all([
      modules(), import('../../app/decide.js'), import('../../app/tuning.js'),
    ]);
    const repo = await openRepo(io.cwd);
    const load = (tuning: string) => startTuning(repo, tuning);
    switch (name) {
      case 'prepare-commit-msg':
      case 'commit-msg': {
        const [file, source, sha] = args;
        if (!file) return;
        const r = await messageHook(repo, load, io.env, name, file, source, sha);
        if (r.forged.length > 0) io.err(`git-tune: removed trailers a hand commit cannot claim: ${r.forged.join('; ')}`);
        for (const w of r.plan?.warnings ?? []) io.err(`git-tune: warning: ${w}`);
        if (r.action === 'trailers' && name === 'commit-msg' && r.plan) io.err(`git-tune: this commit is ${r.plan.summary}`);
        return;
      }
      case 'post-commit': {
        await clearHookState(repo);
        const tuning = await tuningOnHead(repo);
        if (!tuning) return;
        const read = await load(tuning);
        const step = nextFor(read);
        // An amend of a step shows here first: with the command that puts it back (src/app/rewritten.ts).
        io.err(`git-tune next: ${renderNext(step.kind === 'repair' ? await (await import('../../app/rewritten.js')).withRepair(read, step) : step)}`);
        return;
      }
      case 'pre-push': {
        const [remote] = args;
        if (!remote) return;
        const specs = await prePushRefspecs(repo, stdin);
        if (specs.length === 0) return;
        await pushAlong(repo, io.env, remote, specs);
        io.err(`git-tune: pushed ${specs.map((s) => s.split(':')[0]).join(', ')} to ${remote} with the tuning branch`);
        return;
      }
      default:
        io.err(`git-tune: unknown hook ${name}: nothing done`);
    }
  } catch (err) {
    io.err(`git-tune: warning: the ${name} hook did nothing: ${(err as Error).message}`);
  }
}
