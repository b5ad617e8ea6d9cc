import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ATTRIBUTE_LINES, MERGE_DRIVER_NAME, mergeGenerated } from '../core/merge-driver.js';
import type { Env } from '../git/identity.js';
import { mergeFile } from '../git/native-commands.js';
import type { GitRepo } from '../git/types.js';

/**
 * The merge driver git-tune installs beside its hooks (docs/git-model.md#merge-driver),
 * so native `git revert` and `git cherry-pick` of a step never stop on a
 * conflict in a file git-tune generates.
 *
 * Decisions:
 * - Local, like the hooks: the attribute lines go into `.git/info/attributes`
 *   and the driver into `.git/config` (`[merge "git-tune"]`), both written by
 *   `git tune init` and `git tune hooks install`, both removed by `git tune
 *   hooks uninstall`. Nothing is committed: the driver an attribute names
 *   lives in `.git/config`, which no clone receives, so a committed
 *   `.gitattributes` would do nothing until the clone installs anyway, while
 *   it would put a file outside `.tune/` into every tuning's pull request
 *   (and a merge into the user's own `.gitattributes`).
 * - The driver finds git-tune as the hooks do (on PATH, else the project's
 *   node_modules/.bin), then at this very install (the node and script that
 *   installed it, when still there), and when none is found runs git's own
 *   line merge: never worse than no driver.
 */
const packageDir = (...parts: string[]) => fileURLToPath(new URL(`../../${parts.join('/')}`, import.meta.url));

export const ATTRIBUTES_MARKER = '# git-tune: its generated files merge with its own driver (`git tune hooks uninstall` removes these lines)';

/** Quoted for sh: one word whatever it holds. */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The driver's command line as git runs it (through sh, with %O %A %B %P
 * replaced: base, ours where the result goes, theirs, the path).
 */
export function driverCommand(node = process.execPath, script = packageDir('dist', 'bin', 'git-tune.js')): string {
  const body = [
    'n=$1; j=$2; shift 2',
    'if command -v git-tune >/dev/null 2>&1; then exec git-tune merge-driver "$@"; fi',
    't=$(git rev-parse --show-toplevel 2>/dev/null)',
    'if [ -n "$t" ] && [ -x "$t/node_modules/.bin/git-tune" ]; then exec "$t/node_modules/.bin/git-tune" merge-driver "$@"; fi',
    'if [ -f "$j" ] && [ -x "$n" ]; then exec "$n" "$j" merge-driver "$@"; fi',
    'exec git merge-file -L ours -L base -L theirs "$2" "$1" "$3"',
  ].join('; ');
  return `sh -c ${sq(body)} git-tune-merge-driver ${sq(node)} ${sq(script)} %O %A %B %P`;
}

export type DriverChange = 'installed' | 'updated' | 'unchanged' | 'removed' | 'absent';

export interface MergeDriverOutcome {
  /** `.git/info/attributes`, absolute. */
  attributes: string;
  config: DriverChange;
  attributeLines: DriverChange;
}

const CONFIG_SECTION = `merge.${MERGE_DRIVER_NAME}`;

async function attributesFile(repo: GitRepo, env: Env): Promise<string> {
  return repo.gitPath('info/attributes', env);
}

const isOurLine = (line: string) => line === ATTRIBUTES_MARKER || (ATTRIBUTE_LINES as readonly string[]).includes(line.trim());

export async function installMergeDriver(repo: GitRepo, env: Env): Promise<MergeDriverOutcome> {
  const command = driverCommand();
  const before = await repo.configGet(`${CONFIG_SECTION}.driver`, env);
  let config: DriverChange = 'unchanged';
  if (before !== command) {
    await repo.configSet(`${CONFIG_SECTION}.name`, 'git-tune: the files it generates, merged from the branch tip (README.md, USAGE.md)', env);
    await repo.configSet(`${CONFIG_SECTION}.driver`, command, env);
    config = before === null ? 'installed' : 'updated';
  }
  const file = await attributesFile(repo, env);
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n');
  let attributeLines: DriverChange = 'unchanged';
  if (!ATTRIBUTE_LINES.every((l) => lines.includes(l))) {
    const kept = lines.filter((l) => !isOurLine(l));
    while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
    const next = [...kept, ...(kept.length ? [''] : []), ATTRIBUTES_MARKER, ...ATTRIBUTE_LINES, ''].join('\n');
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, next);
    attributeLines = lines.some(isOurLine) ? 'updated' : 'installed';
  }
  return { attributes: file, config, attributeLines };
}

export async function uninstallMergeDriver(repo: GitRepo, env: Env): Promise<MergeDriverOutcome> {
  const config: DriverChange = (await repo.configRemoveSection(CONFIG_SECTION, env)) ? 'removed' : 'absent';
  const file = await attributesFile(repo, env);
  const text = await fs.readFile(file, 'utf8').catch(() => null);
  let attributeLines: DriverChange = 'absent';
  if (text !== null && text.split('\n').some(isOurLine)) {
    const kept = text.split('\n').filter((l) => !isOurLine(l));
    while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
    await fs.writeFile(file, kept.length ? `${kept.join('\n')}\n` : '');
    attributeLines = 'removed';
  }
  return { attributes: file, config, attributeLines };
}

/**
 * `git-tune merge-driver <base> <ours> <theirs> <path>`, run by git: the
 * merged file written into `ours`; true when clean, false when it holds
 * conflict markers (git then stops as for any conflict).
 */
export async function runMergeDriver(cwd: string, env: Env, files: { base: string; ours: string; theirs: string; path: string }): Promise<boolean> {
  const read = (f: string) => fs.readFile(path.resolve(cwd, f), 'utf8');
  let outcome;
  try {
    const [base, ours, theirs] = await Promise.all([read(files.base), read(files.ours), read(files.theirs)]);
    // git hands an empty file for a side that does not have the path (an add/add).
    outcome = mergeGenerated(files.path, base === '' ? null : base, ours, theirs === '' ? null : theirs);
  } catch {
    outcome = { kind: 'fallback' } as const;
  }
  if (outcome.kind === 'fallback') return mergeFile(cwd, files.ours, files.base, files.theirs, env);
  await fs.writeFile(path.resolve(cwd, files.ours), outcome.text);
  return outcome.kind === 'merged';
}
