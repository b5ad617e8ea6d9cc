import type { CommandUnknownOpts, Help, Option } from '@commander-js/extra-typings';
import { EXIT_CODES } from '../errors.js';

/**
 * The man pages, written from the commander program itself: one page for
 * the tool (`git-tune.1`) and one per command and subcommand
 * (`git-tune-run.1`, `git-tune-memory-candidate.1`), so a flag added to a
 * command is in its page at the next build. `npm run build` writes them to
 * dist/man/ (scripts/man.mjs) and package.json's `man` ships them: git turns
 * `git tune --help` into `man git-tune`, which a global install answers.
 * Pure: the program in, roff text out.
 */
export interface ManPage {
  /** `git-tune-memory-candidate`: what `man` is asked for. */
  name: string;
  /** `git-tune-memory-candidate.1` */
  file: string;
  /** The command's words: `['memory', 'candidate']`; `[]` for the tool's own page. */
  path: string[];
  text: string;
}

/** Every page of the program: the tool's first, then each visible command, depth first in `--help` order. */
export function renderManPages(program: CommandUnknownOpts, version: string): ManPage[] {
  const pages: ManPage[] = [];
  const visit = (command: CommandUnknownOpts, path: string[]): void => {
    pages.push({ name: manPageName(path), file: `${manPageName(path)}.1`, path, text: renderPage(program, command, path, version) });
    for (const sub of visibleSubcommands(command)) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
  return pages;
}

/** `git-tune-memory-candidate` for `['memory', 'candidate']`. */
export function manPageName(path: readonly string[]): string {
  return ['git-tune', ...path].join('-');
}

function visibleSubcommands(command: CommandUnknownOpts): CommandUnknownOpts[] {
  // commander's own `help` command is not a page: `git tune help <cmd>` prints the command's page text.
  return command.createHelp().visibleCommands(command).filter((c) => c.name() !== 'help') as CommandUnknownOpts[];
}

function renderPage(program: CommandUnknownOpts, command: CommandUnknownOpts, path: string[], version: string): string {
  const help = command.createHelp();
  const name = manPageName(path);
  const invocation = ['git tune', ...path].join(' ');
  const [summary = '', ...more] = command.description().split('\n');
  const out: string[] = [
    `.\\" Generated from git-tune's command definitions (src/cli/man.ts); edit those, not this file.`,
    `.TH ${quoted(name.toUpperCase())} 1 "" ${quoted(`git-tune ${version}`)} "git-tune manual"`,
    // No hyphenation: command names and flags break only where they have a hyphen of their own.
    '.nh',
    '.SH NAME',
    `${escape(name)} \\- ${inline(summary)}`,
    '.SH SYNOPSIS',
    `.B ${escape(invocation)}`,
    escape(command.usage()),
  ];
  if (path.length === 0) out.push('.br', `.B git tune help ${escape('<command>')}`);

  out.push('.SH DESCRIPTION', inline(summary));
  for (const line of more) out.push('.PP', inline(line));
  if (path.length === 0) {
    out.push('.PP', inline('`git tune <command> --help` and `git tune help <command>` print a command\'s help; `man git-tune-<command>` shows its page (`git-tune-memory-candidate` for `git tune memory candidate`).'));
  }

  const args = help.visibleArguments(command);
  if (args.length > 0) {
    out.push('.SH ARGUMENTS');
    for (const arg of args) out.push('.TP', `.B ${escape(help.argumentTerm(arg))}`, inline(help.argumentDescription(arg) || '(see DESCRIPTION)'));
  }

  const options = help.visibleOptions(command);
  if (options.length > 0) {
    out.push('.SH OPTIONS');
    for (const option of options) out.push(...renderOption(help, option));
  }
  if (path.length > 0) {
    const globals = program.createHelp().visibleOptions(program).filter((o) => !['-h, --help', '-V, --version'].includes(o.flags));
    if (globals.length > 0) {
      out.push('.SH GLOBAL OPTIONS');
      for (const option of globals) out.push(...renderOption(help, option));
    }
  }

  const subcommands = visibleSubcommands(command);
  if (subcommands.length > 0) {
    out.push('.SH COMMANDS');
    for (const sub of subcommands) {
      out.push('.TP', `.B ${escape([invocation, sub.name(), sub.usage()].filter(Boolean).join(' '))}`, inline(sub.description().split('\n')[0] ?? ''));
      out.push('.br', `See \\fB${escape(manPageName([...path, sub.name()]))}\\fR(1).`);
    }
  }

  out.push(...renderHelpText(extraHelpText(command)));
  if (path.length === 0) {
    out.push('.SH "EXIT STATUS"');
    for (const e of EXIT_CODES) out.push('.TP', `.B ${e.code}`, `${inline(e.meaning)}: ${inline(e.todo)}.`);
  }

  const seeAlso = path.length === 0
    ? subcommands.map((c) => manPageName([c.name()]))
    : [manPageName([]), ...(path.length > 1 ? [manPageName(path.slice(0, -1))] : [])];
  out.push('.SH "SEE ALSO"', `${seeAlso.map((p) => `\\fB${escape(p)}\\fR(1)`).join(', ')}, \\fBgit\\fR(1)`);
  out.push('.PP', inline('The method, the contracts of runner, judge, editor and dataset, and troubleshooting: `docs/` in the git-tune repository or package (docs/method.md, docs/contracts.md, docs/troubleshooting.md).'));
  return `${out.join('\n')}\n`;
}

function renderOption(help: Help, option: Option): string[] {
  const lines = ['.TP', `.B ${escape(option.flags)}`, inline(option.description || '')];
  const extra = help.optionDescription(option).slice(option.description.length).trim();
  if (extra) lines.push(inline(extra));
  return lines;
}

/**
 * What the command's `--help` prints after commander's own part (examples,
 * notes, the settings list): the text of `addHelpText`, which commander
 * keeps only as listeners, so it is captured by printing the help.
 */
function extraHelpText(command: CommandUnknownOpts): string {
  let captured = '';
  command.configureOutput({ writeOut: (text) => { captured += text; }, writeErr: (text) => { captured += text; }, getOutHelpWidth: () => 100 });
  command.outputHelp();
  const own = command.helpInformation();
  const at = captured.indexOf(own);
  return at < 0 ? '' : `${captured.slice(0, at)}\n${captured.slice(at + own.length)}`;
}

/**
 * The extra help text as roff: a block (lines between blank lines) led by a
 * short heading such as `Examples:` becomes a section (EXAMPLES); indented
 * lines (commands, lists) are kept as they are; other lines are a paragraph.
 * The `Exit codes:` line of the tool's help is the EXIT STATUS section instead.
 */
function renderHelpText(text: string): string[] {
  const out: string[] = [];
  let inNotes = false;
  for (const block of text.split(/\n\s*\n/).map((b) => b.replace(/^\n+|\s+$/g, '')).filter(Boolean)) {
    if (block.startsWith('Exit codes:')) continue;
    const lines = block.split('\n');
    const heading = /^([A-Z][A-Za-z]*(?: [A-Za-z]+){0,3}):\s*(.*)$/.exec(lines[0]!);
    let body = lines;
    if (heading) {
      out.push(`.SH ${quoted(heading[1]!.toUpperCase())}`);
      inNotes = false;
      body = heading[2] ? [heading[2], ...lines.slice(1)] : lines.slice(1);
    } else if (!inNotes) {
      out.push('.SH NOTES');
      inNotes = true;
    } else out.push('.PP');
    out.push(...renderBlock(body));
  }
  return out;
}

function renderBlock(lines: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    if (/^\s/.test(lines[i]!)) {
      const pre: string[] = [];
      while (i < lines.length && /^\s/.test(lines[i]!)) pre.push(lines[i++]!);
      const indent = Math.min(...pre.map((l) => /^\s*/.exec(l)![0].length));
      out.push('.PP', '.RS 4', '.nf', ...pre.map((l) => escape(l.slice(indent))), '.fi', '.RE');
    } else {
      const para: string[] = [];
      while (i < lines.length && !/^\s/.test(lines[i]!)) para.push(lines[i++]!);
      out.push('.PP', inline(para.join(' ')));
    }
  }
  return out;
}

/** Text for a roff line: escaped, `code` in bold. */
function inline(text: string): string {
  return text.split(/(`[^`]+`)/).map((part) => (part.startsWith('`') && part.endsWith('`') && part.length > 1 ? `\\fB${escape(part.slice(1, -1))}\\fR` : escape(part))).join('');
}

/**
 * roff's special characters made literal: a backslash, a hyphen (so options
 * copy as ASCII `-`), a line start that would read as a request, and every
 * non-ASCII character as its Unicode escape (any man renders it, with or
 * without a UTF-8 preprocessor).
 */
function escape(text: string): string {
  const escaped = text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
  return /^[.']/.test(escaped) ? `\\&${escaped}` : escaped;
}

function quoted(text: string): string {
  return `"${escape(text).replace(/"/g, '\\(dq')}"`;
}
