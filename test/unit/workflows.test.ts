import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { renderWorkflow } from '../../src/app/ci.js';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The GitHub side of the final check (docs/ci.md): the composite action, the
 * workflow templates `git tune init --github` installs, and the project's
 * own CI. Each parses as YAML and names only inputs and outputs that exist.
 */
const ACTION_FILE = path.join(ROOT, '.github/actions/final-check/action.yml');
const TEMPLATES = path.join(ROOT, 'templates/github');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

type Step = { id?: string; uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, unknown> };
type Job = { steps: Step[]; strategy?: { matrix?: Record<string, unknown[]> }; needs?: string | string[] };

function parse(text: string, file: string): any {
  const doc = YAML.parseDocument(text, { uniqueKeys: true });
  expect(doc.errors.map((e) => e.message), file).toEqual([]);
  return doc.toJS();
}

/** Every `${{ … }}` expression in a text (comments included: a comment must not name what does not exist either). */
const expressions = (text: string) => [...text.matchAll(/\$\{\{\s*([\s\S]*?)\s*\}\}/g)].map((m) => m[1]!);
const inputRefs = (text: string) => expressions(text).flatMap((e) => [...e.matchAll(/\binputs\.([A-Za-z0-9_-]+)/g)].map((m) => m[1]!));
const stepOutputRefs = (text: string) =>
  expressions(text).flatMap((e) => [...e.matchAll(/\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)/g)].map((m) => ({ id: m[1]!, output: m[2]! })));

/** Whether a run script sets `name` as a step output: it echoes `name=` into $GITHUB_OUTPUT. */
function setsOutput(script: string, name: string): boolean {
  const writes = /(>>\s*"?\$GITHUB_OUTPUT"?)/.test(script);
  const line = new RegExp(`(^|\\s|["'])${name.replace(/[-]/g, '\\-')}=`, 'm');
  return writes && line.test(script);
}

const actionText = readFileSync(ACTION_FILE, 'utf8');
const action = parse(actionText, ACTION_FILE);
const actionInputs = Object.keys(action.inputs);
const actionOutputs = Object.keys(action.outputs);
const templates = readdirSync(TEMPLATES).filter((f) => f.endsWith('.yml')).sort();
const raw = (name: string) => readFileSync(path.join(TEMPLATES, name), 'utf8');
const finalTemplate = parse(raw('git-tune-final.yml'), 'git-tune-final.yml');
const commentTemplate = parse(raw('git-tune-comment.yml'), 'git-tune-comment.yml');

describe('the final-check action (.github/actions/final-check/action.yml)', () => {
  it('is a composite action whose inputs and outputs are all described', () => {
    expect(action.runs.using).toBe('composite');
    expect(actionInputs).toEqual(expect.arrayContaining(['tuning', 'shard', 'collect', 'target', 'working-directory', 'node-version']));
    expect(actionOutputs).toEqual(expect.arrayContaining(['verdict', 'cases-right', 'cases-total', 'tokens', 'cost-usd']));
    for (const [name, input] of Object.entries<any>(action.inputs)) expect(typeof input.description, name).toBe('string');
    for (const [name, output] of Object.entries<any>(action.outputs)) expect(typeof output.description, name).toBe('string');
  });

  it('uses only inputs it declares, and every input it declares', () => {
    const used = new Set(inputRefs(actionText));
    for (const name of used) expect(actionInputs, `\${{ inputs.${name} }} is not declared`).toContain(name);
    for (const name of actionInputs) expect(used.has(name), `input ${name} is declared but never used`).toBe(true);
  });

  it('maps each output to a step whose run script writes it to $GITHUB_OUTPUT', () => {
    const steps: Step[] = action.runs.steps;
    for (const [name, output] of Object.entries<any>(action.outputs)) {
      const refs = stepOutputRefs(String(output.value));
      expect(refs, name).toHaveLength(1);
      const step = steps.find((s) => s.id === refs[0]!.id);
      expect(step?.run, `no step ${refs[0]!.id} with a run script`).toBeTypeOf('string');
      expect(setsOutput(step!.run!, refs[0]!.output), `step ${refs[0]!.id} never writes ${refs[0]!.output}=`).toBe(true);
    }
    // And the check itself would fail if a step did not write the output.
    expect(setsOutput('echo "verdict=x" >> "$GITHUB_OUTPUT"', 'cases-right')).toBe(false);
  });

  it('never pastes an expression into a script: inputs reach the shell as environment variables', () => {
    for (const step of action.runs.steps as Step[]) if (step.run) expect(step.run, step.id ?? step.run.slice(0, 40)).not.toContain('${{');
  });

  it("installs git-tune from the action's own checkout, or from npm", () => {
    const install = (action.runs.steps as Step[]).find((s) => s.run?.includes('npm ci'))!;
    expect(install.env!.ACTION_ROOT).toBe('${{ github.action_path }}/../../..');
    expect(install.run).toContain('npm run build');
    expect(install.run).toContain('npm install --global');
  });
});

const rendered = (name: string, paths = ['agents/**/*.md']) =>
  renderWorkflow(raw(name), { tuning: 'demo', paths, action: 'git-tune/git-tune/.github/actions/final-check@v1.2.3' });

describe('the workflow templates (templates/github/)', () => {

  it('parse as YAML as shipped and as installed', () => {
    expect(templates).toEqual(['git-tune-comment.yml', 'git-tune-final.yml']);
    for (const name of templates) {
      parse(raw(name), name);
      const text = rendered(name);
      expect(text).not.toMatch(/__[A-Z_]+__/);
      parse(text, name);
      parse(rendered(name, []), `${name} without prose globs`);
    }
  });

  it('call the action with inputs it declares, and read only outputs it sets', () => {
    for (const name of templates) {
      const text = raw(name);
      const workflow = parse(text, name);
      for (const [jobName, job] of Object.entries<Job>(workflow.jobs)) {
        const ids = new Map(job.steps.filter((s) => s.id).map((s) => [s.id!, s]));
        for (const step of job.steps.filter((s) => s.uses === '__GIT_TUNE_ACTION__')) {
          for (const key of Object.keys(step.with ?? {})) expect(actionInputs, `${name} ${jobName}: with.${key}`).toContain(key);
        }
        for (const ref of stepOutputRefs(JSON.stringify(job))) {
          const step = ids.get(ref.id);
          expect(step, `${name} ${jobName}: no step ${ref.id}`).toBeDefined();
          if (step!.uses === '__GIT_TUNE_ACTION__') expect(actionOutputs, `${name} ${jobName}: ${ref.id}.outputs.${ref.output}`).toContain(ref.output);
          else expect(setsOutput(step!.run ?? '', ref.output), `${name} ${jobName}: ${ref.id} never writes ${ref.output}=`).toBe(true);
        }
        for (const step of job.steps) if (step.run) expect(step.run, `${name} ${jobName}`).not.toContain('${{');
      }
      expect(inputRefs(text), `${name} reads inputs it has none of`).toEqual([]);
    }
  });

  it('run the final check on pull requests touching the tuning, sharded by a matrix and collected by one job', () => {
    const text = rendered('git-tune-final.yml', ['agents/**/*.md', "it's/*.md"]);
    const workflow = parse(text, 'git-tune-final.yml');
    expect(workflow.on.pull_request.paths).toEqual(['.tune/**', 'agents/**/*.md', "it's/*.md"]);
    expect(workflow.permissions).toEqual({ contents: 'read' });
    const shards: unknown[] = workflow.jobs.shard.strategy.matrix.shard;
    const n = shards.length;
    expect(shards).toEqual(Array.from({ length: n }, (_, k) => k + 1));
    const run = workflow.jobs.shard.steps.find((s: Step) => s.id === 'final');
    expect(run.with).toMatchObject({ tuning: 'demo', shard: `\${{ matrix.shard }}/${n}` });
    expect(run.uses).toBe('git-tune/git-tune/.github/actions/final-check@v1.2.3');
    const upload = workflow.jobs.shard.steps.find((s: Step) => s.uses?.startsWith('actions/upload-artifact'));
    expect(upload.with.name).toContain(`-of-${n}`);
    expect(upload.with.path).toBe(run.with.out);
    // The history is all there: whole clone, then the tags and logs.
    for (const job of Object.values<Job>(workflow.jobs)) {
      const checkout = job.steps.find((s) => s.uses?.startsWith('actions/checkout'))!;
      expect(checkout.with!['fetch-depth']).toBe(0);
      expect(job.steps.some((s) => s.run?.includes("'+refs/tune-logs/*:refs/tune-logs/*' 'refs/tags/tune/*:refs/tags/tune/*'"))).toBe(true);
    }
    const collect = workflow.jobs.collect;
    expect(collect.needs).toBe('shard');
    const download = collect.steps.find((s: Step) => s.uses?.startsWith('actions/download-artifact'));
    const merge = collect.steps.find((s: Step) => s.id === 'final');
    expect(merge.with.collect).toBe(`${download.with.path}/*`);
    expect(collect.steps.find((s: Step) => s.uses?.startsWith('actions/upload-artifact')).with.name).toBe('git-tune-final-check');
  });

  it('comment from a separate workflow_run workflow that runs nothing of the pull request', () => {
    expect(raw('git-tune-final.yml')).not.toMatch(/^\s*pull_request_target\s*:/m);
    expect(Object.keys(finalTemplate.on)).not.toContain('pull_request_target');
    expect(commentTemplate.on.workflow_run.workflows).toEqual([finalTemplate.name]);
    expect(commentTemplate.permissions).toEqual({ actions: 'read', 'pull-requests': 'write' });
    const steps: Step[] = commentTemplate.jobs.comment.steps;
    expect(steps.map((s) => s.uses?.split('@')[0])).toEqual(['actions/download-artifact', 'actions/github-script']);
    expect(steps[0]!.with!.name).toBe('git-tune-final-check');
    expect(steps[0]!.with!['run-id']).toBe('${{ github.event.workflow_run.id }}');
    // One sticky comment: found by its marker, updated in place.
    const script = String(steps[1]!.with!.script);
    expect(script).toContain('updateComment');
    expect(script).toContain('pr.head.sha !== run.head_sha');
  });
});

describe('the comment script (actions/github-script in git-tune-comment.yml), run against a stand-in GitHub', () => {
  const script = String(parse(rendered('git-tune-comment.yml'), 'comment').jobs.comment.steps[1].with.script);
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
  const repos: TempRepo[] = [];
  afterAll(() => repos.forEach((r) => r.cleanup()));

  /** Runs the script with an artifact holding `number` and a summary; returns what it asked GitHub to do. */
  async function post(number: string, opts: { headSha?: string; comments?: Array<{ id: number; body: string; user: { type: string } }> } = {}) {
    const dir = new TempRepo('git-tune-comment-');
    repos.push(dir);
    writeFileSync(dir.path('pr-number'), `${number}\n`);
    writeFileSync(dir.path('summary.md'), '## git-tune final check of demo: VERIFIED\n');
    const calls: Array<[string, Record<string, unknown>]> = [];
    const github = {
      paginate: async (fn: (a: unknown) => Promise<{ data: unknown }>, args: unknown) => (await fn(args)).data,
      rest: {
        pulls: { get: async (a: Record<string, unknown>) => ({ data: { number: a.pull_number, head: { sha: opts.headSha ?? 'abc1234def' } } }) },
        issues: {
          listComments: async () => ({ data: opts.comments ?? [] }),
          createComment: async (a: Record<string, unknown>) => void calls.push(['create', a]),
          updateComment: async (a: Record<string, unknown>) => void calls.push(['update', a]),
        },
      },
    };
    const context = { repo: { owner: 'o', repo: 'r' }, payload: { workflow_run: { head_sha: 'abc1234def', html_url: 'https://example.test/run/1' } } };
    const core = { notice: (m: string) => calls.push(['notice', { message: m }]) };
    const before = process.env.RESULT_DIR;
    process.env.RESULT_DIR = dir.dir;
    try {
      await new AsyncFunction('github', 'context', 'core', 'require', script)(github, context, core, (m: string) => requireStub(m));
    } finally {
      process.env.RESULT_DIR = before;
    }
    return calls;
  }
  const requireStub = (m: string) => (m === 'node:fs' ? { readFileSync } : m === 'node:path' ? path : (() => { throw new Error(m); })());

  it('creates one comment, marked, then updates that one in place', async () => {
    const created = await post('7');
    expect(created).toHaveLength(1);
    expect(created[0]![0]).toBe('create');
    expect(created[0]![1]).toMatchObject({ owner: 'o', repo: 'r', issue_number: 7 });
    const body = String(created[0]![1].body);
    expect(body).toMatch(/^<!-- git-tune-final-check: demo -->\n## git-tune final check of demo: VERIFIED\n/);
    const updated = await post('7', { comments: [{ id: 1, body: 'hi', user: { type: 'User' } }, { id: 42, body, user: { type: 'Bot' } }] });
    expect(updated).toEqual([['update', expect.objectContaining({ comment_id: 42 })]]);
  });

  it('comments on nothing when the pull request moved on, and refuses a number that is not one', async () => {
    expect((await post('7', { headSha: 'fff0000' })).map((c) => c[0])).toEqual(['notice']);
    await expect(post('7; rm -rf /')).rejects.toThrow('the artifact holds no pull request number');
  });
});

describe("git-tune's own CI (.github/workflows/ci.yml)", () => {
  it('installs, builds and tests as .ci/run does', () => {
    const ci = parse(readFileSync(path.join(ROOT, '.github/workflows/ci.yml'), 'utf8'), 'ci.yml');
    const runs = Object.values<Job>(ci.jobs).flatMap((j) => j.steps.filter((s) => s.run).map((s) => s.run!.trim()));
    const script = readFileSync(path.join(ROOT, '.ci/run'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => /^npm /.test(l));
    expect(runs).toEqual(script);
    expect(ci.on).toHaveProperty('pull_request');
  });
});

describe('git tune init --github', () => {
  const repos: TempRepo[] = [];
  afterAll(() => repos.forEach((r) => r.cleanup()));

  it('installs the workflows for the new tuning, then keeps a file the user changed', () => {
    const repo = TempRepo.create();
    repos.push(repo);
    const init = repo.tune(['init', 'support-desk', '--prose', 'agents/**/*.md', '--memory-policy', 'agents/policy.md', '--runner', 'node agent.js', '--github']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain('wrote .github/workflows/git-tune-final.yml\n');
    expect(init.stderr).toContain('wrote .github/workflows/git-tune-comment.yml\n');
    const final = parse(readFileSync(repo.path('.github/workflows/git-tune-final.yml'), 'utf8'), 'installed');
    expect(final.on.pull_request.paths).toEqual(['.tune/**', 'agents/**/*.md', 'agents/policy.md']);
    const step = final.jobs.collect.steps.find((s: Step) => s.id === 'final');
    expect(step.uses).toBe(`git-tune/git-tune/.github/actions/final-check@v${VERSION}`);
    expect(step.with.tuning).toBe('support-desk');
    // Not committed: they belong on the default branch, where workflow_run workflows run from.
    expect(repo.git('status', '--porcelain')).toBe('?? .github/\n');

    writeFileSync(repo.path('.github/workflows/git-tune-comment.yml'), '# mine\n');
    const again = repo.tune(['init', 'support-desk', '--github']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('kept .github/workflows/git-tune-comment.yml: it differs from the template');
    expect(again.stdout).toContain('.github/workflows/git-tune-final.yml is already there');
    expect(readFileSync(repo.path('.github/workflows/git-tune-comment.yml'), 'utf8')).toBe('# mine\n');
    // GIT_TUNE_ACTION points the templates at another copy of the action (a fork, a pinned commit).
    rmSync(repo.path('.github/workflows/git-tune-final.yml'));
    expect(repo.tune(['init', 'support-desk', '--github'], { GIT_TUNE_ACTION: 'me/fork/.github/actions/final-check@main' }).code).toBe(0);
    expect(readFileSync(repo.path('.github/workflows/git-tune-final.yml'), 'utf8')).toContain('uses: me/fork/.github/actions/final-check@main\n');

    // A tuning that exists is still refused for anything but --github alone.
    expect(repo.tune(['init', 'support-desk', '--github', '--prose', 'x']).code).toBe(2);
  });
});
