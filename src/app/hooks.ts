import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { handEditRun, latestGradedRun } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { planHandCommit as planHandCommitStep, revertedEdit, type HandCommitPlan } from '../core/hand-commit.js';
import { parseBranchName } from '../core/names.js';
import { sealOf, SEAL_TRAILER } from '../core/steps.js';
import { parseMessage, type Trailer } from '../core/trailers.js';
import type { Env } from '../git/identity.js';
import type { GitRepo } from '../git/types.js';
import { logsRef } from '../run/logs.js';
import type { Tuning } from './tuning.js';
import { localRoot, RUN_FILES, runFilePath } from '../core/paths.js';
import { installMergeDriver, uninstallMergeDriver, type MergeDriverOutcome } from './merge-driver.js';

/**
 * What git-tune installs into a repository: the git hooks of hooks/
 * (docs/reports.md) and the skill file for coding agents.
 *
 * Decisions:
 * - Installed into the directory git runs hooks from (`git rev-parse
 *   --git-path hooks`, so core.hooksPath is respected). A hook that is
 *   already there and is not ours is kept as `<name>.pre-git-tune`, and ours
 *   runs it first (with the same arguments and stdin), stopping when it
 *   fails; `git tune hooks uninstall` puts it back.
 * - The scripts are thin: they run `git-tune hook <name>` from PATH, else
 *   the repository's `node_modules/.bin/git-tune` (what `npx git-tune`
 *   would run, without npx's download), else nothing.
 * - Hooks act only on a tuning branch (`tune/<name>`) and never fail a
 *   commit or a push for a reason of their own: a problem is a warning.
 * - prepare-commit-msg and commit-msg give a hand commit its trailers: a
 *   revert of an edit is a `revert` step; a commit that touches prose after a
 *   graded run is an `edit` of that run (Tune-Aims from its changes.md); any
 *   other hand commit is a `note`. Tune-* lines already in the message are
 *   removed first (a hand commit cannot claim another step), and the block is
 *   sealed (Tune-Seal) as the tool's own steps are. With an editor, the
 *   trailers are added by commit-msg, after the message is written, so a
 *   message left empty still aborts the commit; prepare-commit-msg only
 *   shows them as a comment. Native `git revert` and `git cherry-pick` run
 *   prepare-commit-msg and post-commit only (git 2.39: no commit-msg unless
 *   the replay stopped on a conflict and is committed by hand), so
 *   prepare-commit-msg writes the trailers whenever the message has text.
 *   Merges and squashes are left alone, and so is a
 *   message that carries the very Tune-* trailers HEAD has (an amend, or a
 *   reuse of HEAD's message: `git commit --amend` cannot be told apart).
 * - post-commit prints the next step; pre-push pushes the tuning's run tags
 *   and logs ref with its branch, to the same remote (`--no-verify`, so it
 *   does not run again), leaving out what the push already carries.
 */
export const HOOK_NAMES = ['prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-push'] as const;
export type HookName = (typeof HOOK_NAMES)[number];
export const HOOK_MARKER = '# git-tune hook';
export const CHAINED_SUFFIX = '.pre-git-tune';

const packageDir = (...parts: string[]) => fileURLToPath(new URL(`../../${parts.join('/')}`, import.meta.url));

/** Where git runs hooks from for this repository. */
export async function hooksDir(repo: GitRepo, env: Env): Promise<string> {
  return repo.gitPath('hooks', env);
}

const exists = (p: string) => fs.lstat(p).then(() => true, () => false);
const isOurs = async (p: string) => (await fs.readFile(p, 'utf8').catch(() => '')).includes(HOOK_MARKER);

export interface HooksOutcome {
  dir: string;
  installed: string[];
  chained: string[];
  updated: string[];
  removed: string[];
  restored: string[];
  skipped: Array<{ hook: string; why: string }>;
  /** The merge driver for the generated files (src/app/merge-driver.ts), installed and removed with the hooks. */
  mergeDriver: MergeDriverOutcome | null;
}

const outcome = (dir: string): HooksOutcome => ({ dir, installed: [], chained: [], updated: [], removed: [], restored: [], skipped: [], mergeDriver: null });

export async function installHooks(repo: GitRepo, env: Env): Promise<HooksOutcome> {
  const dir = await hooksDir(repo, env);
  await fs.mkdir(dir, { recursive: true });
  const out = outcome(dir);
  for (const name of HOOK_NAMES) {
    const script = await fs.readFile(packageDir('hooks', name), 'utf8');
    const target = path.join(dir, name);
    const kept = `${target}${CHAINED_SUFFIX}`;
    if (await exists(target)) {
      if (await isOurs(target)) {
        if ((await fs.readFile(target, 'utf8')) === script) continue;
        out.updated.push(name);
      } else if (await exists(kept)) {
        out.skipped.push({ hook: name, why: `${name}${CHAINED_SUFFIX} is there already: move one of them away first` });
        continue;
      } else {
        await fs.rename(target, kept);
        out.chained.push(name);
      }
    } else out.installed.push(name);
    await fs.writeFile(target, script, { mode: 0o755 });
    await fs.chmod(target, 0o755);
  }
  out.mergeDriver = await installMergeDriver(repo, env);
  return out;
}

export async function uninstallHooks(repo: GitRepo, env: Env): Promise<HooksOutcome> {
  const dir = await hooksDir(repo, env);
  const out = outcome(dir);
  for (const name of HOOK_NAMES) {
    const target = path.join(dir, name);
    const kept = `${target}${CHAINED_SUFFIX}`;
    if (await exists(target)) {
      if (!(await isOurs(target))) {
        out.skipped.push({ hook: name, why: 'not installed by git-tune: left alone' });
        continue;
      }
      await fs.rm(target);
      out.removed.push(name);
    }
    if (await exists(kept)) {
      await fs.rename(kept, target);
      out.restored.push(name);
    }
  }
  out.mergeDriver = await uninstallMergeDriver(repo, env);
  return out;
}

// ---------------------------------------------------------------------------
// the agent skill

export const SKILL_PATH = '.claude/skills/git-tune/SKILL.md';

export function skillTemplate(): Promise<string> {
  return fs.readFile(packageDir('templates', 'skill', 'SKILL.md'), 'utf8');
}

/**
 * The skill file to add to the init commit, or why not: it is never written
 * over a different file of that name (committed or not).
 */
export async function skillToInstall(repo: GitRepo, base: string | null): Promise<{ path: string; content: string } | { skip: string }> {
  const content = await skillTemplate();
  const committed = base ? await repo.readBlobAt(base, SKILL_PATH) : null;
  const disk = await fs.readFile(path.join(repo.dir, SKILL_PATH), 'utf8').catch(() => null);
  for (const [where, text] of [['committed', committed === null ? null : Buffer.from(committed).toString('utf8')], ['in the working tree', disk]] as const) {
    if (text !== null && text !== content) return { skip: `${SKILL_PATH} exists ${where} with other content: left alone` };
  }
  if (committed !== null) return { skip: `${SKILL_PATH} is there already` };
  return { path: SKILL_PATH, content };
}

// ---------------------------------------------------------------------------
// the hooks themselves

/** The tuning checked out, or null: hooks act on tuning branches only. */
export async function tuningOnHead(repo: GitRepo): Promise<string | null> {
  const head = await repo.headRef();
  return head ? parseBranchName(head) : null;
}

const ZERO = /^0+$/;

/** Git's comment character (core.commentChar), `#` unless set to one character. */
async function commentChar(repo: GitRepo, env: Env): Promise<string> {
  const value = ((await repo.configGet('core.commentChar', env)) ?? '').trim();
  return value.length === 1 ? value : '#';
}

export type { HandCommitPlan };

/** The step a hand commit on the tuning branch is (src/core/hand-commit.ts), from what it stages. */
export async function planHandCommit(tuning: Tuning, message: string, env: Env): Promise<HandCommitPlan> {
  const { state, config, repo } = tuning;
  const isProse = matcher([...(config?.prose ?? []), ...(config?.memoryPolicy ?? [])]);
  const prose = revertedEdit(state, message) ? [] : (await repo.stagedPaths(env)).filter(isProse);
  const run = handEditRun(latestGradedRun(state), prose.length > 0);
  const changes = run ? await repo.readStaged(runFilePath(tuning.dir, run.name, RUN_FILES.changes), env) : null;
  return planHandCommitStep({ tuning: tuning.name, state, message, prose, isMemoryPolicy: matcher(config?.memoryPolicy ?? []), changes });
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]?(.*)$/;
const isTune = (line: string) => /^tune-[A-Za-z0-9-]*:/i.test(line);

export interface RewrittenMessage {
  text: string;
  /** Tune-* lines removed that the plan does not have (what the commit tried to claim). */
  forged: string[];
  changed: boolean;
}

/**
 * The message with `trailers` (sealed) as its last paragraph's trailers, and
 * every other Tune-* line of that paragraph gone. Comment lines and what
 * follows a scissors line stay where they are, after the text, so git's
 * clean-up leaves the trailers last. A message with no text yet gets the
 * trailers only as a comment (`hint`), so leaving it empty still aborts.
 */
export function rewriteMessage(raw: string, trailers: readonly Trailer[], cc: string, hint: boolean): RewrittenMessage {
  const lines = raw.replace(/\r\n/g, '\n').split('\n');
  const isComment = (l: string) => l.startsWith(cc);
  const scissors = lines.findIndex((l) => l.startsWith(cc) && / -+ >8 -+$/.test(l));
  const head = scissors < 0 ? lines : lines.slice(0, scissors);
  const tail = scissors < 0 ? [] : lines.slice(scissors);
  let last = -1;
  head.forEach((l, i) => {
    if (!isComment(l) && l.trim() !== '') last = i;
  });
  const ours = [...trailers.map(([k, v]) => `${k}: ${v}`)];
  if (last < 0) {
    if (!hint) return { text: raw, forged: [], changed: false };
    const note = [`${cc} git-tune adds these trailers when the message is written:`, ...ours.map((l) => `${cc}   ${l}`)];
    if (raw.includes(note[1]!)) return { text: raw, forged: [], changed: false };
    const text = ['', ...note, ...lines].join('\n');
    return { text, forged: [], changed: true };
  }
  const body = head.slice(0, last + 1).filter((l) => !isComment(l)).map((l) => l.replace(/\s+$/, ''));
  const rest = head.slice(last + 1);
  const paragraphs = body.join('\n').replace(/^\n+/, '').split(/\n{2,}/);
  let kept: string[] = [];
  const removed: string[] = [];
  if (paragraphs.length >= 2) {
    const lastPara = paragraphs[paragraphs.length - 1]!.split('\n');
    const remaining = lastPara.filter((l) => {
      if (isTune(l)) {
        removed.push(l.trim());
        return false;
      }
      return true;
    });
    if (remaining.length > 0 && remaining.every((l) => TRAILER_LINE.test(l))) {
      kept = remaining;
      paragraphs.pop();
    } else if (remaining.length === 0) paragraphs.pop();
    else paragraphs[paragraphs.length - 1] = remaining.join('\n');
  }
  const block: Trailer[] = [
    ...kept.map((l) => { const m = TRAILER_LINE.exec(l)!; return [m[1]!, m[2]!.trim()] as const; }),
    ...trailers,
  ];
  const sealed = [...block.map(([k, v]) => `${k}: ${v}`), `${SEAL_TRAILER}: ${sealOf(block)}`];
  const text = [...[...paragraphs, sealed.join('\n')].join('\n\n').split('\n'), ...rest, ...tail].join('\n');
  const normalizedText = text.endsWith('\n') ? text : `${text}\n`;
  const wanted = new Set(sealed);
  const forged = removed.filter((l) => !wanted.has(l) && !l.toLowerCase().startsWith(`${SEAL_TRAILER.toLowerCase()}:`));
  return { text: normalizedText, forged, changed: normalizedText !== raw };
}

/** The Tune-* trailers of a message (its last paragraph), as lines. */
function tuneTrailers(message: string): string[] {
  return parseMessage(message).trailers.filter(([k]) => /^tune-/i.test(k)).map(([k, v]) => `${k}: ${v}`);
}

export interface MessageHookResult {
  action: 'none' | 'hinted' | 'trailers';
  plan: HandCommitPlan | null;
  forged: string[];
  why?: string;
}

/**
 * What prepare-commit-msg learnt for commit-msg (which is not told the
 * message's source): whether this commit is an amend (`--amend`, or `-c`/`-C`
 * of HEAD, which git does not tell apart).
 */
const stateFile = (repo: GitRepo) => path.join(localRoot(repo.gitdir), 'hook-commit.json');

export async function clearHookState(repo: GitRepo): Promise<void> {
  await fs.rm(stateFile(repo), { force: true });
}

/** prepare-commit-msg and commit-msg: give the message its trailers. */
export async function messageHook(
  repo: GitRepo, loadTuning: (name: string) => Promise<Tuning>, env: Env,
  hook: 'prepare-commit-msg' | 'commit-msg', file: string, source?: string, sha?: string,
): Promise<MessageHookResult> {
  const none = (why: string): MessageHookResult => ({ action: 'none', plan: null, forged: [], why });
  const name = await tuningOnHead(repo);
  if (!name) return none('not on a tuning branch');
  const head = await repo.resolveRef('HEAD');
  let amend: boolean | null = null;
  if (hook === 'prepare-commit-msg') {
    amend = source === 'commit' && sha === head;
    await fs.mkdir(path.dirname(stateFile(repo)), { recursive: true });
    await fs.writeFile(stateFile(repo), `${JSON.stringify({ amend, head })}\n`);
  } else {
    const saved = await fs.readFile(stateFile(repo), 'utf8').then((t) => JSON.parse(t) as { amend: boolean; head: string | null }, () => null);
    await clearHookState(repo);
    if (saved && saved.head === head) amend = saved.amend;
  }
  // `git cherry-pick -e`, and a revert or cherry-pick committed after a conflict, say `merge`
  // too: a replay of one commit (CHERRY_PICK_HEAD, REVERT_HEAD), which is a hand commit here.
  const replaying = (await exists(path.join(repo.gitdir, 'CHERRY_PICK_HEAD'))) || (await exists(path.join(repo.gitdir, 'REVERT_HEAD')));
  if (source === 'squash' || (source === 'merge' && !replaying)) return none(`a ${source}`);
  if (await exists(path.join(repo.gitdir, 'MERGE_HEAD'))) return none('a merge');
  if (!head) return none('no commit yet');
  if (amend) return none('an amend');
  const raw = await fs.readFile(file, 'utf8');
  const cc = await commentChar(repo, env);
  const text = raw.split('\n').filter((l) => !l.startsWith(cc)).join('\n');
  if (amend === null) {
    // commit-msg without prepare-commit-msg's word: HEAD's very trailers mean an amend.
    const mine = tuneTrailers(text);
    const headTrailers = tuneTrailers((await repo.readCommit(head)).message);
    if (mine.length > 0 && mine.join('\n') === headTrailers.join('\n')) return none("HEAD's own trailers (an amend)");
  }
  const tuning = await loadTuning(name);
  const plan = await planHandCommit(tuning, text, env);
  const rewritten = rewriteMessage(raw, plan.trailers, cc, hook === 'prepare-commit-msg');
  if (rewritten.changed) await fs.writeFile(file, rewritten.text);
  const sealed = rewritten.text.split('\n').some((l) => l.startsWith(`${SEAL_TRAILER}:`));
  return { action: sealed ? 'trailers' : rewritten.changed ? 'hinted' : 'none', plan, forged: rewritten.forged };
}

/** pre-push: the run tags and logs ref a pushed tuning branch needs, minus those the push carries. */
export async function prePushRefspecs(repo: GitRepo, stdin: string): Promise<string[]> {
  const lines = stdin.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 4);
  const pushed = new Set(lines.map((p) => p[0]!));
  const specs: string[] = [];
  for (const [localRef, localSha] of lines) {
    const name = parseBranchName(localRef!);
    if (!name || ZERO.test(localSha!) || !localRef!.startsWith('refs/heads/')) continue;
    const tags = (await repo.listRefs(`refs/tags/tune/${name}`)).map((r) => r.ref).filter((r) => !pushed.has(r));
    if (tags.length > 0) specs.push(`refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`);
    const logs = logsRef(name);
    if (!pushed.has(logs) && (await repo.resolveRef(logs))) specs.push(`${logs}:${logs}`);
  }
  return [...new Set(specs)];
}

export async function pushAlong(repo: GitRepo, env: Env, remote: string, specs: readonly string[]): Promise<void> {
  await repo.push(remote, specs, { env, verify: false, quiet: true });
}
