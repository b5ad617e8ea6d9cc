import type { NextStep } from '../core/next.js';
import { branchRef } from '../core/names.js';
import { chooseBackend, findRepo } from '../git/find-repo.js';
import { NativeGitRepo } from '../git/native-repo.js';
import { finishInterruptedSteps } from './recover.js';
import { tagsSettledAt } from './tags-settled.js';
import { keptAt, MEMO } from './tip-memo.js';
import { resolveTuningName } from './tuning-name.js';

/**
 * The warm `git tune next`: the command's start as every command makes it
 * (a step a killed command left half-applied is finished, src/app/recover.ts),
 * then the answer kept for the branch tip by this build (src/app/tip-memo.ts),
 * without loading the program, the fold or the config's schema. Null when
 * only the whole program can answer (`startTuning`, then `nextFor`): no
 * answer kept for this tip and build, run tags not yet settled at this tip, a
 * repair to spell out (src/app/rewritten.ts), the isomorphic-git backend, or
 * anything the program reports as an error (no repository, no such tuning).
 * The answer is the one the program would give: `nextFor` keeps it per tip,
 * a pure function of the tip.
 */
export async function keptNext(cwd: string, env: NodeJS.ProcessEnv, requested?: string): Promise<NextStep | null> {
  try {
    if (chooseBackend(env) !== 'native') return null;
    const { dir, gitdir } = await findRepo(cwd);
    const repo = new NativeGitRepo(dir, gitdir);
    // Nothing kept for the tip: the program answers, and makes the start itself (looked up first, so the start is
    // made once; it is made twice only when the kept answer goes with it, below, and is idempotent).
    if ((await keptAnswer(repo, requested)) === null) return null;
    await finishInterruptedSteps(repo);
    // Read again after the start: finishing an interrupted import moves HEAD to its branch.
    return await keptAnswer(repo, requested);
  } catch {
    return null;
  }
}

async function keptAnswer(repo: NativeGitRepo, requested: string | undefined): Promise<NextStep | null> {
  const { name } = await resolveTuningName(repo, requested);
  const tip = await repo.resolveRef(branchRef(name));
  if (tip === null || !(await tagsSettledAt(repo.gitdir, name, tip))) return null;
  const step = keptAt(repo.gitdir, name, tip, MEMO.next) as NextStep | undefined;
  return step === undefined || step.kind === 'repair' ? null : step;
}
