import { afterAll, describe, expect, it } from 'vitest';
import { TempRepo } from '../helpers/repo.js';

/**
 * Presets through the CLI (docs/presets.md): `init --preset` sets the three
 * roles, `config set` refuses an unknown or misplaced preset with exit 2 and
 * writes nothing, `config` prints them, and the help teaches it.
 */
describe('presets from the command line', () => {
  const repo = TempRepo.create({ 'prompts/desk.md': 'Answer in one line.\n' });
  afterAll(() => repo.cleanup());

  it('init --preset openai --model m sets runner, judge and editor; config set refuses bad presets and writes nothing', () => {
    const help = repo.tune(['init', '--help']);
    expect(help.stdout).toContain('--preset <provider>');
    expect(help.stdout).toContain("git tune init desk --prose 'prompts/*.md' --preset openai --model gpt-4o-mini --dataset cases.jsonl");
    expect(help.stdout).toMatch(/--runner\/--judge\/--editor,\s+when\s+given,\s+win\s+for\s+their\s+own\s+role/);

    const noModel = repo.tune(['init', 'desk', '--prose', 'prompts/*.md', '--preset', 'openai', '--no-hooks']);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--preset openai needs --model');
    expect(noModel.stderr).toContain("git tune init desk --prose 'prompts/*.md' --preset openai --model gpt-4o-mini");

    expect(repo.tune(['init', 'desk', '--prose', 'prompts/*.md', '--preset', 'openai', '--model', 'gpt-4o-mini', '--no-hooks']).code).toBe(0);
    const shown = repo.tuneJson(['config']);
    for (const role of ['runner', 'judge', 'editor']) expect(shown[role]).toMatchObject({ preset: 'openai-chat', options: { model: 'gpt-4o-mini' } });

    const tip = repo.git('rev-parse', 'HEAD').trim();
    const unknown = repo.tune(['config', 'set', 'editor.preset', 'llm-editor']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('preset "llm-editor" does not exist (editor presets: openai-chat, anthropic, claude-code, codex)');
    const misplaced = repo.tune(['config', 'set', 'judge.preset', 'claude-code']);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('"claude-code" is a runner and editor preset, not a judge preset (judge presets: openai-chat, anthropic)');
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(tip);
    expect(repo.git('status', '--porcelain')).toBe('');

    const model = repo.tune(['config', 'set', 'judge.options.model', 'gpt-4o']);
    expect(model.code).toBe(0);
    expect(repo.tuneJson(['config']).judge.options).toEqual({ model: 'gpt-4o' });
    // A preset and its model in one commit; from an API preset to an agent CLI's the old options go.
    const alone = repo.tune(['config', 'set', 'runner.preset', 'anthropic', 'runner.options.model']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('`runner.options.model` has no value');
    const pair = repo.tune(['config', 'set', 'runner.preset', 'anthropic', 'runner.options.model', 'claude-haiku-4-5']);
    expect(pair.code, pair.stderr).toBe(0);
    expect(pair.stdout.trim()).toBe('runner.preset = "anthropic", runner.options.model = "claude-haiku-4-5"');
    expect(repo.git('log', '-1', '--format=%(trailers:key=Tune-Keys,valueonly)').trim()).toBe('runner.preset,runner.options.model');
    const cli = repo.tune(['config', 'set', 'editor.preset', 'claude-code']);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('(dropped editor.options');
    expect(repo.tuneJson(['config']).editor).toMatchObject({ preset: 'claude-code' });
    const printed = repo.tune(['config']).stdout;
    expect(printed).toMatch(/judge:\n(?: {2}.*\n)*? {2}preset: openai-chat\n {2}options:\n {4}model: gpt-4o\n/);
    repo.fsck();
  });
});
