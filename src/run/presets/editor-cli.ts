import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { cliOptionsSchema } from '../../contracts/presets.js';
import { matcher } from '../../core/glob.js';
import { caseHome, defaultBin, jsonLines, lastLines, onStdin, readClaude, readCodex, runCli, type AgentCli, type CliCall } from './agent-cli.js';
import { env } from './common.js';
import { filesUnder } from '../files.js';

/**
 * Editor presets `claude-code` and `codex`: the agent CLI run once in the
 * repository root with a prompt made of the findings (TUNE_FINDINGS), the
 * merged proposals (TUNE_PROPOSALS) and the list of files it may change: the
 * prose and memory-policy globs (TUNE_PROSE_GLOBS), the memory-policy ones
 * alone in a with-memory half (TUNE_HALF=mem). It is told to write
 * TUNE_CHANGES with an `Aims:` line; when it changed prose and wrote none,
 * this preset writes one, aiming at the proposals' cases.
 *
 * Limits: claude gets file tools only, its edits allowed on the prose globs
 * and changes.md alone (`--allowedTools` permission rules) and no shell;
 * codex runs under `--sandbox workspace-write` (it may write anywhere in the
 * repository). Either way git-tune puts back whatever it changed outside
 * the files its half may change, and says so (src/app/editor.ts).
 */

const SKIP_DIRS = new Set(['.git', 'node_modules', '.tune']);

/** The repository's files the globs match (the tool's own .tune/ never). */
export async function filesMatching(root: string, globs: readonly string[]): Promise<string[]> {
  if (globs.length === 0) return [];
  return (await filesUnder(root, '', { skip: SKIP_DIRS })).filter(matcher(globs));
}

interface Proposal {
  file?: string;
  change?: string;
  cases?: string[];
}

/** The editor's prompt: what fell short, what the judge proposes, and the only files it may change. */
export function editorPrompt(input: {
  run: string; half: 'nomem' | 'mem'; findings: string; proposals: string; files: readonly string[]; globs: readonly string[]; changes: string;
}): string {
  return [
    'You edit the prose of an LLM agent (its prompts, rules and skills: plain text files the agent reads).',
    `The agent was run on a batch of test cases (run ${input.run}) and fell short; your edit should make it do better on them without overfitting to their exact wording.`,
    '',
    '## Findings of the run',
    input.findings.trim() || '(none)',
    '',
    '## Changes the judge proposes (merged; JSON: file, change, why, expect, cases)',
    input.proposals.trim() || '[]',
    '',
    '## Files you may change',
    ...(input.files.length > 0 ? input.files.map((f) => `- ${f}`) : ['(none exist yet)']),
    `A new file is allowed only if its path matches: ${input.globs.join(', ')}.`,
    ...(input.half === 'mem' ? ['This is a with-memory half: only the memory-policy files above may change (how the agent saves and uses its memory).'] : []),
    'Change no other file: anything else you change is put back.',
    '',
    '## What to do',
    'Read the files, make the smallest edits that address the findings and the proposals, and keep the rules that already work.',
    `Then write ${input.changes}: a short markdown note of what you changed and why, with one line \`Aims: <case ids, comma-separated>\` naming the cases the edit is meant to fix.`,
  ].join('\n');
}

/** The CLI's arguments for the editor: claude limited to file tools on the allowed files, codex in its workspace-write sandbox. */
export function editorArgs(cli: AgentCli, prompt: string, root: string, globs: readonly string[], changes: string, args: readonly string[]): CliCall {
  const big = onStdin(prompt);
  const stdin = big ? { stdin: prompt } : {};
  if (cli === 'claude-code') {
    // Permission rules: `//` starts an absolute path; globs as gitignore reads them.
    const may = [...globs.filter((g) => !g.startsWith('!')).map((g) => `/${path.join(root, g)}`), `/${changes}`];
    const allowed = ['Read', 'Glob', 'Grep', 'LS', ...may.flatMap((p) => [`Edit(${p})`, `Write(${p})`])];
    return { args: ['-p', '--output-format', 'stream-json', '--verbose', '--allowedTools', allowed.join(','), '--disallowedTools', 'Bash', ...args, ...(big ? [] : ['--', prompt])], ...stdin };
  }
  return { args: ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', '-C', root, ...args, ...(big ? ['-'] : ['--', prompt])], ...stdin };
}

/** The contents of files, to see which changed. */
function snapshot(root: string, files: readonly string[]): Map<string, string | null> {
  return new Map(files.map((f) => [f, existsSync(path.join(root, f)) ? readFileSync(path.join(root, f), 'utf8') : null]));
}

async function main(): Promise<void> {
  const cli = (process.env.TUNE_PRESET ?? 'claude-code') as AgentCli;
  const parsed = cliOptionsSchema().safeParse(JSON.parse(process.env.TUNE_PRESET_OPTIONS ?? '{}'));
  if (!parsed.success) throw new Error(`the ${cli} preset's options are not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const opts = parsed.data;
  const root = path.resolve(env('TUNE_ROOT'));
  const changes = env('TUNE_CHANGES');
  const half = process.env.TUNE_HALF === 'mem' ? 'mem' : 'nomem';
  const scope = JSON.parse(process.env.TUNE_PROSE_GLOBS ?? '{"prose":[],"memoryPolicy":[]}') as { prose: string[]; memoryPolicy: string[] };
  const globs = half === 'mem' ? scope.memoryPolicy : [...scope.prose, ...scope.memoryPolicy];
  if (globs.length === 0) {
    // Nothing this half may change: an editor that changes nothing ends the half (docs/design.md), no failure.
    process.stdout.write(`${cli} editor: nothing to edit (the tuning has no ${half === 'mem' ? 'memoryPolicy' : 'prose'} globs)\n`);
    return;
  }
  const files = await filesMatching(root, globs);
  const proposalsText = await fs.readFile(env('TUNE_PROPOSALS'), 'utf8');
  const prompt = editorPrompt({
    run: process.env.TUNE_RUN ?? 'the last run', half,
    findings: await fs.readFile(env('TUNE_FINDINGS'), 'utf8').catch(() => ''),
    proposals: proposalsText, files, globs, changes: path.relative(root, changes),
  });
  const before = snapshot(root, files);
  const hadChanges = existsSync(changes) ? readFileSync(changes, 'utf8') : null;
  const bin = opts.bin ?? defaultBin(cli);
  const home = caseHome(cli, opts);
  let child: ReturnType<typeof runCli>;
  try {
    child = runCli(bin, { ...editorArgs(cli, prompt, root, globs, changes, opts.args), env: home.env }, root);
  } finally {
    home.remove();
  }
  if (child.spawnError) throw new Error(`${bin} could not start: ${child.spawnError} (install it, or name it with options.bin)`);
  const events = jsonLines(child.stdout);
  const run = events === null ? null : cli === 'claude-code' ? readClaude(events, null) : readCodex(events, null, opts);
  if (child.status !== 0 || run === null || 'unreadable' in run || run.error !== undefined) {
    const why = run && !('unreadable' in run) && run.error ? run.error : lastLines(child.stderr) || 'no JSON output';
    throw new Error(`${bin} failed (exit ${child.status}): ${why}`);
  }
  const now = await filesMatching(root, globs);
  const after = snapshot(root, [...new Set([...files, ...now])]);
  const changed = [...after].filter(([f, text]) => before.get(f) !== text).map(([f]) => f);
  const written = existsSync(changes) ? readFileSync(changes, 'utf8') : null;
  if (changed.length > 0 && (written === null || written === hadChanges || !/^\s*(?:[-*]\s*)?\**Aims\**\s*:/im.test(written))) {
    // The agent changed prose but wrote no changes.md (or one without its Aims line): the proposals say what it was asked for.
    let proposals: Proposal[] = [];
    try {
      const value = JSON.parse(proposalsText) as unknown;
      if (Array.isArray(value)) proposals = value as Proposal[];
    } catch {
      // No proposals to take aims from.
    }
    const aims = [...new Set(proposals.flatMap((p) => (Array.isArray(p.cases) ? p.cases.filter((c) => typeof c === 'string') : [])))];
    const note = written !== null && written !== hadChanges
      ? written.trimEnd()
      : `# Changes\n\nThe ${cli} editor changed ${changed.join(', ')}${run.answer ? `:\n\n${run.answer.trim()}` : '.'}`;
    await fs.mkdir(path.dirname(changes), { recursive: true });
    await fs.writeFile(changes, `${note}\n${aims.length > 0 ? `\nAims: ${aims.join(', ')}\n` : ''}`);
  }
  const cost = run.usage.reduce((s, u) => s + u.costUsd, 0);
  process.stdout.write(`${cli} editor: changed ${changed.length > 0 ? changed.join(', ') : 'nothing'}; ${run.llmCalls} model calls, ${run.toolCalls} tool calls, $${cost.toFixed(4)}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`editor-cli: ${err.message}\n`);
  process.exit(1);
});
