import { spawn, spawnSync } from 'node:child_process';
import { promises as fsp, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { finishInterruptedSteps } from '../../src/app/recover.js';
import { NativeGitRepo } from '../../src/git/native-repo.js';
import { ROOT, tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Issue 22, item 2: the temporary files (`<file>.tmp-<pid>-<start>-<random>`,
 * src/git/temp-files.ts) a process that died mid-write left beside the
 * files it wrote are removed by the next command, as dead scratch dirs
 * are; those of a live process stay, and a reused pid (same pid, another
 * start time) does not keep a dead writer's file.
 *
 * Issue 30, item 1: where a dead writer may have left one is known, not
 * searched. A writer adds each folder to its ledger
 * (`.git/tune/.temps/<pid>-<start>`) before its first temporary file there;
 * a command's start reads the ledgers of dead processes and those folders
 * only, so its cost does not grow with the run folders of the history.
 */
const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;

/** What a writer that died left beside its temporary files: its ledger, naming their folders. */
function ledger(repo: TempRepo, pid: number, start: string | number, files: readonly string[]): void {
  const dir = repo.path('.git/tune/.temps');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${pid}-${start}`), [...new Set(files.map((f) => path.dirname(repo.path(f))))].map((d) => `${d}\n`).join(''));
}

let template: TempRepo;
beforeAll(async () => {
  template = await plannedRepo([plainCase('a')]);
  await tuneOk(template, ['run']);
}, 60_000);
afterAll(() => template.cleanup());

describe('temporary files of dead writers', () => {
  it('the next command removes a dead writer\'s temporary files and keeps a live one\'s', async () => {
    const repo = TempRepo.copyOf(template);
    const live = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const dead = spawnSync('true').pid!;
      const alive = live.pid!;
      const start = startOf(alive);
      const deadFiles = [
        `.tune/desk/README.md.tmp-${dead}-0-0badf00d`,
        `.tune/desk/runs/batch01-nomem-run1/findings.md.tmp-${dead}-12345-00c0ffee`,
        `.tune/desk/memory/candidate/facts/return-sale.txt.tmp-${dead}-1a2b3c4d`, // the name of versions before the start time
        `.git/tune/desk/pending-step.json.tmp-${dead}-0-deadbeef`,
        `.git/tune/.locks/refs%heads%tune%desk.lock.owner.tmp-${dead}-0-feedface`,
        `.git/index.tmp-${dead}-0-cafebabe`,
      ];
      const reused = `.tune/desk/config.yaml.tmp-${alive}-${Number(start) + 1}-01234567`; // the pid now belongs to another process
      const liveFiles = [`.tune/desk/README.md.tmp-${alive}-${start}-0badf00d`, `.git/tune/desk/x.tmp-${alive}-${start}-0fedcba9`];
      const notOurs = ['.tune/desk/notes.tmp-draft', 'agents/prompt.md.tmp-backup'];
      repo.write(Object.fromEntries([...deadFiles, reused, ...liveFiles, ...notOurs].map((f) => [f, 'half\n'])));
      ledger(repo, dead, 0, deadFiles.slice(0, 3));
      ledger(repo, alive, Number(start) + 1, [reused]);
      ledger(repo, alive, start, liveFiles);

      const r = await tuneAsync(repo, ['status']);
      expect(r.code, r.stderr).toBe(0);
      expect([...deadFiles, reused].filter((f) => existsSync(repo.path(f)))).toEqual([]);
      expect([...liveFiles, ...notOurs].filter((f) => !existsSync(repo.path(f)))).toEqual([]);
      expect(r.stdout).toContain('temporary files left by a git-tune that died were removed');
      expect(r.stdout).toContain(`.tune/desk/README.md.tmp-${dead}-0-0badf00d`);
      // The dead writers' ledgers are done with; the live one's stays.
      expect(readdirSync(repo.path('.git/tune/.temps'))).toEqual([`${alive}-${start}`]);

      // Once its writer has ended, the next command takes the live one's files too.
      live.kill('SIGKILL');
      await new Promise((resolve) => live.once('exit', resolve));
      expect((await tuneAsync(repo, ['status'])).code).toBe(0);
      expect(liveFiles.filter((f) => existsSync(repo.path(f)))).toEqual([]);
      expect(repo.git('status', '--porcelain', '--untracked-files=all').split('\n').filter((l) => l.includes('.tmp-')).sort())
        .toEqual(notOurs.map((f) => `?? ${f}`).sort());
      expect(readdirSync(repo.path('.git/tune/.temps'))).toEqual([]);
    } finally {
      live.kill('SIGKILL');
      repo.cleanup();
    }
  }, 30_000);

  it('a writer records the folder before its temporary file: killed, the next command finds it; exiting, it leaves nothing', async () => {
    const repo = TempRepo.copyOf(template);
    try {
      // The real writer's code (dist/), in a process that makes a temporary file in a run folder and then dies or exits.
      const writer = (how: 'kill' | 'exit') => spawnSync(process.execPath, ['--input-type=module', '-e', `
        import { writeFileSync } from 'node:fs';
        const { NativeGitRepo } = await import(${JSON.stringify(path.join(ROOT, 'dist/git/native-repo.js'))});
        const { tempFileFor } = await import(${JSON.stringify(path.join(ROOT, 'dist/git/temp-files.js'))});
        new NativeGitRepo(process.cwd(), '.git');
        const tmp = tempFileFor('.tune/desk/runs/batch01-nomem-run1/findings.md');
        writeFileSync(tmp, 'half');
        console.log(tmp);
        if (${JSON.stringify(how)} === 'kill') process.kill(process.pid, 'SIGKILL');
      `], { cwd: repo.dir, encoding: 'utf8' });
      const killed = writer('kill');
      const left = killed.stdout.trim();
      expect(left).toMatch(/findings\.md\.tmp-\d+-\d+-[0-9a-f]{8}$/);
      expect(existsSync(repo.path(left))).toBe(true);
      expect(readdirSync(repo.path('.git/tune/.temps'))).toHaveLength(1);
      const r = await tuneAsync(repo, ['status']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(left);
      expect(existsSync(repo.path(left))).toBe(false);
      expect(readdirSync(repo.path('.git/tune/.temps'))).toEqual([]);

      // A writer that exits (process.exit cut its write short) removes its own file and ledger.
      const exited = writer('exit');
      expect(exited.status, exited.stderr).toBe(0);
      expect(existsSync(repo.path(exited.stdout.trim()))).toBe(false);
      expect(readdirSync(repo.path('.git/tune/.temps'))).toEqual([]);
    } finally {
      repo.cleanup();
    }
  }, 30_000);

  it('a command\'s start reads no run folder: the same directory reads with 3 runs or 300', async () => {
    const readsWith = async (runs: number): Promise<string[]> => {
      const repo = TempRepo.copyOf(template);
      try {
        // Finished runs' folders, each with a file a dead writer left and no ledger names: not searched, not seen.
        const dead = spawnSync('true').pid!;
        const files: Record<string, string> = {};
        for (let i = 0; i < runs; i++) files[`.tune/desk/runs/old${i}/findings.md.tmp-${dead}-0-0badf00d`] = 'half\n';
        repo.write(files);
        const read: string[] = [];
        const orig = fsp.readdir.bind(fsp);
        const spy = vi.spyOn(fsp, 'readdir').mockImplementation(((p: never, o: never) => {
          read.push(path.relative(repo.dir, String(p)));
          return orig(p, o);
        }) as never);
        try {
          await finishInterruptedSteps(new NativeGitRepo(repo.dir, path.join(repo.dir, '.git')));
        } finally {
          spy.mockRestore();
        }
        expect(existsSync(repo.path(`.tune/desk/runs/old0/findings.md.tmp-${dead}-0-0badf00d`))).toBe(true);
        return read.sort();
      } finally {
        repo.cleanup();
      }
    };
    const few = await readsWith(3);
    const many = await readsWith(300);
    expect(many).toEqual(few);
    expect(few.filter((d) => d.startsWith('.tune/desk/runs'))).toEqual([]);
    expect(few.length).toBeLessThan(12);
  }, 60_000);

  it('a clone from before the ledgers is walked once, then never again', async () => {
    const repo = TempRepo.copyOf(template);
    try {
      const dead = spawnSync('true').pid!;
      rmSync(repo.path('.git/tune/.temps'), { recursive: true, force: true });
      const old = `.tune/desk/memory/candidate/facts/return-sale.txt.tmp-${dead}-1a2b3c4d`;
      repo.write({ [old]: 'half\n' });
      const r = await tuneAsync(repo, ['status']);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(repo.path(old))).toBe(false);
      expect(existsSync(repo.path('.git/tune/.temps'))).toBe(true);
      repo.write({ [old]: 'half\n' });
      expect((await tuneAsync(repo, ['status'])).code).toBe(0);
      expect(existsSync(repo.path(old))).toBe(true); // no ledger names it: no longer searched for
    } finally {
      repo.cleanup();
    }
  }, 30_000);
});
