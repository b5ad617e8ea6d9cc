import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decideNext } from '../../src/core/next.js';
import { HAND_PLACEHOLDER, renderReadme } from '../../src/core/readme.js';
import { renderUsage } from '../../src/core/usage.js';
import { ROOT } from '../helpers/cli.js';
import { add, fix, History, ids, makeConfig, mem, nomem } from '../helpers/history.js';
import { checkFlowchart, checkXyChart, mermaidBlocks } from '../helpers/mermaid.js';
import { overlaps, renderMermaid, WIDTH, type Rendered } from '../helpers/render.js';

/**
 * The README's map and the USAGE chart as a reader sees them: rendered by
 * the real mermaid library in headless Chromium at GitHub's content width
 * (900 px), for a tuning 3 batches in and one 30 batches in. Every line of
 * text must be at least 10 px high once the diagram is scaled to fit. The
 * 30-batch pictures are kept in test-artifacts/ (CI uploads the folder).
 */
const CONFIG = makeConfig({ minBatch: 3, maxBatch: 10 });
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const MIN_TEXT_PX = 10;

/**
 * A tuning `batches` batches in, made as the product records it: sizes by
 * the growth rule's usual course (3, 6, then 10), every fifth batch needing a
 * second no-memory run and adding a difficult case (fixed a batch later),
 * the last batch part-way (its with-memory run started, or with `endMixed`
 * its first run graded MIXED and an edit made).
 */
function tuning(batches: number, selected: number, opts: { endMixed?: boolean } = {}) {
  const selection = ids('c', 1, selected);
  let difficult: string | null = null;
  const h = new History().setup(selected);
  let used = 0;
  let size = 3;
  for (let n = 1; n <= batches; n++) {
    const fresh = selection.slice(used, used + size);
    const recheck = used > 0 ? selection.slice(Math.max(0, used - 3), used) : [];
    used += size;
    const rough = n % 5 === 0;
    h.plan(n, fresh, recheck);
    if (opts.endMixed && n === batches) {
      // Stopped where a batch often is: its first run graded MIXED, a case added to the difficult list, an edit made.
      h.ran(nomem(n, 1), 'MIXED', [fresh[0]!, fresh[1]!], { tokens: 15_000, difficult: [add(fresh[0]!, 'wrong')] });
      h.edit(nomem(n, 1), [fresh[0]!]);
      break;
    }
    let passed = nomem(n, 1);
    if (rough) {
      h.ran(nomem(n, 1), 'MIXED', [fresh[0]!], { tokens: 14_000 + 90 * n, difficult: [add(fresh[0]!, 'wrong')] });
      difficult = fresh[0]!;
      h.edit(nomem(n, 1), [fresh[0]!]);
      passed = nomem(n, 2);
    }
    h.ran(passed, 'PASSED', [], { tokens: 12_000 + 100 * n });
    h.candidate(passed);
    h.start(mem(n, 1));
    if (n === batches) break;
    h.finish(mem(n, 1), { tokens: 4_000 + 20 * n });
    h.grade(mem(n, 1), 'PASSED', [], difficult && !rough ? { difficult: [fix(difficult)] } : {});
    if (!rough) difficult = null;
    h.checkpoint(n);
    size = rough ? size : Math.min(CONFIG.maxBatch, size * 2);
  }
  const state = h.fold(selection);
  const next = decideNext({ state, config: CONFIG, selection, complexity: () => 'medium', dir: '.tune/demo' });
  const readme = renderReadme({ state, commits: h.commits, config: CONFIG, selection, next, summaries: new Map(), hand: HAND_PLACEHOLDER });
  const usage = renderUsage({ state, summaries: new Map() });
  return { map: mermaidBlocks(readme)[0]!, chart: mermaidBlocks(usage)[0]! };
}

function expectLegible(r: Rendered, what: string): number {
  expect(r.error, what).toBeNull();
  expect(r.lines.length, what).toBeGreaterThan(0);
  expect(r.width, what).toBeLessThanOrEqual(WIDTH);
  const smallest = r.lines.reduce((a, b) => (b.height < a.height ? b : a));
  expect(smallest.height, `${what}: "${smallest.text}" is drawn ${smallest.height.toFixed(1)} px high`).toBeGreaterThanOrEqual(MIN_TEXT_PX);
  expect(overlaps(r.lines), `${what}: text drawn over text`).toEqual([]);
  return smallest.height;
}

describe('the map and the chart, rendered by mermaid in headless Chromium at 900 px', () => {
  // No skip: on a machine without Chromium every test fails, saying how to get it (renderMermaid throws).
  beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

  const report = (what: string, r: Rendered, smallest: number) =>
    console.log(`${what}: ${r.naturalWidth.toFixed(0)} px wide drawn at ${r.width.toFixed(0)} × ${r.height.toFixed(0)} px; ${r.lines.length} lines of text, the smallest ${smallest.toFixed(1)} px high`);

  it('a tuning 3 batches in: every batch a subgraph, the batches ahead each drawn', async () => {
    const { map, chart } = tuning(3, 40, { endMixed: true });
    const check = checkFlowchart(map);
    expect(check.problems).toEqual([]);
    expect([...check.subgraphs.keys()].slice(0, 3)).toEqual(['B1', 'B2', 'B3']);
    expect(check.nodes.has('past')).toBe(false);
    expect(checkXyChart(chart)).toEqual([]);
    const [r, u] = await Promise.all([renderMermaid(map), renderMermaid(chart)]);
    report('README map, 3 batches', r, expectLegible(r, 'map, 3 batches'));
    report('USAGE chart, 3 batches', u, expectLegible(u, 'chart, 3 batches'));
  });

  it('a tuning 30 batches in: finished batches and batches ahead grouped; the PNGs kept in test-artifacts/', async () => {
    const { map, chart } = tuning(30, 360);
    const check = checkFlowchart(map);
    expect(check.problems).toEqual([]);
    expect(check.subgraphs.size).toBeLessThanOrEqual(12);
    expect(check.nodes.get('past')).toMatch(/^batches 1-\d+: done/);
    expect(check.nodes.get('ahead')).toMatch(/^batches \d+-\d+ planned/);
    expect(checkXyChart(chart)).toEqual([]);
    const pngs = { map: path.join(ARTIFACTS, 'map-30-batches.png'), chart: path.join(ARTIFACTS, 'usage-chart-30-batches.png') };
    const [r, u] = await Promise.all([renderMermaid(map, { png: pngs.map }), renderMermaid(chart, { png: pngs.chart })]);
    report('README map, 30 batches', r, expectLegible(r, 'map, 30 batches'));
    report('USAGE chart, 30 batches', u, expectLegible(u, 'chart, 30 batches'));
    for (const png of Object.values(pngs)) {
      const bytes = readFileSync(png);
      expect(bytes.subarray(1, 4).toString('latin1'), png).toBe('PNG');
      expect(bytes.readUInt32BE(16), `${png} width`).toBe(WIDTH);
    }
  });

  it('what mermaid cannot draw is reported, not measured', async () => {
    const r = await renderMermaid('flowchart TD\n  a["one"] --> \n  subgraph');
    expect(r.error).toMatch(/parse error/i);
    expect(r.lines).toEqual([]);
  });
});
