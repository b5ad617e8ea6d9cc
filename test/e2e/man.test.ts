import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/app/version.js';
import { renderManPages } from '../../src/cli/man.js';
import { buildProgram } from '../../src/cli/program.js';
import { ROOT, tuneSync } from '../helpers/cli.js';

/**
 * The man pages (src/cli/man.ts, written to dist/man/ by `npm run build`):
 * one per command, valid roff, shipped through package.json's `man`, and
 * found by `man` and by git's `git tune --help` after a global install.
 * `git tune help <command>` needs no man at all.
 */
/** A program the test needs: missing, the test fails with how to install it (CI installs both: .ci/run), never skips. */
const need = (program: string, pkg: string) => {
  const ok = spawnSync(program, ['--version'], { stdio: 'ignore' }).status === 0;
  if (!ok) throw new Error(`${program} is not installed: apt-get install ${pkg}`);
};
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { man: string[]; files: string[] };
const pages = renderManPages(buildProgram(), packageVersion());
const here = { dir: ROOT, env: {} };

/** The commands a `--help` lists (commander's own `help` aside), read from the text a user sees. */
function listedCommands(words: string[]): string[] {
  const r = tuneSync(here, [...words, '--help']);
  expect(r.code, r.stderr).toBe(0);
  const section = r.stdout.split('\nCommands:\n')[1];
  if (!section) return [];
  return section.split('\n\n')[0]!.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/[\s|]/)[0]!).filter((c) => c !== 'help');
}

describe('man pages', () => {
  it('every command and subcommand `--help` lists has a page, and no page is for anything else', () => {
    const expected: string[] = ['git-tune'];
    const walk = (words: string[]): void => {
      for (const command of listedCommands(words)) {
        expected.push(['git-tune', ...words, command].join('-'));
        walk([...words, command]);
      }
    };
    walk([]);
    expect(expected.length).toBeGreaterThan(30);
    expect(pages.map((p) => p.name).sort()).toEqual(expected.sort());
  });

  it('the build wrote exactly these pages into dist/man/, as the program renders them today', () => {
    const dir = path.join(ROOT, 'dist', 'man');
    expect(readdirSync(dir).sort()).toEqual(pages.map((p) => p.file).sort());
    for (const page of pages) expect(readFileSync(path.join(dir, page.file), 'utf8'), page.file).toBe(page.text);
  });

  it('package.json ships every page through `man` (add a new command\'s page there) and `files`', () => {
    expect([...pkg.man].sort(), 'package.json "man" must list dist/man/<page>.1 for every page the build writes').toEqual(pages.map((p) => `dist/man/${p.file}`).sort());
    expect(pkg.files).toContain('dist/man');
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: ROOT, encoding: 'utf8' })) as Array<{ files: Array<{ path: string }> }>;
    const files = new Set(packed[0]!.files.map((f) => f.path));
    for (const page of pkg.man) expect(files.has(page), page).toBe(true);
  });

  it('a page says what the command\'s help says: usage, every option, the examples', () => {
    const run = pages.find((p) => p.name === 'git-tune-run')!.text;
    expect(run).toContain('.SH SYNOPSIS\n.B git tune run\n[options]');
    for (const flag of ['\\-\\-concurrency <n>', '\\-\\-target <name>', '\\-\\-dry\\-run', '\\-\\-json', '\\-\\-debug']) expect(run).toContain(`.B ${flag}`);
    expect(run).toContain('\\fBgit tune run\\fR resumes');
    const set = pages.find((p) => p.name === 'git-tune-config-set')!.text;
    expect(set).toContain('.SH "EXAMPLES"');
    expect(set).toContain('git tune config set maxBatch 8');
    const tool = pages.find((p) => p.name === 'git-tune')!.text;
    expect(tool).toContain('.SH "EXIT STATUS"');
    expect(tool).toContain('See \\fBgit\\-tune\\-memory\\fR(1).');
    expect(pages.find((p) => p.name === 'git-tune-memory')!.text).toContain('See \\fBgit\\-tune\\-memory\\-candidate\\fR(1).');
    for (const page of pages) expect(page.text, page.file).not.toMatch(/[^\x00-\x7f]/);
  });

  it('every page is roff groff reads without a warning', () => {
    need('groff', 'groff');
    for (const page of pages) {
      const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z'], { input: page.text, encoding: 'utf8' });
      expect(r.status, page.file).toBe(0);
      expect(r.stderr, page.file).toBe('');
    }
  });

  describe('after a global install', () => {
    let tmp: string;
    let env: NodeJS.ProcessEnv;

    beforeAll(() => {
      need('man', 'man-db');
      tmp = mkdtempSync(path.join(os.tmpdir(), 'git-tune-man-'));
      const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').pop()!;
      // The package has no dependencies: the install reads nothing but the tarball.
      execFileSync('npm', ['install', '--global', '--prefix', path.join(tmp, 'prefix'), path.join(tmp, tarball), '--offline', '--no-audit', '--no-fund', '--silent'], { cwd: tmp });
      env = { ...process.env, PATH: `${path.join(tmp, 'prefix', 'bin')}${path.delimiter}${process.env.PATH}`, MANPATH: path.join(tmp, 'prefix', 'share', 'man'), MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80' };
      mkdirSync(path.join(tmp, 'work'));
      writeFileSync(path.join(tmp, 'work', 'x'), '');
    }, 120_000);
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    const sh = (command: string, args: string[]) => spawnSync(command, args, { cwd: path.join(tmp, 'work'), env, encoding: 'utf8' });

    it('npm put every page where man looks', () => {
      expect(readdirSync(path.join(tmp, 'prefix', 'share', 'man', 'man1')).sort()).toEqual(pages.map((p) => p.file).sort());
    });

    it('`git tune --help` (git asks man for git-tune) and `man git-tune-run` show the pages', () => {
      const gitHelp = sh('git', ['tune', '--help']);
      expect(gitHelp.status, gitHelp.stderr).toBe(0);
      expect(gitHelp.stdout).toMatch(/NAME\s+git-tune\s+-\s+Tune the prose/);
      expect(gitHelp.stdout).toContain('EXIT STATUS');
      const man = sh('man', ['git-tune-run']);
      expect(man.status, man.stderr).toBe(0);
      expect(man.stdout).toMatch(/SYNOPSIS\s+git tune run \[options\]/);
      expect(man.stdout).toContain('--concurrency <n>');
      // git hands `--help` after a subcommand to git-tune itself: commander's help, no man needed.
      const sub = sh('git', ['tune', 'run', '--help']);
      expect(sub.status, sub.stderr).toBe(0);
      expect(sub.stdout).toMatch(/^Usage: git-tune run \[options\]/);
      const nested = sh('man', ['git-tune-memory-candidate']);
      expect(nested.stdout).toMatch(/git tune memory candidate \[options\]/);
    });

    it('`git tune help <command>` prints the command\'s help with no man page to be found, subcommands too', () => {
      const noMan = { ...env, MANPATH: path.join(tmp, 'nowhere'), PATH: env.PATH };
      const help = spawnSync('git', ['tune', 'help', 'run'], { cwd: path.join(tmp, 'work'), env: noMan, encoding: 'utf8' });
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^Usage: git-tune run \[options\]/);
      expect(help.stdout).toContain('--concurrency <n>');
      const nested = spawnSync('git', ['tune', 'help', 'memory', 'candidate'], { cwd: path.join(tmp, 'work'), env: noMan, encoding: 'utf8' });
      expect(nested.stdout).toMatch(/^Usage: git-tune memory candidate \[options\]/);
      const unknown = spawnSync('git', ['tune', 'help', 'nosuch'], { cwd: path.join(tmp, 'work'), env: noMan, encoding: 'utf8' });
      expect(unknown.status).toBe(2);
      const unknownSub = spawnSync('git', ['tune', 'help', 'memory', 'nosuch'], { cwd: path.join(tmp, 'work'), env: noMan, encoding: 'utf8' });
      expect(unknownSub.status).toBe(2);
      expect(unknownSub.stderr).toMatch(/^Usage: git-tune memory /);
    });
  });
});
