import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tuneAsync } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * `git tune pr <batch>` against a loopback server (127.0.0.1 only) that
 * speaks the part of GitHub's REST API the command uses, with a bare
 * repository as the remote: the batch is pushed as a branch and its base,
 * the first call opens the pull request, the second updates the same one.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const TOKEN = 'test-token-not-a-secret';

interface Pull {
  number: number;
  html_url: string;
  state: 'open' | 'closed';
  title: string;
  body: string;
  head: { ref: string };
  base: { ref: string };
}

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: Record<string, unknown> | null;
}

/** The pulls endpoints of one repository, acme/desk, in memory. */
function fakeGitHub() {
  const pulls: Pull[] = [];
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      const url = new URL(req.url!, 'http://127.0.0.1');
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { message: 'Bad credentials' });
      if (!url.pathname.startsWith('/repos/acme/desk/pulls')) return send(404, { message: 'Not Found' });
      const number = /^\/repos\/acme\/desk\/pulls\/(\d+)$/.exec(url.pathname)?.[1];
      if (req.method === 'GET' && url.pathname === '/repos/acme/desk/pulls') {
        const head = url.searchParams.get('head');
        const state = url.searchParams.get('state') ?? 'open';
        return send(200, pulls.filter((p) => `acme:${p.head.ref}` === head && (state === 'all' || p.state === state)));
      }
      if (req.method === 'POST' && url.pathname === '/repos/acme/desk/pulls') {
        if (pulls.some((p) => p.head.ref === body!.head && p.state === 'open')) {
          return send(422, { message: 'Validation Failed', errors: [{ message: `A pull request already exists for acme:${body!.head}.` }] });
        }
        const pr: Pull = {
          number: pulls.length + 1, html_url: `https://github.com/acme/desk/pull/${pulls.length + 1}`, state: 'open',
          title: String(body!.title), body: String(body!.body), head: { ref: String(body!.head) }, base: { ref: String(body!.base) },
        };
        pulls.push(pr);
        return send(201, pr);
      }
      if (req.method === 'PATCH' && number) {
        const pr = pulls.find((p) => p.number === Number(number));
        if (!pr) return send(404, { message: 'Not Found' });
        Object.assign(pr, { title: body!.title ?? pr.title, body: body!.body ?? pr.body }, body!.base ? { base: { ref: body!.base } } : {});
        return send(200, pr);
      }
      return send(405, { message: 'not in this fake' });
    });
  });
  return { server, pulls, seen };
}


describe('git tune pr', () => {
  let repo: TempRepo;
  let remote: TempRepo;
  let api: string;
  const github = fakeGitHub();
  const env = () => ({ GITHUB_TOKEN: TOKEN, GITHUB_API_URL: api, GITHUB_REPOSITORY: 'acme/desk' });

  beforeAll(async () => {
    await new Promise<void>((resolve) => github.server.listen(0, '127.0.0.1', resolve));
    api = `http://127.0.0.1:${(github.server.address() as AddressInfo).port}`;
    repo = TempRepo.create({
      'agents/prompt.md': 'Answer politely.\n',
      'cases.yaml': '- { id: a, class: c, input: a, checks: [{ type: contains, value: politely }] }\n- { id: b, class: c, input: b, checks: [{ type: contains, value: refund }] }\n',
    });
    remote = new TempRepo('git-tune-remote-');
    remote.git('init', '-q', '--bare');
    repo.git('remote', 'add', 'origin', remote.dir);
    const ok = async (args: string[]) => {
      const r = await tuneAsync(repo, args);
      expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
    };
    await ok(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
    for (const args of [['select'], ['batch'], ['run'], ['grade', '--verdict', 'PROGRESS']]) await ok(args);
    repo.write({ 'agents/prompt.md': 'Answer politely. Offer a refund.\n', '.tune/desk/runs/batch01-nomem-run1/changes.md': '## Refunds\nAims: b\n' });
    await ok(['edit']);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => github.server.close(() => resolve()));
    repo.cleanup();
    remote.cleanup();
  });

  it('pushes the batch and its base as branches, and opens one pull request with the review as its body', async () => {
    const r = await tuneAsync(repo, ['pr', '1', '--json'], env());
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      batch: 1, remote: 'origin', head: 'tune-pr/desk/batch01', base: 'tune-pr/desk/batch01-base',
      pullRequest: { number: 1, url: 'https://github.com/acme/desk/pull/1', action: 'created' },
    });
    // The branch holds the batch's last commit, the base the commit before its plan.
    const tip = repo.git('rev-parse', 'tune/desk').trim();
    expect(remote.git('rev-parse', 'refs/heads/tune-pr/desk/batch01').trim()).toBe(tip);
    const plan = repo.git('log', '--format=%H', '--grep=plan batch 1', 'tune/desk').trim();
    expect(remote.git('rev-parse', 'refs/heads/tune-pr/desk/batch01-base').trim()).toBe(repo.git('rev-parse', `${plan}^`).trim());
    expect(github.seen.map((s) => s.method)).toEqual(['GET', 'POST']);
    expect(github.seen.every((s) => s.auth === `Bearer ${TOKEN}`)).toBe(true);
    expect(github.seen[0]!.url).toBe('/repos/acme/desk/pulls?state=open&per_page=100&head=acme%3Atune-pr%2Fdesk%2Fbatch01');
    const pr = github.pulls[0]!;
    expect(pr).toMatchObject({ head: { ref: 'tune-pr/desk/batch01' }, base: { ref: 'tune-pr/desk/batch01-base' } });
    expect(pr.title).toBe('tune(desk): batch 1 — working without memory in 1 run');
    expect(pr.body.startsWith('# Batch 1 of tuning `desk`')).toBe(true);
    expect(pr.body).toContain('edit after batch01-nomem-run1 — **pending**');
    expect(pr.body).toContain('+Answer politely. Offer a refund.');
    expect(pr.body.length).toBeLessThanOrEqual(65_536);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('a second call, after more steps, updates the same pull request', async () => {
    for (const args of [['run'], ['grade', '--verdict', 'PASSED']]) {
      const step = await tuneAsync(repo, args);
      expect(step.code, step.stderr).toBe(0);
    }
    const r = await tuneAsync(repo, ['pr', 'batch01'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('updated pull request #1: https://github.com/acme/desk/pull/1\n');
    expect(github.pulls).toHaveLength(1);
    expect(github.seen.map((s) => s.method)).toEqual(['GET', 'POST', 'GET', 'PATCH']);
    expect(github.seen[3]!.url).toBe('/repos/acme/desk/pulls/1');
    expect(github.pulls[0]!.body).toContain('**confirmed** by batch01-nomem-run2');
    expect(github.pulls[0]!.title).toBe('tune(desk): batch 1 — PASSED without memory in 2 runs');
    expect(remote.git('rev-parse', 'refs/heads/tune-pr/desk/batch01').trim()).toBe(repo.git('rev-parse', 'tune/desk').trim());
  });

  it('without a token: pushes, prints the body on stdout and the gh pr create line on stderr', async () => {
    const before = github.seen.length;
    const r = await tuneAsync(repo, ['pr', '1'], { GITHUB_TOKEN: '', GH_TOKEN: '', GITHUB_REPOSITORY: 'acme/desk' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.startsWith('# Batch 1 of tuning `desk`')).toBe(true);
    expect(r.stderr).toContain('no GITHUB_TOKEN or GH_TOKEN');
    expect(r.stderr).toContain("git tune review 1 | gh pr create --repo acme/desk --base tune-pr/desk/batch01-base --head tune-pr/desk/batch01 --title 'tune(desk): batch 1 — PASSED without memory in 2 runs' --body-file -");
    expect(github.seen.length).toBe(before);
  });

  it('refuses a batch that does not exist, and a token the API refuses, with the fix', async () => {
    const none = await tuneAsync(repo, ['pr', '7'], env());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('tuning desk has no batch 7');
    const bad = await tuneAsync(repo, ['pr', '1'], { ...env(), GITHUB_TOKEN: 'wrong-token-xyz' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('GitHub answered 401');
    expect(bad.stderr).toContain('fix: the token was refused');
    expect(bad.stderr).not.toContain('wrong-token-xyz');
  });
});
