import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { matcher } from '../../core/glob.js';
import { secretsOf } from '../../core/redact.js';
import { presetFromEnv, reportFailure, type Env, type ProgramIo } from './api-program.js';
import { editorProposalSchema, editProse, EditorReplyError } from './editor-logic.js';
import { makeModel } from './llm/client.js';
import { parseProseScope, readProseFiles } from './prose-files.js';
import { issuesText } from './prompt-text.js';
import { exitWhenSettled } from '../exit-when-settled.js';

/**
 * The editor presets `openai-chat` and `anthropic` (TUNE_PRESET says which):
 * a program that speaks the editor contract (docs/contracts.md) like any
 * user's editor, over ./editor-logic.ts. Run in the repository root once
 * per graded run: it edits prose files in place (only those this half may
 * change) and writes changes.md with an `Aims:` line; with nothing to
 * change it writes nothing and exits 0 (the half is over). A patch that
 * still fails after being asked again exits non-zero, the reason as
 * stderr's last line (git-tune's editor-failed error shows it). Config:
 *
 *   editor:
 *     preset: openai-chat        # or anthropic
 *     options: { model: gpt-4o-mini }
 */
export async function runEditorApi(env: Env, io: ProgramIo): Promise<number> {
  const chosen = presetFromEnv('editor', env);
  if ('error' in chosen) {
    io.err(chosen.error);
    return 2;
  }
  for (const name of ['TUNE_PROPOSALS', 'TUNE_CHANGES']) {
    if (!env[name]) {
      io.err(`editor preset: ${name} is not set (git-tune sets TUNE_FINDINGS, TUNE_PROPOSALS, TUNE_CHANGES and TUNE_HALF)`);
      return 2;
    }
  }
  const root = env.TUNE_ROOT ?? process.cwd();
  const half = env.TUNE_HALF === 'mem' ? 'mem' : 'nomem';
  let input;
  try {
    const scope = parseProseScope(env.TUNE_PROSE_GLOBS);
    const findings = env.TUNE_FINDINGS ? await fs.readFile(env.TUNE_FINDINGS, 'utf8').catch(() => '') : '';
    const raw = JSON.parse(await fs.readFile(env.TUNE_PROPOSALS!, 'utf8')) as unknown;
    const proposals = z.array(editorProposalSchema).safeParse(raw);
    if (!proposals.success) throw new Error(`TUNE_PROPOSALS is not a list of {file, change, why, expect, cases}: ${issuesText(proposals.error)}`);
    // In a with-memory half only the memory-policy files may change (docs/auto.md).
    const mayEdit = matcher(half === 'mem' ? scope.memoryPolicy : [...scope.prose, ...scope.memoryPolicy]);
    input = { findings, proposals: proposals.data, half, prose: await readProseFiles(root, scope), mayEdit } as const;
  } catch (e) {
    io.err(`editor preset: ${(e as Error).message}`);
    return 2;
  }
  const secrets = secretsOf(env);
  try {
    const model = io.model ?? makeModel(chosen.preset, chosen.options, env);
    const plan = await editProse(model, input);
    if (plan === null) {
      io.out(`editor preset: nothing to change after this run (${input.proposals.length} proposal(s) read)`);
      return 0;
    }
    for (const file of plan.files) {
      await fs.mkdir(path.dirname(path.join(root, file.path)), { recursive: true });
      await fs.writeFile(path.join(root, file.path), file.text);
    }
    // changes.md may hold an earlier edit's text: this edit's is added after it (git-tune reads what is new).
    const earlier = await fs.readFile(env.TUNE_CHANGES!, 'utf8').catch(() => null);
    const text = earlier === null || earlier === '' ? plan.changes : `${earlier}${earlier.endsWith('\n') ? '' : '\n'}\n${plan.changes}`;
    await fs.mkdir(path.dirname(env.TUNE_CHANGES!), { recursive: true });
    await fs.writeFile(env.TUNE_CHANGES!, text);
    io.out(`editor preset: changed ${plan.files.map((f) => f.path).join(', ')}; aims ${plan.aims.join(', ') || 'none named'}; ${plan.calls} call(s)`);
    return 0;
  } catch (e) {
    reportFailure('editor', e, io, secrets, EditorReplyError);
    return 1;
  }
}

if (process.env.TUNE_CHANGES && process.env.TUNE_PROPOSALS && process.env.TUNE_PRESET) {
  exitWhenSettled(runEditorApi(process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }), 'editor preset');
}
