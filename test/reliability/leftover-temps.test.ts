import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';

/**
 * Issue 22, item 2: the temporary files (`<file>.tmp-<pid>-<start>-<random>`,
 * src/git/temp-files.ts) a process that died mid-write left beside the
 * files it wrote are removed by the next command, as dead scratch dirs
 * are; those of a live process stay, and a reused pid (same pid, another
 * start time) does not keep a dead writer's file.
 */
const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;

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
        `.tune/desk/config.yaml.tmp-${alive}-${Number(start) + 1}-01234567`, // the pid now belongs to another process
      ];
      const liveFiles = [`.tune/desk/README.md.tmp-${alive}-${start}-0badf00d`, `.git/tune/desk/x.tmp-${alive}-${start}-0fedcba9`];
      const notOurs = ['.tune/desk/notes.tmp-draft', 'agents/prompt.md.tmp-backup'];
      repo.write(Object.fromEntries([...deadFiles, ...liveFiles, ...notOurs].map((f) => [f, 'half\n'])));

      const r = await tuneAsync(repo, ['status']);
      expect(r.code, r.stderr).toBe(0);
      expect(deadFiles.filter((f) => existsSync(repo.path(f)))).toEqual([]);
      expect([...liveFiles, ...notOurs].filter((f) => !existsSync(repo.path(f)))).toEqual([]);
      expect(r.stdout).toContain('temporary files left by a git-tune that died were removed');
      expect(r.stdout).toContain(`.tune/desk/README.md.tmp-${dead}-0-0badf00d`);

      // Once its writer has ended, the next command takes the live one's files too.
      live.kill('SIGKILL');
      await new Promise((resolve) => live.once('exit', resolve));
      expect((await tuneAsync(repo, ['status'])).code).toBe(0);
      expect(liveFiles.filter((f) => existsSync(repo.path(f)))).toEqual([]);
      expect(repo.git('status', '--porcelain', '--untracked-files=all').split('\n').filter((l) => l.includes('.tmp-')).sort())
        .toEqual(notOurs.map((f) => `?? ${f}`).sort());
    } finally {
      live.kill('SIGKILL');
      repo.cleanup();
    }
  }, 30_000);
});
