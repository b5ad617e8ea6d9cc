import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMANDS } from '../../src/cli/program.js';

const names = (program: { commands: readonly { name(): string }[] }) => program.commands.map((c) => c.name()).filter((n) => n !== 'help');

/**
 * A start declares only the command its argv names (buildProgram(argv)), so
 * the words beside each command file must be the ones it registers: a word
 * missing there would make that command unknown.
 */
describe('the program declares the command the argv names', () => {
  it('each command file registers exactly the words listed beside it', () => {
    for (const [command, words] of COMMANDS) {
      const program = new Command('git-tune') as unknown as CommandUnknownOpts;
      command.register(program);
      expect(names(program)).toEqual(words);
    }
  });

  it('a command word: that command alone, with its subcommands', () => {
    expect(names(buildProgram(['node', 'git-tune', 'next', '--json']))).toEqual(['next']);
    expect(names(buildProgram(['node', 'git-tune', '--debug', 'stop']))).toEqual(['auto', 'stop']);
    const memory = buildProgram(['node', 'git-tune', 'memory', 'candidate']).commands[0]!;
    expect(names(memory)).toEqual(['candidate', 'checkpoint']);
  });

  it('help, no command, or a word that names none: every command, in the order of --help', () => {
    const all = names(buildProgram());
    expect(all).toEqual(COMMANDS.flatMap(([, words]) => words));
    for (const argv of [['help', 'next'], [], ['--help'], ['nxt'], ['--help', 'next'], ['-h', 'next'], ['--debug', '--help', 'next']]) {
      expect(names(buildProgram(['node', 'git-tune', ...argv])), argv.join(' ')).toEqual(all);
    }
  });
});
