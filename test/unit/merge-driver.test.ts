import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { driverCommand } from '../../src/app/merge-driver.js';
import { generatedFileKind, mergeGenerated } from '../../src/core/merge-driver.js';
import { HAND_END, HAND_START } from '../../src/core/readme.js';
import { CLI } from '../helpers/cli.js';

/**
 * The merge driver of the generated files (docs/git-model.md#merge-driver):
 * the generated part is the tip's, the hand-written part merges three ways,
 * and the command line git runs finds git-tune without PATH, or falls back
 * to git's own line merge.
 */
const readme = (generated: string, hand: string) => `# desk\n\n${HAND_START}\n${hand}\n${HAND_END}\n\n${generated}\n`;
const FILE = '.tune/desk/README.md';

describe('mergeGenerated', () => {
  it('knows the generated files by path', () => {
    expect(generatedFileKind('.tune/desk/README.md')).toBe('readme');
    expect(generatedFileKind('.tune/desk@small/USAGE.md')).toBe('usage');
    expect(generatedFileKind('.tune/desk/runs/x/README.md')).toBeNull();
    expect(generatedFileKind('README.md')).toBeNull();
  });

  it('keeps the tip\'s generated part whatever the other side generated', () => {
    const out = mergeGenerated(FILE, readme('step 7', 'why'), readme('step 9', 'why'), readme('step 6', 'why'));
    expect(out).toEqual({ kind: 'merged', text: readme('step 9', 'why') });
    expect(mergeGenerated('.tune/desk/USAGE.md', 'a', 'ours', 'b')).toEqual({ kind: 'merged', text: 'ours' });
  });

  it('takes the hand-written part from the side that changed it; both changed differently is a conflict in that part only', () => {
    expect(mergeGenerated(FILE, readme('7', 'old'), readme('9', 'old'), readme('6', 'new'))).toEqual({ kind: 'merged', text: readme('9', 'new') });
    expect(mergeGenerated(FILE, readme('7', 'old'), readme('9', 'mine'), readme('6', 'old'))).toEqual({ kind: 'merged', text: readme('9', 'mine') });
    expect(mergeGenerated(FILE, readme('7', 'old'), readme('9', 'same'), readme('6', 'same'))).toEqual({ kind: 'merged', text: readme('9', 'same') });
    const conflict = mergeGenerated(FILE, readme('7', 'old'), readme('9', 'mine'), readme('6', 'theirs'));
    expect(conflict).toEqual({ kind: 'conflict', text: readme('9', '<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs') });
  });

  it('leaves a README whose markers are gone, and any other file, to git\'s line merge', () => {
    expect(mergeGenerated(FILE, readme('7', 'x'), '# no markers\n', readme('6', 'x')).kind).toBe('fallback');
    expect(mergeGenerated('.tune/desk/config.yaml', 'a', 'b', 'c').kind).toBe('fallback');
  });
});

describe('the driver command line, as git runs it', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-md-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** Runs the configured command with git's %O %A %B %P filled in, and no git-tune on PATH. */
  const runDriver = (command: string, base: string, ours: string, theirs: string, file = FILE) => {
    for (const [name, text] of [['O', base], ['A', ours], ['B', theirs]] as const) writeFileSync(path.join(dir, name), text);
    const line = command.replace('%O', 'O').replace('%A', 'A').replace('%B', 'B').replace('%P', `'${file}'`);
    const r = spawnSync('sh', ['-c', line], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: '/usr/bin:/bin' } });
    return { code: r.status, text: readFileSync(path.join(dir, 'A'), 'utf8') };
  };

  it('runs this install of git-tune when PATH has none', () => {
    const r = runDriver(driverCommand(process.execPath, CLI), readme('7', 'old'), readme('9', 'old'), readme('6', 'new'));
    expect(r).toEqual({ code: 0, text: readme('9', 'new') });
  });

  it('with no git-tune anywhere, git\'s own line merge: conflict markers, a non-zero exit', () => {
    const r = runDriver(driverCommand('/nonexistent/node', '/nonexistent/git-tune.js'), 'a\nb\nc\n', 'a\nours\nc\n', 'a\ntheirs\nc\n');
    expect(r.code).not.toBe(0);
    expect(r.text).toBe('a\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\nc\n');
  });
});
