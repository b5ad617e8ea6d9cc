import { fileURLToPath } from 'node:url';
import type { CommandSpec } from '../../contracts/config.js';
import { usageError } from '../../errors.js';

/**
 * Presets: ready programs of ours that speak a role's contract (runner,
 * judge, editor: docs/contracts.md) like any user's program would, so a
 * user with an API key writes no program at all. Each is valid only in its
 * own role; the program a preset runs is `dist/bin/<program>.js`, one per
 * role and transport (the HTTP APIs, the agent CLIs), told which preset it
 * is by `TUNE_PRESET`.
 */
export type Role = 'runner' | 'judge' | 'editor';

export const PRESETS = {
  runner: { 'openai-chat': 'runner-api', anthropic: 'runner-api', 'claude-code': 'runner-cli', codex: 'runner-cli' },
  judge: { 'openai-chat': 'judge-api', anthropic: 'judge-api' },
  editor: { 'openai-chat': 'editor-api', anthropic: 'editor-api', 'claude-code': 'editor-cli', codex: 'editor-cli' },
} as const satisfies Record<Role, Record<string, string>>;

export const presetsOf = (role: Role): string[] => Object.keys(PRESETS[role]);

/** Why a preset name is not valid in a role (unknown, or another role's), listing the valid ones; null when it is. */
export function presetProblem(role: Role, preset: string): string | null {
  if (Object.hasOwn(PRESETS[role], preset)) return null;
  const valid = `${role} presets: ${presetsOf(role).join(', ')}`;
  const elsewhere = (Object.keys(PRESETS) as Role[]).filter((r) => Object.hasOwn(PRESETS[r], preset));
  return elsewhere.length > 0
    ? `"${preset}" is a ${elsewhere.join(' and ')} preset, not a ${role} preset (${valid})`
    : `preset "${preset}" does not exist (${valid})`;
}

/** The files a preset may read or edit, from the tuning's config: the presets find the prose themselves. */
export interface PresetScope {
  prose: readonly string[];
  memoryPolicy: readonly string[];
}

/** The argv that runs a command spec in a role: its own command, or the preset's program. */
export function resolveCommand(spec: CommandSpec, role: Role, scope: PresetScope): { command: string[]; shell: boolean; env: Record<string, string> } {
  if (!spec.preset) return { command: spec.command ?? [], shell: spec.shell, env: {} };
  const problem = presetProblem(role, spec.preset);
  if (problem) throw usageError('unknown-preset', problem, `git tune config set ${role}.preset ${presetsOf(role)[0]}`);
  const program = fileURLToPath(new URL(`./${PRESETS[role][spec.preset as keyof (typeof PRESETS)[typeof role]]}.js`, import.meta.url));
  return {
    command: [process.execPath, program],
    shell: false,
    env: {
      TUNE_PRESET: spec.preset,
      TUNE_PRESET_OPTIONS: JSON.stringify(spec.options ?? {}),
      TUNE_PROSE_GLOBS: JSON.stringify({ prose: scope.prose, memoryPolicy: scope.memoryPolicy }),
    },
  };
}
