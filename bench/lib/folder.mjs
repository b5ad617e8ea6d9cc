// A `finetune/` folder of the folder method, in its scripts' file shapes, for
// the import benchmark: `cases` cases worked through in batches of `size`
// (a no-memory run graded MIXED with changes.md, a confirming run PASSED, the
// candidate, a with-memory run PASSED, the checkpoint), so the import replays
// about 13 steps per batch: 600 cases in batches of 5 is ~1,560 steps.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const json = (v) => `${JSON.stringify(v, null, 2)}\n`;
const pad = (n) => String(n).padStart(2, '0');
const caseId = (i) => `case-${String(i).padStart(4, '0')}`;

export function writeFinetuneFolder(root, { cases = 600, size = 5, recheck = 2 } = {}) {
  const files = new Map();
  const dirs = [];
  const classes = ['billing', 'tech', 'account', 'shipping'];
  const all = Array.from({ length: cases }, (_, i) => ({
    id: caseId(i + 1), class: classes[i % 4], complexity: ['simple', 'medium', 'complex'][i % 3],
    input: `Question ${i + 1}: where is my order?`, rubric: [{ id: 'r1', text: 'names the order status' }],
  }));
  files.set('README.md', '# Fine-tuning\n');
  files.set('dataset.json', json({ cases: all }));
  files.set('config.json', json({ limit: cases, minBatch: size, maxBatch: size, recheck, concurrency: 8, seed: 1, maxRetries: 3 }));
  files.set('selection.json', json({ batch: all.map((c) => ({ id: c.id, input: c.input })) }));
  const used = [];
  const lastGood = [];
  const batches = Math.ceil(cases / size);
  const findings = (verdict, ids, wrong, review) =>
    [`# Findings`, '', `## ${verdict}`, '', '| case | right | llm calls |', '| --- | --- | ---: |',
      ...ids.map((id) => `| ${id} | ${wrong.includes(id) ? 'no' : 'yes'} | 4 |`), '', ...(review ? [`## ${review}`, '', 'Every case read.', ''] : [])].join('\n');
  const batchJson = (ids) => json({ batch: { concurrency: 8, cases: ids.length, results: ids.map((id) => ({ id, tokens: 1200, costUsd: 0.004 })) } });
  for (let b = 1; b <= batches; b++) {
    const fresh = all.slice((b - 1) * size, b * size).map((c) => c.id);
    const again = used.length >= recheck ? Array.from({ length: recheck }, (_, k) => used[(b * 7 + k * 13) % used.length]).filter((v, i, a) => a.indexOf(v) === i) : [];
    used.push(...fresh);
    const ids = [...fresh, ...again];
    const casesJson = json({ batch: ids.map((id) => ({ id })) });
    const run = (half, n, verdict, wrong, review, changes) => {
      const name = `batch${pad(b)}-${half}-run${n}`;
      files.set(`runs/${name}/cases.json`, casesJson);
      dirs.push(`runs/${name}/batch`);
      files.set(`runs/${name}/batch/batch.json`, batchJson(ids));
      files.set(`runs/${name}/findings.md`, findings(verdict, ids, wrong, review));
      if (changes) files.set(`runs/${name}/changes.md`, `# Changes\n\nAims: ${wrong.join(', ')}\n\n- say the order status first\n`);
      return name;
    };
    files.set(`runs/batch${pad(b)}-nomem-run1/plan.json`, json({ batch: b, size, why: 'batch size is fixed', kind: 'new', new: fresh, recheck: again }));
    run('nomem', 1, 'MIXED', [fresh[0]], null, true);
    const passing = run('nomem', 2, 'PASSED', [], 'Cost review', false);
    files.set('memory/candidate.json', json({ from: passing }));
    run('mem', 1, 'PASSED', [], 'Memory review', false);
    lastGood.push(b);
  }
  files.set('memory/last-good.json', json({ batches: lastGood }));
  for (const d of dirs) mkdirSync(path.join(root, d), { recursive: true });
  for (const [rel, text] of files) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return { batches, runs: batches * 3 };
}
