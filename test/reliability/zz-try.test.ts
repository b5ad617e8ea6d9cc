import { it } from 'vitest';
import { readdirSync } from 'node:fs';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { fsckProblems, TempRepo, leftovers } from '../helpers/repo.js';
import { plainCase, plannedRepo } from '../helpers/tuning.js';
it('try', async () => {
  const t = await plannedRepo([plainCase('a'), plainCase('b'), plainCase('c')]);
  for (const point of ['case', 'case#2', 'logs', 'scratch', 'objects', 'checkout', 'tags', 'cache', 'code-cache', 'index', 'journal']) {
    const r = TempRepo.copyOf(t);
    const out = await tuneAsync(r, ['run'], { GIT_TUNE_ENOSPC_AT: point });
    console.log(point, out.code, out.stderr.trim().split('\n').slice(-3).join(' | '), '| status:', r.git('status', '--porcelain').trim(), '| fsck:', fsckProblems(r), leftovers(r), r.git('tag', '-l').trim());
    const again = await tuneAsync(r, ['run']);
    console.log('  again', again.code, again.stderr.trim().slice(0, 200), r.git('status', '--porcelain').trim(), r.git('log', '--format=%s', '-3').trim().replace(/\n/g, ' / '));
    r.cleanup();
  }
  t.cleanup();
}, 120000);
