import { apiOptionsSchema, isApiPreset, PRESET_NAMES, type ApiOptions, type ApiPreset } from '../../contracts/presets.js';
import { redactText, type Secret } from '../../core/redact.js';
import { ModelError, type Model } from './llm/types.js';

/**
 * What the judge and editor API presets' programs share: which preset and
 * options git-tune gave them (TUNE_PRESET, TUNE_PRESET_OPTIONS), and the one
 * stderr line a failure ends with (git-tune shows the end of a failed
 * judge's or editor's stderr as the reason).
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** What a program talks through: the model (tests pass a scripted one; default: the HTTP client for the preset) and its output lines. */
export interface ProgramIo {
  model?: Model;
  out: (line: string) => void;
  err: (line: string) => void;
}

export function presetFromEnv(role: 'judge' | 'editor', env: Env): { preset: ApiPreset; options: ApiOptions } | { error: string } {
  const preset = env.TUNE_PRESET ?? '';
  if (!isApiPreset(preset)) return { error: `the ${role} API program runs the ${PRESET_NAMES[role].filter(isApiPreset).join(' and ')} presets; TUNE_PRESET is ${JSON.stringify(preset)}` };
  let json: unknown;
  try {
    json = JSON.parse(env.TUNE_PRESET_OPTIONS ?? '{}');
  } catch (err) {
    return { error: `${role} preset ${preset}: TUNE_PRESET_OPTIONS is not JSON (${(err as Error).message})` };
  }
  const parsed = apiOptionsSchema().safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `options.${i.path.join('.') || '(all)'}: ${i.message}`).join('; ');
    return { error: `${role} preset ${preset}: ${issues} (e.g. ${role}: {preset: ${preset}, options: {model: ${preset === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini'}}})` };
  }
  return { preset, options: parsed.data };
}

/** A model's failure as one line: what kind (a refused key, a server that stayed down, a refused request) and its message. */
export function modelFailureLine(role: 'judge' | 'editor', err: ModelError): string {
  const what = err.kind === 'auth' ? 'the key was refused' : err.kind === 'unavailable' ? 'the model stayed unavailable' : 'the model refused the request';
  return `${role} preset: ${what}: ${err.message}`;
}

/**
 * How a judge or editor program ends on a failure: one line saying why,
 * last (git-tune shows the end of stderr). A model's failure or a reply that
 * never validated (`replyError`) is the reason itself; anything else is a
 * fault of ours, so its stack comes first for whoever reads the log.
 */
export function reportFailure(role: 'judge' | 'editor', e: unknown, io: ProgramIo, secrets: readonly Secret[], replyError: new (...args: never[]) => Error): void {
  if (e instanceof ModelError) io.err(modelFailureLine(role, e));
  else if (e instanceof replyError) io.err(`${role} preset: ${e.message}`);
  else {
    io.err(redactText(String((e as Error).stack ?? e), secrets));
    io.err(redactText(`${role} preset: failed: ${(e as Error).message}`, secrets));
  }
}
