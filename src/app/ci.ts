import { promises as fs } from 'node:fs';
import path from 'node:path';
import { branchName, tagRef } from '../core/names.js';
import { historyError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { openRepo } from '../git/open.js';
import { logsRef } from '../run/logs.js';
import { reportLine, type FinalReport } from './final.js';
import { startTuning, type Tuning } from './tuning.js';
import { packageVersion } from './version.js';

/**
 * The final check in CI (docs/ci.md): is the history all there, and the report
 * as GitHub Actions reads it (a job summary in $GITHUB_STEP_SUMMARY, step
 * outputs in $GITHUB_OUTPUT). Also the workflow templates `git tune init
 * --github` installs.
 */

/** What fetches the refs a plain clone (and actions/checkout) leaves behind. */
export const FETCH_TUNE_REFS = `git fetch origin '+refs/tune-logs/*:refs/tune-logs/*' 'refs/tags/tune/*:refs/tags/tune/*'`;

/**
 * Opens the tuning and refuses (exit 3) when its history is not all there:
 * a shallow clone (the fold needs every commit back to the init commit), a
 * run tag missing, or the logs ref missing while runs wrote logs. Each names
 * the fix for GitHub Actions and for a shell.
 */
export async function openCompleteTuning(cwd: string, env: Env): Promise<Tuning> {
  const repo = await openRepo(cwd, env as NodeJS.ProcessEnv);
  if (await repo.isShallow()) {
    throw historyError('shallow-clone', 'this is a shallow clone: the final check reads the tuning\'s whole history, and part of it was not fetched',
      `git fetch --unshallow origin '+refs/tune-logs/*:refs/tune-logs/*' 'refs/tags/tune/*:refs/tags/tune/*'`,
      [`in GitHub Actions: give actions/checkout \`fetch-depth: 0\`, then fetch the run tags and logs in a step of their own: ${FETCH_TUNE_REFS}`]);
  }
  const tuning = await startTuning(repo);
  const missing: string[] = [];
  let logsExpected = false;
  const messages = new Map(tuning.commits.map((c) => [c.oid, c.message]));
  for (const run of tuning.state.runs.values()) {
    if (!run.runOid) continue;
    if ((await repo.resolveRef(tagRef(tuning.name, run.name))) === null) missing.push(`tag ${tagRef(tuning.name, run.name).replace('refs/tags/', '')} (run ${run.name})`);
    // `git tune import` records runs without their logs; every run git-tune ran wrote them.
    if (!/^Imported from /m.test(messages.get(run.runOid) ?? '')) logsExpected = true;
  }
  if (logsExpected && (await repo.resolveRef(logsRef(tuning.name))) === null) missing.push(`${logsRef(tuning.name)} (the runs' logs)`);
  if (missing.length > 0) {
    throw historyError('history-incomplete', `${missing.length} ref${missing.length === 1 ? '' : 's'} of ${branchName(tuning.name)} ${missing.length === 1 ? 'is' : 'are'} not in this clone: a plain clone and actions/checkout fetch neither git-tune's logs ref nor, with a shallow fetch, its run tags`,
      FETCH_TUNE_REFS,
      [...missing.slice(0, 8), ...(missing.length > 8 ? [`… and ${missing.length - 8} more`] : []),
        'in GitHub Actions: `fetch-depth: 0` on actions/checkout, then a step that runs the fix below'],
    );
  }
  return tuning;
}

/** The verdict of several targets together: VERIFIED only when every one is. */
export function overallVerdict(reports: readonly FinalReport[]): string {
  if (reports.length === 1) return reports[0]!.verdict;
  if (reports.every((r) => r.verdict === 'VERIFIED')) return 'VERIFIED';
  return reports.some((r) => r.verdict === 'VOID') ? 'VOID' : 'FAILED';
}

/**
 * The step outputs. With several targets, the numbers are the best
 * target's, `verdict` is VERIFIED only when every target is, and
 * `receipts` holds every target's numbers as JSON.
 */
export function outputsOf(reports: readonly FinalReport[], best: FinalReport | null, resultDir: string | null): Array<[string, string]> {
  const main = best ?? reports[0]!;
  const out: Array<[string, string]> = [
    ['verdict', overallVerdict(reports)],
    ['cases-right', String(main.casesRight)],
    ['cases-total', String(main.casesTotal)],
    ['tokens', String(main.tokens)],
    ['cost-usd', String(Number(main.costUsd.toFixed(6)))],
    // Right / wrong / stuck with ids, and the pass rate with its 95% Wilson interval (docs/method.md#noise).
    ['cases-wrong', main.wrong.join(',')],
    ['cases-stuck', main.stuck.join(',')],
    ['pass-rate', main.rate.value.toFixed(4)],
    ['pass-rate-ci', `${main.rate.low.toFixed(4)}-${main.rate.high.toFixed(4)}`],
    ['summary', reportLine(main)],
  ];
  const held = main.heldOut?.rows.find((r) => r.set === 'held-out');
  if (main.heldOut && held) {
    // The held-out set (docs/held-out.md): right with the tuned prose, with the original (empty without a baseline).
    out.push(['held-out-right', String(held.tuned.right)], ['held-out-total', String(held.tuned.cases)],
      ['held-out-baseline-right', held.baseline ? String(held.baseline.right) : ''], ['held-out-failed', String(main.heldOut.failed)]);
  }
  if (reports.length > 1) {
    out.push(['best-target', best?.target ?? '']);
    out.push(['receipts', JSON.stringify(reports.map((r) => ({ target: r.target, verdict: r.verdict, casesRight: r.casesRight, casesTotal: r.casesTotal, tokens: r.tokens, costUsd: Number(r.costUsd.toFixed(6)) })))]);
  }
  if (resultDir) out.push(['result-dir', resultDir]);
  return out;
}

/** Appends the summary and outputs where GitHub Actions reads them; nothing when those variables are unset. */
export async function writeGithubFiles(env: Env, summary: string, outputs: ReadonlyArray<[string, string]>): Promise<string[]> {
  const written: string[] = [];
  if (env.GITHUB_STEP_SUMMARY) {
    await fs.appendFile(env.GITHUB_STEP_SUMMARY, summary);
    written.push('job summary');
  }
  if (env.GITHUB_OUTPUT) {
    // Values are single lines (receipts is one-line JSON), so `key=value` is enough.
    await fs.appendFile(env.GITHUB_OUTPUT, outputs.map(([k, v]) => `${k}=${v.replace(/[\r\n]+/g, ' ')}\n`).join(''));
    written.push('outputs');
  }
  return written;
}

/**
 * Where the templates' `uses:` points: the action in git-tune's own
 * repository, at this version's tag. GIT_TUNE_ACTION overrides it (a fork,
 * a pinned commit).
 */
export const ACTION_REPOSITORY = 'git-tune/git-tune';

export function actionRef(version: string, env: Env): string {
  return env.GIT_TUNE_ACTION?.trim() || `${ACTION_REPOSITORY}/.github/actions/final-check@v${version}`;
}

const yamlQuote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A workflow template with the tuning filled in. Pure. */
export function renderWorkflow(template: string, values: { tuning: string; paths: readonly string[]; action: string }): string {
  return template
    .replace(/,\s*__PROSE_PATHS__/g, values.paths.length ? `, ${values.paths.map(yamlQuote).join(', ')}` : '')
    .replace(/__TUNING__/g, values.tuning)
    .replace(/__GIT_TUNE_ACTION__/g, values.action);
}

export interface InstalledWorkflow {
  path: string;
  status: 'written' | 'unchanged' | 'kept';
}

export const TEMPLATES_DIR = new URL('../../templates/github/', import.meta.url);

/**
 * `git tune init --github`: the workflow templates into .github/workflows/,
 * rendered for the tuning. A file already there with other content is kept,
 * never overwritten (the user may have changed it).
 */
export async function installWorkflows(root: string, tuning: Tuning, env: Env): Promise<InstalledWorkflow[]> {
  const version = packageVersion();
  const dir = path.join(root, '.github', 'workflows');
  const names = (await fs.readdir(TEMPLATES_DIR)).filter((f) => f.endsWith('.yml')).sort();
  const config = tuning.config;
  const paths = [...new Set([...(config?.prose ?? []), ...(config?.memoryPolicy ?? [])])];
  const out: InstalledWorkflow[] = [];
  await fs.mkdir(dir, { recursive: true });
  for (const name of names) {
    const text = renderWorkflow(await fs.readFile(new URL(name, TEMPLATES_DIR), 'utf8'), { tuning: tuning.name, paths, action: actionRef(version, env) });
    const file = path.join(dir, name);
    const existing = await fs.readFile(file, 'utf8').catch(() => null);
    const rel = path.relative(root, file).split(path.sep).join('/');
    if (existing === null) {
      await fs.writeFile(file, text);
      out.push({ path: rel, status: 'written' });
    } else out.push({ path: rel, status: existing === text ? 'unchanged' : 'kept' });
  }
  return out;
}

