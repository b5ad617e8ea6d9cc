import type { NextStep } from '../core/next.js';
import { jsonText } from './io.js';

/** The next step as `git tune next` prints it: the message, the command indented, then its notes. */
export function renderNext(step: NextStep): string {
  const lines = [step.message];
  if (step.command) lines.push(`  ${step.command}`);
  for (const note of step.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

/** What `git tune next` prints: the rendering above, or with --json the step as JSON. */
export function nextText(step: NextStep, json: boolean | undefined): string {
  return json ? jsonText(step) : renderNext(step);
}
