import type { Plan } from '../app/plan.js';

/** `--dry-run`'s plan as text: each commit's message (subject, body, trailers), its files and tags. */
export function renderPlan(plan: Plan): string {
  const lines = [`dry run: nothing written; ${plan.commits.length === 0 ? 'no commit yet' : `${plan.commits.length} commit${plan.commits.length === 1 ? '' : 's'} it would write`}`];
  plan.commits.forEach((c, i) => {
    lines.push('', `commit ${i + 1} of ${plan.commits.length}${c.tags.length ? ` (tag ${c.tags.join(', ')})` : ''}`);
    for (const l of c.message.trimEnd().split('\n')) lines.push(`    ${l}`.trimEnd());
    lines.push('  files:', ...(c.files.length ? c.files.map((f) => `    ${f.deleted ? 'delete' : 'write'} ${f.path}`) : ['    (none)']));
  });
  if (plan.then) lines.push('', `then: ${plan.then}`);
  return lines.join('\n');
}
