import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, renderConfig, setConfigValue, setConfigValues } from '../../src/app/config-file.js';
import { configValue, setConfig } from '../../src/app/config-set.js';
import { initTuning } from '../../src/app/init.js';
import { openTuning } from '../../src/app/tuning.js';
import { initConfigValues } from '../../src/contracts/config.js';
import { PRESET_NAMES } from '../../src/contracts/presets.js';
import { TuneError } from '../../src/errors.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * Presets in config.yaml (docs/presets.md): valid only in their own role,
 * their options checked against the preset's schema when the config is
 * read, a role running either its command or a preset; and `init --preset`,
 * which sets all three roles at once.
 */
const FILE = '.tune/desk/config.yaml';

function refusal(fn: () => unknown): TuneError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TuneError) return err;
    throw err;
  }
  throw new Error('accepted');
}

const config = (roles: Record<string, unknown>) => renderConfig({ ...initConfigValues(), prose: ['prompts/*.md'], ...roles });

describe('config.yaml: a preset is valid only in its role, with its options checked', () => {
  it('takes every preset of each role, with the options its schema asks for', () => {
    for (const role of ['runner', 'judge', 'editor'] as const) {
      for (const preset of PRESET_NAMES[role]) {
        const options = preset === 'openai-chat' || preset === 'anthropic' ? { model: 'm-1', temperature: 0 } : { bin: './fake', args: ['--x'] };
        const parsed = parseConfig(config({ [role]: { preset, options } }), FILE).config[role]!;
        expect(parsed, `${role} ${preset}`).toMatchObject({ preset, options });
      }
    }
  });

  it('refuses an unknown preset and another role\'s preset, listing the role\'s presets', () => {
    const text = config({ editor: { preset: 'llm-editor' } });
    const line = text.split('\n').indexOf('  preset: llm-editor') + 1;
    const unknown = refusal(() => parseConfig(text, FILE));
    expect(unknown.code).toBe('bad-config');
    expect(unknown.details).toEqual([
      `${FILE} line ${line}: field \`editor.preset\` preset "llm-editor" does not exist (editor presets: ${PRESET_NAMES.editor.join(', ')}) (found "llm-editor")`,
    ]);
    const misplaced = refusal(() => parseConfig(config({ judge: { preset: 'claude-code' } }), FILE));
    expect(misplaced.details[0]).toContain('field `judge.preset` "claude-code" is a runner and editor preset, not a judge preset (judge presets: openai-chat, anthropic)');
  });

  it('names the key path of a bad option, the model missing with how to set it, an unknown option with the preset\'s options', () => {
    const noModel = refusal(() => parseConfig(config({ runner: { preset: 'openai-chat' } }), FILE));
    expect(noModel.details).toHaveLength(1);
    expect(noModel.details[0]).toMatch(/field `runner\.options\.model` must name the model: .*\(git tune config set runner\.options\.model gpt-4o-mini\) \(found nothing\)$/);
    const bad = refusal(() => parseConfig(config({ judge: { preset: 'anthropic', options: { model: 'm', modle: 'x', temperature: 9 } } }), FILE));
    expect(bad.details).toHaveLength(2);
    expect(bad.details.find((d) => d.includes('judge.options.temperature'))).toContain('(found number 9)');
    expect(bad.details.find((d) => d.includes('judge.options.modle'))).toMatch(/is not an option of the anthropic preset \(its options: model, .*maxRetries.*\)/);
    const cli = refusal(() => parseConfig(config({ editor: { preset: 'codex', options: { model: 'x', args: 'not a list' } } }), FILE));
    expect(cli.details.some((d) => d.includes('field `editor.options.args`'))).toBe(true);
    expect(cli.details.some((d) => d.includes('field `editor.options.model` is not an option of the codex preset'))).toBe(true);
  });

  it('refuses a role with both a command and a preset (which runs would be ambiguous), and options without a preset', () => {
    const both = refusal(() => parseConfig(config({ runner: { command: ['node', 'a.js'], preset: 'openai-chat', options: { model: 'm' } } }), FILE));
    expect(both.details[0]).toContain('field `runner.preset` cannot be set together with `command`');
    const loose = refusal(() => parseConfig(config({ runner: { command: ['node', 'a.js'], options: { model: 'm' } } }), FILE));
    expect(loose.details[0]).toContain('field `runner.options` belong to a preset');
    const none = refusal(() => parseConfig(config({ judge: { timeoutSec: 5 } }), FILE));
    expect(none.details[0]).toContain('needs `command` (e.g. ["node", "agent.js"]) or a `preset` (openai-chat, anthropic)');
  });

  it('still suggests the closest key for a typo next to a preset', () => {
    const typo = refusal(() => parseConfig(config({ runner: { preset: 'codex', timeoutSecs: 5 } }), FILE));
    expect(typo.details[0]).toContain('field `runner.timeoutSecs` is not a setting; did you mean `runner.timeoutSec`?');
  });
});

describe('config set with presets', () => {
  const withCommand = config({ runner: { command: ['node', 'agent.js'] } });

  it('sets any option of a preset by its path; a preset replaces the command and a command the preset', () => {
    const asPreset = setConfigValue(withCommand, 'runner', configValue('runner', '{preset: openai-chat, options: {model: gpt-4o-mini}}'), FILE);
    expect(asPreset.config.runner).toMatchObject({ preset: 'openai-chat', options: { model: 'gpt-4o-mini' } });
    expect(asPreset.config.runner!.command).toBeUndefined();
    const model = setConfigValue(asPreset.text, 'runner.options.model', configValue('runner.options.model', 'gpt-4o'), FILE);
    expect(model.config.runner!.options).toEqual({ model: 'gpt-4o' });
    const price = setConfigValue(model.text, 'runner.options.pricing.inputPerMTok', configValue('x', '0.15'), FILE);
    expect(price.config.runner!.options).toEqual({ model: 'gpt-4o', pricing: { inputPerMTok: 0.15 } });
    const back = setConfigValue(price.text, 'runner.command', configValue('runner.command', 'node agent.js'), FILE);
    expect(back.dropped).toEqual(['runner.preset', 'runner.options']);
    expect(back.config.runner).toMatchObject({ command: ['node', 'agent.js'] });
    expect(back.config.runner!.preset).toBeUndefined();
    const cli = setConfigValue(withCommand, 'runner.preset', 'claude-code', FILE);
    expect(cli.dropped).toEqual(['runner.command']);
    const args = setConfigValue(cli.text, 'runner.options.args', configValue('runner.options.args', '--max-turns 8'), FILE);
    expect(args.config.runner!.options).toEqual({ args: ['--max-turns', '8'] });
  });

  it('an API preset set alone is refused with the one command that sets it with its model', () => {
    const err = refusal(() => setConfigValue(withCommand, 'judge.preset', 'openai-chat', FILE));
    expect(err.code).toBe('bad-config');
    expect(err.message).toBe('judge.preset openai-chat needs a model too (options.model)');
    expect(err.hint).toBe('git tune config set judge.preset openai-chat judge.options.model gpt-4o-mini');
    // The hint works as given: both keys at once.
    const set = setConfigValues(withCommand, [['judge.preset', 'openai-chat'], ['judge.options.model', 'gpt-4o-mini']], FILE);
    expect(set.config.judge).toMatchObject({ preset: 'openai-chat', options: { model: 'gpt-4o-mini' } });
    const anthropic = refusal(() => setConfigValues(withCommand, [['runner.preset', 'anthropic'], ['runner.options.temperature', 0]], FILE));
    expect(anthropic.hint).toBe('git tune config set runner.preset anthropic runner.options.model claude-sonnet-4-5');
    // The whole role as one value works too.
    const whole = setConfigValue(withCommand, 'judge', configValue('judge', '{preset: openai-chat, options: {model: gpt-4o-mini}}'), FILE);
    expect(whole.config.judge).toEqual(set.config.judge);
  });

  it('keys outside options and env stay refused with a suggestion', () => {
    const err = refusal(() => setConfigValue(withCommand, 'runner.option.model', 'x', FILE));
    expect(err.code).toBe('unknown-config-key');
    expect(err.message).toContain('did you mean `runner.options`?');
  });
});

describe('init --preset', () => {
  const repos: TempRepo[] = [];
  afterEach(() => {
    for (const r of repos.splice(0)) r.cleanup();
  });
  const ctx = (repo: TempRepo) => ({ env: { ...process.env, ...repo.env }, now: new Date('2026-01-01T00:00:00Z') });

  it('sets all three roles to the provider\'s preset with the model; a role given its own command keeps it', async () => {
    const repo = TempRepo.create({ 'prompts/a.md': 'Answer.\n' });
    repos.push(repo);
    await initTuning(repo.dir, 'desk', { prose: ['prompts/*.md'], preset: 'anthropic', model: 'claude-sonnet-4-5', runner: 'node agent.js' }, ctx(repo));
    const written = parse(readFileSync(repo.path('.tune/desk/config.yaml'), 'utf8'));
    expect(written.runner).toEqual({ command: ['node', 'agent.js'] });
    expect(written.judge).toEqual({ preset: 'anthropic', options: { model: 'claude-sonnet-4-5' } });
    expect(written.editor).toEqual({ preset: 'anthropic', options: { model: 'claude-sonnet-4-5' } });
    expect(readFileSync(repo.path('.tune/desk/config.yaml'), 'utf8')).not.toMatch(/[&*]a\d/); // no YAML anchors
    const tuning = await openTuning(repo.dir);
    expect(tuning.config!.editor).toMatchObject({ preset: 'anthropic' });
    // An agent CLI's preset takes no `model`: the API preset's options go with it, and the commit says so.
    const { dropped, config, commit } = await setConfig(tuning, 'editor.preset', 'claude-code', ctx(repo));
    expect(dropped).toEqual(['editor.options']);
    expect(config.editor).toMatchObject({ preset: 'claude-code' });
    expect(config.editor!.options).toBeUndefined();
    expect(repo.git('log', '-1', '--format=%s', commit!).trim()).toBe('tune(desk): config editor.preset = "claude-code" (drops editor.options)');
    // Between the two API presets the options stay (the same schema).
    const again = await setConfig(await openTuning(repo.dir), 'judge.preset', 'openai-chat', ctx(repo));
    expect(again.dropped).toEqual([]);
    expect(again.config.judge).toMatchObject({ preset: 'openai-chat', options: { model: 'claude-sonnet-4-5' } });
  });

  it('refuses --preset without --model, an unknown provider, and --model alone, writing nothing', async () => {
    const repo = TempRepo.create({ 'prompts/a.md': 'Answer.\n' });
    repos.push(repo);
    const tries: Array<[Record<string, string>, string, string]> = [
      [{ preset: 'openai' }, 'bad-options', '--preset openai needs --model'],
      [{ preset: 'gemini', model: 'x' }, 'unknown-preset', '--preset gemini: not a provider (--preset takes openai or anthropic)'],
      [{ model: 'x' }, 'bad-options', '--model goes with --preset'],
    ];
    for (const [flags, code, message] of tries) {
      const err = await initTuning(repo.dir, 'desk', { prose: ['prompts/*.md'], ...flags }, ctx(repo)).then(() => null, (e: TuneError) => e);
      expect(err?.code).toBe(code);
      expect(err?.message).toContain(message);
      expect(err?.hint).toMatch(/^git tune init desk --prose 'prompts\/\*\.md' --preset (openai|anthropic) --model \S+$/);
    }
    expect(repo.git('branch', '--list').trim()).toBe('* main');
    // The preset's own name serves as well as the provider's.
    await initTuning(repo.dir, 'desk', { prose: ['prompts/*.md'], preset: 'openai-chat', model: 'gpt-4o-mini' }, ctx(repo));
    expect((await openTuning(repo.dir)).config!.runner).toMatchObject({ preset: 'openai-chat', options: { model: 'gpt-4o-mini' } });
  });
});
