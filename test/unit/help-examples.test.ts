import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';

/**
 * README.md promises "Every command has `--help` with examples": every
 * command and subcommand's help (what `--help`, `git tune help <command>`
 * and its man page print) has an `Examples:` section whose lines run that
 * very command.
 */
function commands(program: CommandUnknownOpts): Array<{ path: string; command: CommandUnknownOpts }> {
  const out: Array<{ path: string; command: CommandUnknownOpts }> = [];
  const walk = (command: CommandUnknownOpts, path: string[]) => {
    for (const sub of command.commands as CommandUnknownOpts[]) {
      // The hooks' own entry points (hidden: git runs them) are not commands a person types.
      if (sub.name() === 'help' || (sub as unknown as { _hidden?: boolean })._hidden) continue;
      const p = [...path, sub.name()];
      out.push({ path: p.join(' '), command: sub });
      walk(sub, p);
    }
  };
  walk(program, []);
  return out;
}

function helpOf(command: CommandUnknownOpts): string {
  let text = '';
  command.configureOutput({ writeOut: (s) => { text += s; }, writeErr: (s) => { text += s; } });
  command.outputHelp();
  return text;
}

describe('every command has --help with examples', () => {
  const all = commands(buildProgram() as unknown as CommandUnknownOpts);

  it('finds the commands (run, grade, edit, batch, next, status, select, final among them)', () => {
    const paths = all.map((c) => c.path);
    for (const name of ['run', 'grade', 'edit', 'batch', 'next', 'status', 'select', 'final', 'review', 'memory candidate', 'difficult add']) expect(paths).toContain(name);
  });

  it.each(all.map((c) => [c.path, c.command] as const))('git tune %s --help: an Examples section that runs it', (path, command) => {
    const help = helpOf(command);
    const section = /\nExamples:\n((?: {2}.*\n?)+)/.exec(help);
    expect(section, `${path} --help has no Examples: section`).not.toBeNull();
    const lines = section![1]!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
    expect(lines.length).toBeGreaterThan(0);
    // Groups (memory, difficult, …) may show their subcommands; a leaf shows itself.
    const prefix = `git tune ${path}`;
    expect(lines.some((l) => l.trim().startsWith(prefix)), `${path}: no example starts with "${prefix}"\n${section![1]}`).toBe(true);
  });
});
