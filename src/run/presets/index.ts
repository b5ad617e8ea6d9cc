import { fileURLToPath } from 'node:url';
import type { CommandSpec } from '../../contracts/config.js';
import { PRESET_NAMES, presetProblem, type Role } from '../../contracts/presets.js';
import { usageError } from '../../errors.js';

/**
 * Presets: ready programs of ours that speak a role's contract (runner,
 * judge, editor: docs/contracts.md) like any user's program would, so a
 * user with an API key writes no program at all. Each is valid only in its
 * own role (src/contracts/presets.ts names them). The program a preset
 * runs is `dist/bin/<program>.js`, one per role and transport (the HTTP
 * APIs, the agent CLIs), told which preset it is by `TUNE_PRESET`.
 */

/** The program (`dist/bin/<program>.js`) each preset runs in each role. */
const PROGRAMS: { [R in Role]: Record<(typeof PRESET_NAMES)[R][number], string> } = {
  runner: { 'openai-chat': 'runner-api', anthropic: 'runner-api', 'claude-code': 'runner-cli', codex: 'runner-cli' },
  judge: { 'openai-chat': 'judge-api', anthropic: 'judge-api' },
  editor: { 'openai-chat': 'editor-api', anthropic: 'editor-api', 'claude-code': 'editor-cli', codex: 'editor-cli' },
};

/** The files a preset may read or edit, from the tuning's config: the presets find the prose themselves. */
export interface PresetScope {
  prose: readonly string[];
  memoryPolicy: readonly string[];
}

/** The argv that runs a command spec in a role: its own command, or the preset's program. */
export function resolveCommand(spec: CommandSpec, role: Role, scope: PresetScope): { command: string[]; shell: boolean; env: Record<string, string> } {
  if (!spec.preset) return { command: spec.command ?? [], shell: spec.shell, env: {} };
  const problem = presetProblem(role, spec.preset);
  if (problem) throw usageError('unknown-preset', problem, `git tune config set ${role}.preset ${PRESET_NAMES[role][0]}`);
  const program = fileURLToPath(new URL(`./${(PROGRAMS[role] as Record<string, string>)[spec.preset]}.js`, import.meta.url));
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
