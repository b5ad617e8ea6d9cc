import { promises as fs } from 'node:fs';
import path from 'node:path';
import { secretsOf } from '../../core/redact.js';
import { presetFromEnv, reportFailure, type Env, type ProgramIo } from './api-program.js';
import { judgeCase, JudgeReplyError, type JudgeCaseInput } from './judge-logic.js';
import { makeModel } from './llm/client.js';
import { ModelError } from './llm/types.js';
import { JUDGE_EXIT_DOWN } from '../../contracts/judge.js';
import { parseProseScope, readProseFiles } from './prose-files.js';
import { exitWhenSettled } from '../exit-when-settled.js';

/**
 * The judge presets `openai-chat` and `anthropic` (TUNE_PRESET says which):
 * a program that speaks the judge contract (docs/contracts.md) like any
 * user's judge, over ./judge-logic.ts. Exit 0 with TUNE_OUTPUT written, or
 * non-zero with the reason as stderr's last line: git-tune calls a failed
 * judge again with backoff (a rate limit, a server down) and makes the case
 * VOID for the judge when it still fails (src/core/judge-retry.ts). Config:
 *
 *   judge:
 *     preset: openai-chat        # or anthropic
 *     options: { model: gpt-4o-mini }
 */
const readJson = async (file: string, what: string): Promise<unknown> => {
  const text = await fs.readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${what} (${file}): ${e.code ?? e.message}`);
  });
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} (${file}) is not JSON: ${(e as Error).message}`);
  }
};

/** Runs the judge for the case git-tune names in `env`; the exit code. */
export async function runJudgeApi(env: Env, io: ProgramIo): Promise<number> {
  const chosen = presetFromEnv('judge', env);
  if ('error' in chosen) {
    io.err(chosen.error);
    return 2;
  }
  for (const name of ['TUNE_CASE', 'TUNE_RESULT', 'TUNE_OUTPUT']) {
    if (!env[name]) {
      io.err(`judge preset: ${name} is not set (git-tune sets TUNE_CASE, TUNE_RESULT and TUNE_OUTPUT)`);
      return 2;
    }
  }
  const root = env.TUNE_ROOT ?? process.cwd();
  let input;
  try {
    const item = (await readJson(env.TUNE_CASE!, 'the case')) as Parameters<typeof judgeCase>[1]['item'];
    // A result that cannot be read is still judged: the answer is missing, and the judge says so.
    const result = await readJson(env.TUNE_RESULT!, 'the result').catch((e: Error) => ({ answer: null, error: e.message }));
    const prose = await readProseFiles(root, parseProseScope(env.TUNE_PROSE_GLOBS));
    const transcript = env.TUNE_TRANSCRIPT ? await fs.readFile(env.TUNE_TRANSCRIPT, 'utf8').catch(() => null) : null;
    // A history that cannot be read leaves it out: the case is judged all the same.
    const history = env.TUNE_HISTORY ? ((await readJson(env.TUNE_HISTORY, 'the history').catch(() => null)) as JudgeCaseInput['history']) : null;
    input = { item, result: result as Record<string, unknown>, prose, transcript, history };
  } catch (e) {
    io.err(`judge preset: ${(e as Error).message}`);
    return 2;
  }
  const secrets = secretsOf(env);
  try {
    const model = io.model ?? makeModel(chosen.preset, chosen.options, env);
    const { output, calls } = await judgeCase(model, input);
    await fs.mkdir(path.dirname(env.TUNE_OUTPUT!), { recursive: true });
    await fs.writeFile(env.TUNE_OUTPUT!, `${JSON.stringify(output, null, 2)}\n`);
    const marks = Object.entries(output.rubric).map(([id, mark]) => `${id} ${mark}`).join(', ');
    io.out(`${input.item.id}: ${output.right ? 'right' : 'wrong'}${output.caseOnly ? ' (case only)' : ''}${marks ? ` [${marks}]` : ''}; ${output.proposals.length} proposal(s)${output.droppedProposals ? `, ${output.droppedProposals.length} dropped (not prose)` : ''}; ${calls} call(s)`);
    for (const d of output.droppedProposals ?? []) io.err(`judge preset: dropped a proposal for ${d.file}: ${d.reason}`);
    return 0;
  } catch (e) {
    reportFailure('judge', e, io, secrets, JudgeReplyError);
    // A refused key fails every later call alike: git-tune does not call this judge again.
    return e instanceof ModelError && e.kind === 'auth' ? JUDGE_EXIT_DOWN : 1;
  }
}

if (process.env.TUNE_OUTPUT && process.env.TUNE_RESULT && process.env.TUNE_PRESET) {
  exitWhenSettled(runJudgeApi(process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }), 'judge preset');
}
