import { describe, expect, it } from 'vitest';
import { decideNext } from '../../src/core/next.js';
import { extractHandSection, HAND_END, HAND_PLACEHOLDER, HAND_START, isHandPlaceholder, predictBatches, renderReadme } from '../../src/core/readme.js';
import { GITHUB_BODY_LIMIT, renderReview, type ReviewInput } from '../../src/core/review.js';
import { renderUsage, summarizeResults, type RunSummary } from '../../src/core/usage.js';
import { parseRemoteUrl, githubRepoOf, webUrlOf, ghCreateLine } from '../../src/app/github.js';
import { rewriteMessage } from '../../src/app/hooks.js';
import { isSealed, parseStep } from '../../src/core/steps.js';
import { parseMessage } from '../../src/core/trailers.js';
import { checkFlowchart, checkXyChart, mermaidBlocks } from '../helpers/mermaid.js';
import { add, History, ids, makeConfig, mem, nomem, TUNING } from '../helpers/history.js';

/**
 * The generated README.md and USAGE.md, the review body, and the pure parts
 * of the hooks: rendered from hand-built histories, no disk.
 */
const SELECTION = ids('c', 1, 12);
const CONFIG = makeConfig({ minBatch: 3, maxBatch: 6, memoryPolicy: ['agents/memory-policy.md'] });

/** Stand-in results: every finished run's numbers follow from its name. */
function summariesOf(h: History): Map<string, RunSummary> {
  const out = new Map<string, RunSummary>();
  for (const run of h.fold(SELECTION).runs.values()) {
    if (!run.finished) continue;
    const memory = run.half === 'mem';
    out.set(run.name, {
      run: run.name, cases: run.cases.length, rightByChecks: run.cases.length, tokens: run.tokens, costUsd: run.costUsd,
      llmCalls: run.cases.length * (memory ? 1 : 3), toolCalls: 0, memoryReads: memory ? run.cases.length : 0,
      memoryWrites: memory ? 0 : run.cases.length, savedTwice: memory && run.number === 1 ? 2 : 0,
      models: [{ model: 'm-main', inputTokens: run.tokens - 100, outputTokens: 100, cachedTokens: 0, costUsd: run.costUsd }],
    });
  }
  return out;
}

function readmeOf(h: History, hand = HAND_PLACEHOLDER): string {
  const state = h.fold(SELECTION);
  const selection = state.selection ? SELECTION : [];
  const next = decideNext({ state, config: CONFIG, selection, complexity: () => 'medium', dir: `.tune/${TUNING}`, readmePlaceholder: isHandPlaceholder(hand) });
  return renderReadme({ state, commits: h.commits, config: CONFIG, selection, next, summaries: summariesOf(h), hand });
}

const scrub = (text: string) => text.replace(/\b[0-9a-f]{7,40}\b/g, '<id>');

function expectMapSound(readme: string): ReturnType<typeof checkFlowchart> {
  const blocks = mermaidBlocks(readme);
  expect(blocks).toHaveLength(1);
  const map = checkFlowchart(blocks[0]!);
  expect(map.problems).toEqual([]);
  return map;
}

const nowOf = (map: ReturnType<typeof checkFlowchart>) => [...map.classes].find(([, c]) => c === 'now')![0];

/** One tuning told step by step: every step kind, in the order a tuning meets them. */
function story(): Array<{ kind: string; history: History }> {
  const h = new History();
  const out: Array<{ kind: string; history: History }> = [];
  const snap = (kind: string) => {
    const copy = new History();
    copy.commits.push(...h.commits);
    out.push({ kind, history: copy });
  };
  h.init(); snap('init');
  h.step({ step: 'config', keys: ['prose', 'runner'] }); snap('config');
  h.dataset(12); snap('dataset');
  h.select(12); snap('select');
  h.plan(1, ['c01', 'c02', 'c03']); snap('plan');
  h.start(nomem(1, 1)); snap('run-start');
  h.finish(nomem(1, 1), { tokens: 9000, costUsd: 0.09 }); snap('run');
  h.grade(nomem(1, 1), 'NO CHANGE', ['c02']); snap('grade');
  h.edit(nomem(1, 1), ['c02']); snap('edit');
  h.ran(nomem(1, 2), 'PASSED', [], { tokens: 9100, costUsd: 0.091 });
  h.candidate(nomem(1, 2)); snap('candidate');
  h.ran(mem(1, 1), 'MIXED', ['c03'], { tokens: 3000, costUsd: 0.03 });
  const memEdit = h.edit(mem(1, 1));
  h.revert(memEdit); snap('revert');
  h.ran(mem(1, 2), 'PASSED', [], { tokens: 2900, costUsd: 0.029 });
  h.checkpoint(1); snap('checkpoint');
  h.difficult(add('c03', 'flaky')); snap('difficult');
  h.step({ step: 'note' }); snap('note');
  h.plan(2, ['c04', 'c05', 'c06', 'c07', 'c08', 'c09'], ['c03', 'c01', 'c02']);
  h.start(nomem(2, 1));
  h.stop(nomem(2, 1), 'budget spent: $1 of $1'); snap('run-stop');
  h.hand(true, 'reword the refund rule by hand\n'); snap('hand');
  return out;
}

describe('README.md: regenerated after every step kind', () => {
  const steps = story();

  it.each(steps.map((s) => [s.kind, s.history] as const))('after %s: the map parses, one now node, the hand-written part kept', (kind, history) => {
    const readme = readmeOf(history);
    const map = expectMapSound(readme);
    expect(map.nodes.has('start') && map.nodes.has('final') && map.nodes.has('difficult') && map.nodes.has('memory')).toBe(true);
    expect(extractHandSection(readme)).toBe(HAND_PLACEHOLDER);
    expect(scrub(readme)).toMatchSnapshot(kind);
  });

  it('says the next step once: in its own section, not again under "Where we are"', () => {
    for (const { kind, history } of steps) {
      const readme = readmeOf(history);
      const next = /## Next\n\n(.+)\n/.exec(readme)?.[1];
      expect(next, kind).toBeTruthy();
      expect(readme.split(next!.replace(/\.$/, '')).length - 1, kind).toBe(1);
    }
  });

  it('a pure function: the same history renders the same bytes', () => {
    const last = steps[steps.length - 1]!.history;
    expect(readmeOf(last)).toBe(readmeOf(last));
  });

  it('the now node follows the next step', () => {
    const byKind = new Map(steps.map((s) => [s.kind, nowOf(expectMapSound(readmeOf(s.history)))]));
    expect(byKind.get('init')).toBe('start'); // next: import the dataset
    expect(byKind.get('plan')).toBe('b1n'); // next: run batch 1 without memory
    expect(byKind.get('candidate')).toBe('b1m'); // next: the with-memory run
    expect(byKind.get('checkpoint')).toBe('b2n'); // next: plan batch 2, a node ahead until then
    expect(byKind.get('run-stop')).toBe('b2n');
  });

  it('top-down, one subgraph per batch with its halves side by side, batches ahead drawn by the growth rule', () => {
    const planned = steps.find((s) => s.kind === 'plan')!.history;
    const block = mermaidBlocks(readmeOf(planned))[0]!;
    const map = expectMapSound(readmeOf(planned));
    expect(block.split('\n')[0]).toBe('flowchart TD');
    // 12 cases, minBatch 3, maxBatch 6: batch 1 (3) planned, then 6 (exact: the next plan), then ~3 left in a batch of ~6.
    expect([...map.subgraphs].map(([id, s]) => [id, s.title, s.direction, s.members])).toEqual([
      ['B1', 'batch 1 · 3 new', 'LR', ['b1n', 'b1m']],
      ['B2', 'batch 2 · 6 new, planned next', 'LR', ['b2n', 'b2m']],
      ['B3', 'batch 3 · ~6 new if all goes smoothly', 'LR', ['b3n', 'b3m']],
    ]);
    expect(map.nodes.get('b2n')).toBe('no memory<br/>not run yet');
    expect(map.classes.get('b3n')).toBe('ahead');
    // Batches are linked subgraph to subgraph (a node linked out of its subgraph would make mermaid drop LR).
    expect(map.edges).toEqual(expect.arrayContaining([['start', 'B1'], ['B1', 'B2'], ['B2', 'B3'], ['B3', 'final'], ['final', 'done']]));
    // The stores are cylinders.
    expect(block).toContain('difficult[("difficult list<br/>0 open · 0 fixed · 0 stuck")]');
    expect(block).toContain('memory[("last good memory<br/>empty")]');
  });

  it('a batch under way: runs so far, ✔/✘ and cases right on each half, the tokens memory saved, difficult cases added on the title', () => {
    const map = expectMapSound(readmeOf(steps.find((s) => s.kind === 'difficult')!.history));
    expect(map.subgraphs.get('B1')!.title).toBe('batch 1 · 3 new · 1 difficult added');
    expect(map.nodes.get('b1n')).toBe('no memory<br/>✔ 2 runs · 3/3 right');
    expect(map.nodes.get('b1m')).toBe('with memory<br/>✔ 2 runs · 3/3 right · −68% tokens');
    expect(map.nodes.get('memory')).toBe('last good memory<br/>up to batch 1');
    expect(map.edges).toContainEqual(['B1', 'memory']);
    const graded = expectMapSound(readmeOf(steps.find((s) => s.kind === 'grade')!.history));
    expect(graded.nodes.get('b1n')).toBe('no memory<br/>✘ NO CHANGE · 1 run · 2/3 right');
    const running = expectMapSound(readmeOf(steps.find((s) => s.kind === 'run-start')!.history));
    expect(running.nodes.get('b1n')).toBe('no memory<br/>▶ run 1 running');
  });

  it('the batches table: runs per half, cases right, llm calls and tokens without → with memory, saved twice, links', () => {
    const readme = readmeOf(steps.find((s) => s.kind === 'checkpoint')!.history);
    const row = readme.split('\n').find((l) => l.startsWith('| 1 |'))!;
    expect(row).toContain('| 2 + 2 | passed, checkpointed | 3/3 → 3/3 | 9 → 3 | 9,100 → 2,900 (−68%) | 0 |');
    expect(row).toContain('[nomem-run1 NO CHANGE](runs/batch01-nomem-run1/findings.md) → [edit](runs/batch01-nomem-run1/changes.md) confirmed');
    expect(row).toContain('[mem-run1 MIXED](runs/batch01-mem-run1/findings.md) → [edit](runs/batch01-mem-run1/changes.md) reverted');
  });

  it('the log is newest first, links findings and changes, and says where each edit stands', () => {
    const readme = readmeOf(steps.find((s) => s.kind === 'checkpoint')!.history);
    const log = readme.slice(readme.indexOf('## Log'));
    const items = log.split('\n').filter((l) => l.startsWith('- **'));
    expect(items[0]).toBe('- **22** checkpoint: batch 1 is in the last good memory');
    expect(items).toContain('- **9** edit after batch01-nomem-run1: confirmed by batch01-nomem-run2 · [changes](runs/batch01-nomem-run1/changes.md)');
    expect(items).toContain('- **8** graded batch01-nomem-run1: NO CHANGE, 1 wrong · [findings](runs/batch01-nomem-run1/findings.md)');
    expect(items[items.length - 1]).toBe('- **1** started tuning demo');
  });

  it('the final check VERIFIED: the tuning is at done, and the results say so', () => {
    const h = new History().setup(6).smoothBatch(1, ['c01', 'c02', 'c03']).smoothBatch(2, ['c04', 'c05', 'c06'], ['c01']);
    h.start('final-check');
    h.finish('final-check');
    h.grade('final-check', 'VERIFIED', []);
    const state = h.fold(ids('c', 1, 6));
    const next = decideNext({ state, config: CONFIG, selection: ids('c', 1, 6), complexity: () => 'medium', dir: '.tune/demo' });
    const readme = renderReadme({ state, commits: h.commits, config: CONFIG, selection: ids('c', 1, 6), next, summaries: new Map(), hand: 'ours' });
    const map = expectMapSound(readme);
    // Past the final check there is nothing left to do: `now` is the done node at the end of the map.
    expect(nowOf(map)).toBe('done');
    expect(map.nodes.get('final')).toBe('final check<br/>all 6 selected cases at once<br/>VERIFIED');
    expect(readme).toContain('- final check: **VERIFIED**: 6 of 6 right (rate 100%, 95% CI 61–100%); wrong: none; stuck: none');
    expect(scrub(readme)).toMatchSnapshot('final');
  });
});

describe('the map stays legible at any length: what is grouped, and when', () => {
  /** `done` batches of one case each, passed and checkpointed, out of `selected`; batches ahead are of one case too. */
  const mapOf = (done: number, selected: number) => {
    const selection = ids('c', 1, selected);
    const config = makeConfig({ minBatch: 1, maxBatch: 1 });
    const h = new History().setup(selected);
    for (let n = 1; n <= done; n++) h.smoothBatch(n, [selection[n - 1]!]);
    const state = h.fold(selection);
    const next = decideNext({ state, config, selection, complexity: () => 'medium', dir: '.tune/demo' });
    const map = expectMapSound(renderReadme({ state, commits: h.commits, config, selection, next, summaries: new Map(), hand: 'ours' }));
    return { map, subgraphs: [...map.subgraphs.keys()] };
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `B${from + i}`);

  it('up to 12 batches are drawn one subgraph each; the 13th groups the oldest finished batch', () => {
    const twelve = mapOf(11, 12); // 11 done + the next one planned
    expect(twelve.subgraphs).toEqual(range(1, 12));
    expect(twelve.map.nodes.has('past')).toBe(false);
    const thirteen = mapOf(12, 13);
    expect(thirteen.subgraphs).toEqual(range(2, 13));
    expect(thirteen.map.nodes.get('past')).toBe('batch 1: done<br/>1 new case<br/>runs: 1 no memory, 1 with<br/>all checkpointed · −0% tokens');
    expect(thirteen.map.edges).toEqual(expect.arrayContaining([['start', 'past'], ['past', 'B2']]));
  });

  it('a long tuning: the finished batches but the latest become one node, with what they did', () => {
    const { map, subgraphs } = mapOf(40, 41);
    expect(subgraphs).toEqual(range(30, 41));
    expect(map.nodes.get('past')).toBe('batches 1-29: done<br/>29 new cases<br/>runs: 29 no memory, 29 with<br/>all checkpointed · −0% tokens');
    expect(map.edges).toContainEqual(['B40', 'memory']);
    expect(nowOf(map)).toBe('b41n');
  });

  it('up to 3 batches ahead are drawn each; more become the next one and one node for the rest', () => {
    const three = mapOf(2, 5);
    expect(three.subgraphs).toEqual(range(1, 5));
    expect(three.map.nodes.has('ahead')).toBe(false);
    const four = mapOf(2, 6);
    expect(four.subgraphs).toEqual(range(1, 3));
    expect(four.map.nodes.get('ahead')).toBe('batches 4-6 planned<br/>sizes ~1 ×3 new<br/>if all goes smoothly');
    expect(four.map.edges).toEqual(expect.arrayContaining([['B3', 'ahead'], ['ahead', 'final']]));
    expect(four.map.classes.get('ahead')).toBe('ahead');
  });

  it('the last good memory is drawn from the group when its batch is in it; the difficult list feeds the next batch', () => {
    const h = new History().setup(20);
    const selection = ids('c', 1, 20);
    for (let n = 1; n <= 13; n++) {
      if (n < 13) h.smoothBatch(n, [selection[n - 1]!]);
      else h.plan(13, [selection[12]!]).ran(nomem(13, 1), 'MIXED', [selection[12]!], { difficult: [add(selection[12]!, 'wrong')] });
    }
    const config = makeConfig({ minBatch: 1, maxBatch: 1 });
    const state = h.fold(selection);
    const next = decideNext({ state, config, selection, complexity: () => 'medium', dir: '.tune/demo' });
    const map = expectMapSound(renderReadme({ state, commits: h.commits, config, selection, next, summaries: new Map(), hand: 'ours' }));
    // 13 done or under way + 1 drawn ahead (8 ahead in all): batches 1-2 grouped.
    expect([...map.subgraphs.keys()]).toEqual(range(3, 14));
    expect(map.subgraphs.get('B13')!.title).toBe('batch 13 · 1 new · 1 difficult added');
    expect(map.edges).toEqual(expect.arrayContaining([['B12', 'memory'], ['difficult', 'B14'], ['memory', 'final'], ['B14', 'ahead']]));
    expect(map.nodes.get('difficult')).toBe('difficult list<br/>1 open · 0 fixed · 0 stuck');
  });
});

describe('the mermaid checker (test/helpers/mermaid.ts) fails what mermaid would draw wrong', () => {
  const problems = (body: string) => checkFlowchart(`flowchart TD\n${body}\n  classDef now fill:#fff\n  class a now`).problems;

  it('passes a sound subgraph linked as a whole', () => {
    expect(problems('  a["x"]\n  subgraph S["t"]\n    direction LR\n    b["y"]\n    c["z"]\n    b --> c\n  end\n  a --> S')).toEqual([]);
  });

  it('a node linked out of a subgraph with its own direction, an unclosed or empty subgraph, a keyword as id', () => {
    expect(problems('  a["x"]\n  subgraph S["t"]\n    direction LR\n    b["y"]\n  end\n  a --> b')).toEqual([
      'edge a → b links node b out of subgraph S, whose direction mermaid would then drop',
    ]);
    expect(problems('  a["x"]\n  subgraph S["t"]\n    b["y"]')).toEqual(['subgraph S is never closed']);
    expect(problems('  a["x"]\n  subgraph S["t"]\n  end')).toEqual(['subgraph S is empty']);
    expect(problems('  a["x"]\n  end["y"]')).toEqual(['id end is a mermaid keyword']);
    expect(problems('  a["x"]\n  subgraph a["t"]\n    b["y"]\n  end')).toEqual(['subgraph a is defined twice or is also a node']);
  });
});

describe('the hand-written part', () => {
  it('survives regeneration, byte for byte, and is no longer the placeholder', () => {
    const h = story()[4]!.history;
    const mine = '## What is tuned and why\n\nThe support desk agent: refunds | returns, in `agents/`.\n\n## Open problems\n\n- c03 is flaky';
    const first = readmeOf(h, mine);
    expect(extractHandSection(first)).toBe(mine);
    expect(readmeOf(h, extractHandSection(first)!)).toBe(first);
    expect(isHandPlaceholder(mine)).toBe(false);
    expect(first).not.toContain('still has the placeholder');
  });

  it('is the placeholder until written; markers missing or out of order read as none', () => {
    expect(isHandPlaceholder(HAND_PLACEHOLDER)).toBe(true);
    expect(isHandPlaceholder(`\n${HAND_PLACEHOLDER.replace(/\n/g, '\n\n')}\n`)).toBe(true);
    expect(extractHandSection(`x\n${HAND_END}\n${HAND_START}\n`)).toBeNull();
    expect(extractHandSection('# no markers')).toBeNull();
  });

  it('next notes the placeholder once a run is graded', () => {
    const steps = story();
    const note = (kind: string) => readmeOf(steps.find((s) => s.kind === kind)!.history).includes('still has the placeholder in its hand-written part');
    expect(note('run')).toBe(false);
    expect(note('grade')).toBe(true);
  });
});

describe('predictBatches', () => {
  it('sizes the next batch as planBatch would, later ones by doubling up to maxBatch, until the selection is used', () => {
    const h = new History().setup(24).plan(1, ids('c', 1, 3));
    const config = makeConfig({ minBatch: 3, maxBatch: 10 });
    expect(predictBatches(h.fold(ids('c', 1, 24)), config, ids('c', 1, 24)).map((p) => [p.batch, p.size, p.exact])).toEqual([
      [2, 6, true], [3, 10, false], [4, 10, false],
    ]);
  });

  it('a batch that needed work keeps its size; an open difficult case adds a difficult batch', () => {
    const h = new History().setup(9).plan(1, ids('c', 1, 3));
    h.ran(nomem(1, 1), 'MIXED', ['c01'], { difficult: [add('c01', 'wrong')] });
    const config = makeConfig({ minBatch: 3, maxBatch: 10 });
    expect(predictBatches(h.fold(ids('c', 1, 9)), config, ids('c', 1, 9)).map((p) => [p.batch, p.size, p.kind])).toEqual([
      [2, 3, 'new'], [3, 6, 'new'], [4, 1, 'difficult'],
    ]);
  });
});

describe('USAGE.md', () => {
  it('tokens and cost by model, batch and half, run; a chart of tokens per batch without vs with memory', () => {
    const h = story().find((s) => s.kind === 'run-stop')!.history;
    const usage = renderUsage({ state: h.fold(SELECTION), summaries: summariesOf(h) });
    expect(usage).toContain('| m-main | 23,600 | 400 | 0 | 24,000 | $0.2400 |');
    expect(usage).toContain('| 1 | without memory | 2 | 18,100 | $0.1810 | 18 |');
    expect(usage).toContain('| batch02-nomem-run1 | 9 | stopped: budget spent: $1 of $1 | 500 | $0.5000 | – | – |');
    const [chart] = mermaidBlocks(usage);
    expect(checkXyChart(chart!)).toEqual([]);
    expect(chart).toContain('bar [9100]');
    expect(chart).toContain('line [2900]');
  });

  it('the chart numbers its batches under one axis title and draws the latest 30; the table keeps them all', () => {
    const chartOf = (batches: number) => {
      const h = new History().setup(batches);
      for (let n = 1; n <= batches; n++) h.smoothBatch(n, [`c${String(n).padStart(2, '0')}`]);
      const usage = renderUsage({ state: h.fold(ids('c', 1, batches)), summaries: new Map() });
      return { usage, chart: mermaidBlocks(usage)[0]! };
    };
    const thirty = chartOf(30);
    expect(checkXyChart(thirty.chart)).toEqual([]);
    expect(thirty.chart).toContain(`x-axis "batch" [${Array.from({ length: 30 }, (_, i) => `"${i + 1}"`).join(', ')}]`);
    expect(thirty.chart).toContain('title "Tokens per batch"');
    const more = chartOf(31);
    expect(checkXyChart(more.chart)).toEqual([]);
    expect(more.chart).toContain('title "Tokens per batch, batches 2-31"');
    expect(more.chart).not.toContain('"1",');
    expect(more.usage).toContain('The chart shows the latest 30 batches; the table has them all.');
    expect(more.usage).toMatch(/^\| 1 \| 1,000 \| 1,000 \| −0% \|$/m);
  });

  it('summarizes a results.json leniently: missing numbers count as 0, a non-list is none', () => {
    expect(summarizeResults('r', { not: 'a list' })).toBeNull();
    const s = summarizeResults('r', [
      { right: true, tokens: 10, usage: [{ model: 'b', inputTokens: 7, outputTokens: 3 }], memoryWrites: { added: 2, savedTwice: 1 } },
      { right: false, usage: [{ model: 'a', costUsd: 0.5 }, 'junk'] },
    ])!;
    expect(s).toMatchObject({ cases: 2, rightByChecks: 1, tokens: 10, memoryWrites: 2, savedTwice: 1 });
    expect(s.models.map((m) => m.model)).toEqual(['a', 'b']);
  });
});

describe('the review body', () => {
  const base: ReviewInput = {
    tuning: 'demo', batch: 3, size: 3, kind: 'new', why: 'batch 2 went smoothly', status: 'PASSED without memory in 2 runs',
    cases: [{ id: 'a', class: 'billing', as: 'new', difficult: null }],
    runs: [],
    edits: [],
    memory: { candidate: null, checkpoint: false },
    difficult: [],
    head: { commit: 'a'.repeat(40), url: null },
    base: { commit: 'b'.repeat(40) },
  };
  const huge = (n: number) => `--- a/p.md\n+++ b/p.md\n@@ -1,${n} +1,${n} @@\n${Array.from({ length: n }, (_, i) => `+line ${i} ${'x'.repeat(60)}`).join('\n')}\n`;

  it('fits a pull request: long diffs are cut, each with a note and where to see it whole', () => {
    const input: ReviewInput = {
      ...base,
      edits: [0, 1].map((i) => ({
        commit: String(i).repeat(40), run: 'batch03-nomem-run1', half: 'nomem' as const, hand: false, aims: ['a'],
        status: 'confirmed' as const, triedBy: 'batch03-nomem-run2', revertedBy: null, kept: null, why: ['shorter rule'],
        files: [{ path: 'agents/p.md', patch: huge(2000) }, { path: 'agents/small.md', patch: '--- a/s\n+++ b/s\n@@ -1 +1 @@\n-a\n+b\n' }],
        url: i === 0 ? `https://github.com/o/r/commit/${'0'.repeat(40)}` : null,
      })),
    };
    const body = renderReview(input);
    expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(body.length).toBeGreaterThan(GITHUB_BODY_LIMIT - 2000);
    expect(body).toContain(`the whole diff: https://github.com/o/r/commit/${'0'.repeat(40)}`);
    expect(body).toContain(`the whole diff: \`git show ${'1'.repeat(40)} -- agents/p.md\``);
    expect(body).toContain('-a\n+b'); // the small diff is whole
    expect(renderReview({ ...input, edits: [] })).not.toContain('cut');
  });

  it('a confirmed, an unconfirmed, a reverted, a kept and a pending edit each say so', () => {
    const edit = { commit: 'c'.repeat(40), run: 'batch03-nomem-run1', half: 'nomem' as const, hand: false, aims: [], why: [], files: [], url: null, kept: null };
    const body = renderReview({
      ...base,
      edits: [
        { ...edit, status: 'confirmed', triedBy: 'batch03-nomem-run2', revertedBy: null },
        { ...edit, status: 'unconfirmed', triedBy: 'batch03-nomem-run2', revertedBy: null },
        { ...edit, status: 'reverted', triedBy: 'batch03-nomem-run3', revertedBy: 'd'.repeat(40) },
        { ...edit, status: 'reverted', triedBy: null, revertedBy: 'e'.repeat(40), hand: true },
        { ...edit, status: 'pending', triedBy: null, revertedBy: null },
        { ...edit, status: 'kept', triedBy: 'batch03-nomem-run2', revertedBy: null, kept: { by: 'Ann <ann@example.com>', why: 'house style', commit: 'f'.repeat(40) } },
      ],
    });
    expect(body).toContain('edit after batch03-nomem-run1 — **confirmed** by batch03-nomem-run2');
    expect(body).toContain('— **unconfirmed** by batch03-nomem-run2');
    expect(body).toContain('— **reverted** by `ddddddd` after batch03-nomem-run3 did not confirm it');
    expect(body).toContain('hand edit after batch03-nomem-run1 — **reverted** by `eeeeeee`, before any run tried it');
    expect(body).toContain('— **pending**: no run has tried it yet');
    expect(body).toContain('— **kept** by Ann <ann@example.com> (house style) though batch03-nomem-run2 did not confirm it');
  });
});

describe('GitHub remotes', () => {
  it('reads owner/repo from https, ssh and scp-like URLs, dropping credentials; not from paths', () => {
    expect(parseRemoteUrl('https://github.com/acme/desk.git')).toEqual({ host: 'github.com', owner: 'acme', repo: 'desk' });
    expect(parseRemoteUrl('https://x-access-token:s3cret@github.com/acme/desk')).toEqual({ host: 'github.com', owner: 'acme', repo: 'desk' });
    expect(parseRemoteUrl('git@github.com:acme/desk.git')).toEqual({ host: 'github.com', owner: 'acme', repo: 'desk' });
    expect(parseRemoteUrl('ssh://git@ghe.corp:2222/acme/desk.git')).toEqual({ host: 'ghe.corp', owner: 'acme', repo: 'desk' });
    expect(parseRemoteUrl('/srv/git/desk.git')).toBeNull();
    expect(parseRemoteUrl('file:///srv/git/acme/desk.git')).toBeNull();
    expect(parseRemoteUrl('C:\\repos\\desk')).toBeNull();
  });

  it('GitHub when on github.com, under GITHUB_API_URL, or named by GITHUB_REPOSITORY; web addresses only when known', () => {
    expect(githubRepoOf('git@ghe.corp:acme/desk.git', {})).toBeNull();
    expect(githubRepoOf('git@ghe.corp:acme/desk.git', { GITHUB_API_URL: 'https://ghe.corp/api/v3' })?.owner).toBe('acme');
    expect(githubRepoOf('/srv/desk.git', { GITHUB_REPOSITORY: 'acme/desk' })).toEqual({ host: 'github.com', owner: 'acme', repo: 'desk' });
    expect(webUrlOf({ host: 'github.com', owner: 'acme', repo: 'desk' }, {})).toBe('https://github.com/acme/desk');
    expect(webUrlOf({ host: 'ghe.corp', owner: 'acme', repo: 'desk' }, {})).toBeNull();
    expect(webUrlOf({ host: 'ghe.corp', owner: 'acme', repo: 'desk' }, { GITHUB_SERVER_URL: 'https://ghe.corp' })).toBe('https://ghe.corp/acme/desk');
    expect(ghCreateLine({ host: 'github.com', owner: 'acme', repo: 'desk' }, 3, 'demo', "tune(demo): batch 3 — it's done")).toBe(
      "git tune review 3 | gh pr create --repo acme/desk --base tune-pr/demo/batch03-base --head tune-pr/demo/batch03 --title 'tune(demo): batch 3 — it'\\''s done' --body-file -",
    );
  });
});

describe('hand commit messages (the hooks)', () => {
  const ours: Array<[string, string]> = [['Tune-Tuning', 'demo'], ['Tune-Step', 'edit'], ['Tune-Run', 'batch01-nomem-run1']];

  it('adds sealed trailers the fold reads as the step, after a blank line', () => {
    const r = rewriteMessage('Shorter refund rule\n', ours, '#', false);
    expect(r.text).toMatch(/^Shorter refund rule\n\nTune-Tuning: demo\nTune-Step: edit\nTune-Run: batch01-nomem-run1\nTune-Seal: v1 [0-9a-f]{16}\n$/);
    expect(isSealed(r.text)).toBe(true);
    expect(parseStep(r.text)).toMatchObject({ step: 'edit', run: 'batch01-nomem-run1' });
    expect(rewriteMessage(r.text, ours, '#', false)).toMatchObject({ changed: false, forged: [] });
  });

  it('strips Tune-* lines a hand commit cannot claim, and keeps other trailers inside the seal', () => {
    const forged = 'Grade it\n\nbody text\n\nSigned-off-by: A <a@x>\nTune-Step: grade\nTune-Verdict: PASSED\n';
    const r = rewriteMessage(forged, ours, '#', false);
    expect(r.forged).toEqual(['Tune-Step: grade', 'Tune-Verdict: PASSED']);
    expect(r.text).not.toContain('PASSED');
    expect(parseMessage(r.text).trailers.map(([k]) => k)).toEqual(['Signed-off-by', 'Tune-Tuning', 'Tune-Step', 'Tune-Run', 'Tune-Seal']);
    expect(parseStep(r.text)).toMatchObject({ step: 'edit' });
  });

  it('puts the trailers before comments and a scissors line; an empty message only gets them as a comment', () => {
    const editor = 'Subject\n\n# Please enter the commit message\n# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n';
    const r = rewriteMessage(editor, ours, '#', false);
    expect(r.text.startsWith('Subject\n\nTune-Tuning: demo\n')).toBe(true);
    expect(r.text).toContain('Tune-Seal: v1 ');
    expect(r.text.indexOf('Tune-Seal')).toBeLessThan(r.text.indexOf('# Please'));
    expect(r.text.endsWith('diff --git a/x b/x\n')).toBe(true);
    const empty = rewriteMessage('\n# Please enter the commit message\n', ours, '#', true);
    expect(empty.text.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([]);
    expect(empty.text).toContain('#   Tune-Step: edit');
    expect(rewriteMessage('\n# Please enter\n', ours, '#', false).changed).toBe(false);
  });

  it('a subject that looks like a trailer stays the subject', () => {
    const r = rewriteMessage('fix: typo in the refund rule\n', ours, '#', false);
    expect(parseMessage(r.text).subject).toBe('fix: typo in the refund rule');
    expect(parseStep(r.text)).toMatchObject({ step: 'edit' });
  });
});

describe('the skill file for coding agents', () => {
  it('names only commands the CLI has', async () => {
    const { readFileSync } = await import('node:fs');
    const { buildProgram } = await import('../../src/cli/program.js');
    const skill = readFileSync(new URL('../../templates/skill/SKILL.md', import.meta.url), 'utf8');
    const program = buildProgram();
    const lines = [...skill.matchAll(/git tune ([a-z][a-z-]*)((?: [a-z][a-z-]*)?)/g)];
    expect(lines.length).toBeGreaterThan(15);
    const missing: string[] = [];
    for (const [whole, name, rest] of lines) {
      const command = program.commands.find((c) => c.name() === name);
      if (!command) {
        missing.push(whole);
        continue;
      }
      const sub = rest!.trim();
      // `git tune memory candidate` names a subcommand; `git tune grade` followed by prose does not.
      if (command.commands.length > 0 && sub && !command.commands.some((c) => c.name() === sub) && !command.registeredArguments.length) missing.push(whole);
    }
    expect(missing).toEqual([]);
    for (const sub of ['memory candidate', 'memory checkpoint', 'difficult add']) expect(skill).toContain(`git tune ${sub}`);
  });
});
