import type { NextStep } from '../core/next.js';

/** The next step as `git tune next` prints it: the message, the command indented, then its notes. */
export function renderNext(step: NextStep): string {
  const lines = [step.message];
  if (step.command) lines.push(`  ${step.command}`);
  for (const note of step.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
