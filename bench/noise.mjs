// `npm run bench -- --only noise`: decisions on a noisy agent. `git tune auto`
// to its end on the slip agent (test/fixtures/slip: right prose still gives a
// wrong answer now and then, seeded) at 0%, 12% and 25% slips over several
// seeds, each trajectory scored against the fixture's truth from the history
// alone (test/fixtures/slip/trajectory.mjs, shared with
// test/e2e/noise-trajectory.test.ts). Writes its section of BENCHMARKS.md.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanup, makeTemplate, runAll, score, summarize, table, targets } from '../test/fixtures/slip/trajectory.mjs';

export const HEADING = '## Decisions on a noisy agent';
export const RATES = [0, 0.12, 0.25];

/** Runs the trajectories and returns the BENCHMARKS.md section, the targets and the raw scores. */
export async function noiseScenario({ seeds, log, tmp, parallel = Math.max(1, Math.min(4, os.cpus().length)) }) {
  const root = path.join(tmp, `noise-${process.pid}`);
  mkdirSync(root, { recursive: true });
  try {
    const started = Date.now();
    const template = await makeTemplate(root);
    const specs = RATES.flatMap((rate) => seeds.map((seed) => ({ rate, seed: String(seed) })));
    log(`  ${specs.length} trajectories (${RATES.map((r) => `${r * 100}%`).join(', ')} slips × seeds ${seeds.join(', ')}), ${parallel} at a time …`);
    const runs = await runAll(template, specs, { tmp: root, parallel });
    const scores = await Promise.all(runs.map((r) => score(r)));
    const rows = summarize(scores);
    const found = targets(rows);
    const seconds = Math.round((Date.now() - started) / 1000);
    const section = `${HEADING}

\`git tune auto\` to its end on the slip agent (\`test/fixtures/slip\`), whose right prose still gives a
wrong answer now and then, as a real model does: each answer on prose that makes a case right slips
with the given probability, seeded (the same seed gives the same slips), in every run of every case
prose can fix, the final check's included. Its editor proposes real fixes and useless edits; its
\`truth.mjs\` says which. Each trajectory is scored from the history alone (native git): an edit
decision is wrong when a real fix was reverted or a useless edit kept; a PASSED on unseen prose is a
half's verdict on prose no run of that half ran; a candidate from reverted prose is a candidate memory
built from a run whose prose the branch no longer holds; the final verdict is right when it is VERIFIED
exactly when every wrong answer is a slip or a stuck case (and the stuck cases are within
maxStuckShare). Runs are run commits (the final check's included); case runs are every answer the
runner gave (repeats included). ${seeds.length} seeds a rate, ${specs.length} tunings, ${seconds} s on
${os.cpus().length} cores (load at start ${os.loadavg()[0].toFixed(1)}), measured by \`npm run bench -- --only noise${seeds.length <= 2 ? ' --quick' : ''}\`
on ${new Date().toISOString().slice(0, 10)}. The targets (docs/method.md#noise) are asserted by
\`test/e2e/noise-trajectory.test.ts\` over two seeds.

${table(rows)}

${found.map((t) => `- ${t.met ? 'met' : '**not met**'}: ${t.what} (${t.value === null ? 'n/a' : Number.isInteger(t.value) ? t.value : t.value.toFixed(2)})`).join('\n')}

Per trajectory:

${scores.map((s) => `- ${Math.round(s.rate * 100)}%, seed ${s.seed}: ${s.wrongDecisions} of ${s.decisions} edit decisions wrong, ${s.runs} runs, ${s.caseRuns} case runs; ${s.final ? `final check ${s.final.verdict} (wrong: ${s.final.wrong.join(', ') || 'none'}; slips: ${s.final.slips.join(', ') || 'none'}; stuck: ${s.final.stuck.join(', ') || 'none'})` : `not finished: ${s.closing}`}`).join('\n')}
`;
    return { section, targets: found, raw: { seeds, rates: RATES, rows, scores: scores.map(({ edits, ...s }) => ({ ...s, edits: edits.map((e) => ({ run: e.run, real: e.real, decision: e.decision })) })) } };
  } finally {
    cleanup(root);
  }
}

/** Puts the section in place of its old one in BENCHMARKS.md (or at the end). */
export function spliceNoise(markdown, section) {
  const at = markdown.indexOf(HEADING);
  if (at < 0) return `${markdown.trimEnd()}\n\n${section}`;
  const next = markdown.indexOf('\n## ', at + HEADING.length);
  return `${markdown.slice(0, at)}${section}${next >= 0 ? markdown.slice(next) : ''}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { section } = await noiseScenario({ seeds: [1, 2], log: (t) => process.stderr.write(`${t}\n`), tmp: os.tmpdir() });
  process.stdout.write(section);
}
