import { fileURLToPath } from 'node:url';
import type { CommandSpec } from '../../contracts/config.js';
import { usageError } from '../../errors.js';

/** Runner presets: programs of ours that speak the runner contract. */
export const PRESETS = ['openai-chat', 'claude-code'] as const;

/** The argv that runs a command spec: its own command, or the preset's program. */
export function resolveCommand(spec: CommandSpec): { command: string[]; shell: boolean; env: Record<string, string> } {
  if (!spec.preset) return { command: spec.command ?? [], shell: spec.shell, env: {} };
  if (!(PRESETS as readonly string[]).includes(spec.preset)) {
    throw usageError('unknown-preset', `runner preset "${spec.preset}" does not exist (presets: ${PRESETS.join(', ')})`, 'git tune config set runner.preset openai-chat');
  }
  const program = fileURLToPath(new URL(`./${spec.preset}.js`, import.meta.url));
  return { command: [process.execPath, program], shell: false, env: { TUNE_PRESET_OPTIONS: JSON.stringify(spec.options ?? {}) } };
}
