import { describe, expect, it } from 'vitest';
import type { JudgeFile } from '../../src/contracts/judge.js';
import type { CaseResult } from '../../src/contracts/result.js';
import { draftFindings, mergeProposals, parseFindings, setVerdict, type DraftInput } from '../../src/core/findings.js';

/**
 * The findings of a run (docs/method.md#grading): the draft the tool proposes, the parse of
 * what a person finished, and `--verdict`'s heading. Pure, no disk.
 */
function result(id: string, over: Partial<CaseResult> = {}): CaseResult {
  return {
    id, rev: 'r1', status: 'ok', answer: 'x', right: true,
    checks: [{ type: 'contains', pass: true }],
    usage: [{ model: 'm', inputTokens: 900, outputTokens: 100, cachedTokens: 0, costUsd: 0.002 }],
    tokens: 1000, costUsd: 0.002, llmCalls: 2, toolCalls: 1, memoryReads: 0,
    memoryWrites: { added: 1, changed: 0, deleted: 0, savedTwice: 0, refused: [] },
    durationMs: 1500, exitCode: 0, signal: null, startedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  } as CaseResult;
}
const wrong = (id: string, over: Partial<CaseResult> = {}) =>
  result(id, { right: false, checks: [{ type: 'contains', pass: false, detail: 'no "30 days"' }], ...over });

function input(over: Partial<DraftInput> = {}): DraftInput {
  return {
    run: { name: 'batch01-nomem-run1', batch: 1, half: 'nomem', number: 1 },
    results: [result('a'), result('b')],
    judge: {},
    previous: null,
    passingNomem: null,
    recheck: [],
    difficult: { onList: [], open: [] },
    aimedSince: [],
    ...over,
  };
}
const run2 = { name: 'batch01-nomem-run2', batch: 1, half: 'nomem' as const, number: 2 };
const mem1 = { name: 'batch01-mem-run1', batch: 1, half: 'mem' as const, number: 1 };
const section = (md: string, heading: string) => {
  const start = md.indexOf(`${heading}\n`);
  expect(start, `no ${heading}`).toBeGreaterThanOrEqual(0);
  const rest = md.slice(start + heading.length + 1);
  const end = rest.search(/^#{2,3} /m);
  return (end < 0 ? rest : rest.slice(0, end)).trim();
};

describe('draftFindings', () => {
  it('opens with the proposed verdict and holds one table row per case with every number', () => {
    const judge: JudgeFile = {
      a: { right: true, rubric: { r1: 'met', r2: 'partial' }, evidence: {}, summary: '', caseOnly: false, proposals: [] },
      b: { right: false, rubric: { r1: 'missed' }, evidence: {}, summary: 'gives 14 days', caseOnly: false, proposals: [] },
    };
    const d = draftFindings(input({
      results: [
        result('a', { tokens: 12345, llmCalls: 3, toolCalls: 4, memoryReads: 2, memoryWrites: { added: 2, changed: 1, deleted: 0, savedTwice: 1, refused: [] }, durationMs: 4600, costUsd: 0.0123 }),
        wrong('b', { checks: [{ type: 'contains', pass: true }, { type: 'equals', pass: false, detail: 'is "14 days"' }] }),
      ],
      judge,
    }));
    expect(d.verdict).toBe('NO CHANGE');
    expect(d.markdown.startsWith('## NO CHANGE\n\nbatch01-nomem-run1 (batch 1, no memory, run 1): 1/2 right, 13,345 tokens, 5 llm calls, $0.0143.\n')).toBe(true);
    expect(section(d.markdown, '### Cases').split('\n').slice(0, 4)).toEqual([
      '| case | result | checks | judge | rubric | tokens | llm calls | tool calls | memory reads | memory writes | saved twice | time | cost |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| a | right | 1/1 | right | 1 met, 1 partial, 0 missed | 12,345 | 3 | 4 | 2 | 3 | 1 | 4.6s | $0.0123 |',
      '| b | wrong | 1/2 | wrong | 0 met, 0 partial, 1 missed | 1,000 | 2 | 1 | 0 | 1 | 0 | 1.5s | $0.0020 |',
    ]);
    expect(d.markdown).toContain('\n- b: check equals failed (is "14 days"); judge: gives 14 days\n');
    expect([...d.verdicts]).toEqual([['a', 'right'], ['b', 'wrong']]);
  });

  it('marks a case with no check and no judge `?`, a void case VOID, and proposes VOID for the run', () => {
    const unsure = draftFindings(input({ results: [result('a'), result('q', { right: null, checks: [] })] }));
    expect(unsure.verdicts.get('q')).toBe('?');
    expect(unsure.verdict).toBe('NO CHANGE');
    expect(unsure.markdown).toMatch(/^\| q \| \? \| – \| – \|/m);
    expect(unsure.markdown).toContain('- q: no check and no judge: decide right or wrong');

    const voided = draftFindings(input({ results: [result('a'), result('v', { status: 'void', right: null, void: 'killed (exit 137)' })] }));
    expect(voided.verdict).toBe('VOID');
    expect(voided.verdicts.get('v')).toBe('VOID');
    expect(voided.markdown).toContain('- v: void: killed (exit 137)');
  });

  it('compares with the previous run of the batch and half: what turned right or wrong, tokens', () => {
    const previous = { name: 'batch01-nomem-run1', results: [result('a'), wrong('b'), wrong('c')], wrong: ['b', 'c'] };
    const d = draftFindings(input({ run: run2, previous, aimedSince: ['b', 'c'], results: [result('a', { tokens: 1500 }), result('b'), wrong('c')] }));
    expect(d.verdict).toBe('PROGRESS');
    expect(section(d.markdown, '### Compared with batch01-nomem-run1')).toBe([
      '- turned right: b',
      '- turned wrong: none',
      '- tokens: 3,000 → 3,500 (+17%); llm calls 6 → 6',
    ].join('\n'));
    const verdictOf = (now: CaseResult[]) => draftFindings(input({ run: run2, previous, aimedSince: ['b', 'c'], results: now })).verdict;
    expect(verdictOf([wrong('a'), wrong('b'), wrong('c')])).toBe('REGRESSION');
    expect(verdictOf([wrong('a'), result('b'), wrong('c')])).toBe('MIXED');
    expect(verdictOf([result('a'), wrong('b'), wrong('c')])).toBe('NO CHANGE');
  });

  it('lists costly, flaky and regressed recheck cases, and proposes each for the difficult list with its reason', () => {
    const previous = { name: 'batch02-nomem-run1', results: ['n1', 'n2', 'n3', 'r1', 'r2', 's1'].map((id) => result(id)), wrong: ['n3'] };
    const d = draftFindings(input({
      run: { name: 'batch02-nomem-run2', batch: 2, half: 'nomem', number: 2 },
      previous,
      aimedSince: ['n3', 'n2'],
      recheck: ['r1', 'r2', 's1'],
      difficult: { onList: ['s1'], open: [] },
      results: [result('n1', { llmCalls: 9 }), wrong('n2'), wrong('n3'), wrong('r1'), result('r2'), wrong('s1'), result('n4')],
      judge: { n4: { right: false, rubric: {}, evidence: {}, summary: 'the case wants 3 days', caseOnly: true, proposals: [] } },
    }));
    expect(d.costly).toEqual(['n1']);
    expect(d.flaky).toEqual(['r1', 's1']); // n2 turned wrong too, but an edit aimed at it
    expect(d.regressed).toEqual(['r1']); // s1 is on the difficult list: it was wrong when its batch passed
    expect(section(d.markdown, '### Costly cases')).toBe('- n1: 9 llm calls (run median 2)');
    expect(section(d.markdown, '### Flaky cases')).toBe('- r1\n- s1');
    expect(section(d.markdown, '### Regressed recheck cases')).toBe('- r1');
    expect(d.difficult).toEqual([
      { op: 'add', id: 'n3', reason: 'wrong', note: 'still wrong after an edit aimed at it (batch02-nomem-run1)' },
      { op: 'add', id: 'r1', reason: 'regressed', note: 'a recheck case that failed' },
      { op: 'add', id: 'n4', reason: 'wrong', note: 'the judge says the fault is in the case (its rubric or checks)' },
    ]);
    expect(section(d.markdown, '## Difficult').split('\n').slice(1)).toEqual([
      'add n3 wrong — still wrong after an edit aimed at it (batch02-nomem-run1)',
      'add r1 regressed — a recheck case that failed',
      'add n4 wrong — the judge says the fault is in the case (its rubric or checks)',
    ]);
  });

  it('without memory: proposes PASSED when every case is right or listed, costly cases for the list, and fix for every listed case now right', () => {
    const d = draftFindings(input({
      results: [result('a', { llmCalls: 7 }), result('b'), result('c'), wrong('s'), result('o'), result('t')],
      difficult: { onList: ['s', 'o', 't'], open: ['o'] },
    }));
    expect(d.verdict).toBe('PASSED');
    expect(d.difficult).toEqual([
      { op: 'add', id: 'a', reason: 'costly', note: "more than 2× the run's median llm calls (2)" },
      { op: 'fix', id: 'o', note: 'right and not costly in a PASSED run' },
      { op: 'fix', id: 't', note: 'right and not costly in a PASSED run' }, // stuck, and right now: fixed too
    ]);
    expect(section(d.markdown, '## Cost review')).toBe([
      '- 6,000 tokens and 17 llm calls for 6 cases (median 2 llm calls a case).',
      '- costly cases: a.',
      '- If you see cost left to cut in the prose, write CORRECT instead of PASSED.',
    ].join('\n'));
    expect(d.markdown).not.toContain('## Memory review');

    const notPassed = draftFindings(input({ results: [result('o'), wrong('b')], difficult: { onList: ['o'], open: ['o'] } }));
    expect(notPassed.verdict).toBe('NO CHANGE');
    expect(notPassed.difficult).toEqual([]); // fix only in a PASSED run
  });

  it('with memory: PASSED needs every case right, saved twice 0 and tokens within 10% of the passing no-memory run; the saving is reported', () => {
    const passingNomem = { name: 'batch01-nomem-run3', tokens: 10000, results: [result('a', { tokens: 5000 }), result('b', { tokens: 5000 })], wrong: [] };
    const cheap = draftFindings(input({ run: mem1, passingNomem, results: [result('a', { tokens: 1500, memoryReads: 2 }), result('b', { tokens: 1500 })] }));
    expect(cheap.verdict).toBe('PASSED');
    expect(section(cheap.markdown, '## Memory review')).toBe([
      '- tokens with memory 3,000 vs without 10,000 (batch01-nomem-run3): saving 70%.',
      '- memory reads 2; memory writes 2; saved twice 0.',
    ].join('\n'));
    expect(cheap.markdown).not.toContain('## Cost review');

    const twice = draftFindings(input({ run: mem1, passingNomem, results: [result('a', { memoryWrites: { added: 0, changed: 1, deleted: 0, savedTwice: 1, refused: [] } }), result('b')] }));
    expect(twice.verdict).toBe('CORRECT');
    expect(twice.markdown).toContain('saved twice 1 (must be 0 to pass: edit the memory policy).');

    const at = (tokens: number) => draftFindings(input({ run: mem1, passingNomem, results: [result('a', { tokens }), result('b', { tokens })] })).verdict;
    expect(at(5500)).toBe('PASSED'); // 11,000: the 10% noise allowed
    expect(at(5501)).toBe('CORRECT');

    const memoryHurt = draftFindings(input({ run: mem1, passingNomem, results: [result('a'), wrong('b')] }));
    expect(memoryHurt.difficult).toEqual([{ op: 'add', id: 'b', reason: 'memory', note: 'right without memory (batch01-nomem-run3), wrong with it' }]);
    expect(memoryHurt.verdict).toBe('NO CHANGE');
  });

  it('merges the judge proposals by file: one line per change with every case, why and expect', () => {
    const judge: JudgeFile = {
      a: { right: false, rubric: {}, evidence: {}, summary: '', caseOnly: false, proposals: [
        { file: 'prompts/billing.md', change: '- refund window: 30 days', why: 'says 14 days', expect: 'r1 met' },
        { file: 'prompts/house.md', change: '- never apologise', why: 'apologises', expect: '' },
      ] },
      b: { right: false, rubric: {}, evidence: {}, summary: '', caseOnly: false, proposals: [
        { file: 'prompts/billing.md', change: '- refund window: 30 days ', why: 'says 14 days', expect: 'r2 met' },
        { file: 'prompts/billing.md', change: '- late fee: 5%', why: 'no late fee', expect: '' },
      ] },
      c: { error: 'judge crashed' },
    };
    expect(mergeProposals(judge, ['a', 'b', 'c'])).toEqual([
      { file: 'prompts/billing.md', change: '- refund window: 30 days', why: ['says 14 days'], expect: ['r1 met', 'r2 met'], cases: ['a', 'b'] },
      { file: 'prompts/billing.md', change: '- late fee: 5%', why: ['no late fee'], expect: [], cases: ['b'] },
      { file: 'prompts/house.md', change: '- never apologise', why: ['apologises'], expect: [], cases: ['a'] },
    ]);
    const d = draftFindings(input({ results: [wrong('a'), wrong('b'), wrong('c')], judge }));
    expect(d.verdicts.get('c')).toBe('wrong'); // its checks failed; the judge's error does not make it right
    expect(section(d.markdown, '## Proposals')).toBe('');
    expect(d.markdown.slice(d.markdown.indexOf('## Proposals'))).toBe([
      '## Proposals', '',
      '### prompts/billing.md', '',
      "- `- refund window: 30 days` — why: says 14 days; expect: r1 met; r2 met (cases: a, b)",
      '- `- late fee: 5%` — why: no late fee (cases: b)', '',
      '### prompts/house.md', '',
      '- `- never apologise` — why: apologises (cases: a)', '',
    ].join('\n'));
    expect(draftFindings(input()).markdown).toMatch(/## Proposals\n\nnone\n$/);
  });

  it('a case whose judge failed is VOID for the judge: the run is graded on the rest, and the findings say so', () => {
    const ok = { right: true, rubric: {}, evidence: {}, summary: '', caseOnly: false, proposals: [] };
    const failed = { error: 'the judge failed (exit 1): HTTP 429 Too Many Requests (4 tries)', tries: 4 };
    const d = draftFindings(input({ results: [result('a'), result('b', { right: null, checks: [] })], judge: { a: ok, b: failed } }));
    expect(d.verdicts.get('b')).toBe('VOID');
    expect(d.verdict).toBe('PASSED');
    expect(d.markdown).toMatch(/^\| b \| VOID \| – \| error \|/m);
    expect(d.markdown).toContain('- b: judge: the judge failed (exit 1): HTTP 429 Too Many Requests (4 tries); VOID for the judge: the run is graded on the rest');
    expect(parseFindings(d.markdown, ['a', 'b']).cases.get('b')).toBe('VOID');
    // Not counted as turned right when it was wrong before.
    const after = draftFindings(input({
      run: run2, results: [wrong('a'), result('b', { right: null, checks: [] })], judge: { a: { ...ok, right: false }, b: failed },
      previous: { name: 'batch01-nomem-run1', results: [wrong('a'), wrong('b')], wrong: ['a', 'b'] },
    }));
    expect(after.verdict).toBe('NO CHANGE');
    expect(section(after.markdown, '### Compared with batch01-nomem-run1')).toMatch(/^- turned right: none\n- turned wrong: none/);
    // A run the judge could grade no case of says nothing; so does a final check with a case it could not grade.
    expect(draftFindings(input({ results: [result('a', { right: null, checks: [] })], judge: { a: failed } })).verdict).toBe('VOID');
    expect(draftFindings(input({ run: { name: 'final-check', batch: 0, half: null, number: 1 }, results: [result('a'), result('b')], judge: { a: ok, b: failed },
      final: { stuck: [], rightInBatch: new Map() } })).verdict).toBe('VOID');
    // What a judge changed in the repository, put back, is named.
    const touched = draftFindings(input({ results: [result('a')], judge: { a: { ...ok, undone: ['agents/prompt.md'] } } }));
    expect(touched.markdown).toContain('- a: while its judge ran, a judge changed agents/prompt.md in the repository; put back (a judge may change nothing there)');
  });

  it('a case listed for memory is proposed fixed by a with-memory PASSED only', () => {
    const listed = { onList: ['a', 'b'], open: ['a', 'b'], memory: ['a'] };
    const nomem = draftFindings(input({ difficult: listed }));
    expect(nomem.verdict).toBe('PASSED');
    expect(nomem.difficult.map((x) => `${x.op} ${x.id}`)).toEqual(['fix b']);
    const mem = draftFindings(input({ run: mem1, difficult: listed, passingNomem: { name: 'batch01-nomem-run1', tokens: 2000, results: [result('a'), result('b')], wrong: [] } }));
    expect(mem.verdict).toBe('PASSED');
    expect(mem.difficult.map((x) => `${x.op} ${x.id}`)).toEqual(['fix a', 'fix b']);
  });

  it('the final check: VERIFIED when every case not stuck is right and none regressed from its batch; no review, no difficult lines', () => {
    const final = (results: CaseResult[], stuck: string[], rightInBatch: Array<[string, boolean]>, maxStuckShare = 0.5) =>
      draftFindings(input({ run: { name: 'final-check', batch: 0, half: null, number: 1 }, results, final: { stuck, rightInBatch: new Map(rightInBatch), maxStuckShare } }));
    const ok = final([result('a'), wrong('s')], ['s'], [['a', true], ['s', false]]);
    expect(ok.verdict).toBe('VERIFIED');
    expect(section(ok.markdown, '## Final check')).toBe([
      '- VERIFIED: 1 of 2 right (rate 50%, 95% CI 9–91%); wrong: none; stuck: s',
      '- right: 1 of 2: pass rate 50%, 95% Wilson interval 9%–91%',
      '- wrong (not stuck, not right in the majority of their answers): none',
      '- regressed from their batch: none',
      '- stuck (reported, not counted): s (50% of the selection; maxStuckShare 50%)',
    ].join('\n'));
    // Half the selection stuck is more than the default fifth: not VERIFIED, and the findings say why.
    const stuckMuch = final([result('a'), wrong('s')], ['s'], [['a', true], ['s', false]], 0.2);
    expect(stuckMuch.verdict).toBe('FAILED');
    expect(stuckMuch.markdown).toContain('— not VERIFIED: 1 of 2 cases are stuck (50%), more than maxStuckShare 20%');
    expect(ok.markdown).not.toContain('## Difficult');
    expect(ok.markdown).not.toContain('## Cost review');
    const regressed = final([wrong('a'), result('s')], ['s'], [['a', true]]);
    expect(regressed.verdict).toBe('FAILED');
    expect(regressed.markdown).toContain('- regressed from their batch: a');
    expect(final([wrong('a')], [], [['a', false]]).verdict).toBe('FAILED');
    // A case wrong at first and right in two of its three answers is right by the majority; its right-rate is shown.
    const again = (first: boolean, ...repeats: boolean[]) => ({
      ...(first ? result('b') : wrong('b')),
      repeats: repeats.map((r, i) => { const { id: _id, rev: _rev, ...rest } = r ? result('b') : wrong('b'); return { ...rest, n: i + 2 }; }),
    });
    const slipped = final([result('a'), again(false, true, true)], [], [['a', true], ['b', true]]);
    expect(slipped.verdict).toBe('VERIFIED');
    expect(slipped.markdown).toContain('| b | 3 | 2/3 right (67%) | right |');
    const wrongMostly = final([result('a'), again(false, false, true)], [], [['a', true], ['b', true]]);
    expect(wrongMostly.verdict).toBe('FAILED');
    expect(wrongMostly.final!.rule).toMatchObject({ wrong: ['b'], regressed: ['b'] });
  });

  it('parses back to its own verdict, case results and review section', () => {
    for (const d of [
      draftFindings(input({ results: [result('a'), wrong('b')] })),
      draftFindings(input({ run: mem1, results: [result('a')] })),
      draftFindings(input({ results: [result('a'), result('q', { right: null, checks: [] })] })),
    ]) {
      const parsed = parseFindings(d.markdown, [...d.verdicts.keys()]);
      expect(parsed.verdict).toBe(d.verdict);
      expect(parsed.problems).toEqual([]);
      expect(parsed.cases).toEqual(d.verdicts);
      expect(parsed.review).toEqual({ cost: d.markdown.includes('\n## Cost review\n'), memory: d.markdown.includes('\n## Memory review\n') });
    }
  });

  it('reads a final check whose right-rates table repeats a case id as its results, not that table\'s counts', () => {
    const d = draftFindings(input({ run: { name: 'final-check', batch: 0, half: null, number: 1 }, results: [result('a'), wrong('b')], final: { stuck: ['b'], rightInBatch: new Map([['a', true], ['b', false]]), maxStuckShare: 0.2 } }));
    const rates = '| case | answers | right-rate | decides |\n| --- | --- | --- | --- |\n| b | 4 | 0/4 right (0%) | wrong |\n';
    const md = d.markdown.includes('| right-rate | decides |') ? d.markdown : `${d.markdown}\n${rates}`;
    const parsed = parseFindings(md, ['a', 'b']);
    expect(parsed.problems).toEqual([]);
    expect(parsed.cases).toEqual(new Map([['a', 'right'], ['b', 'wrong']]));
    expect(parseFindings(`${md}\n| case | result |\n| --- | --- |\n| a | 4 |\n`, ['a', 'b']).problems).toEqual(['case a: result must be right or wrong (found "4")']);
  });
});

describe('parseFindings', () => {
  const table = '### Cases\n\n| case | result |\n| --- | --- |\n| a | right |\n| b | Wrong |\n';

  it('reads the verdict from the first level-2 heading, closing hashes and all, and skips fenced code', () => {
    expect(parseFindings(`## PASSED ##\n\n${table}\n## Cost review\n`, ['a', 'b'])).toEqual({
      verdict: 'PASSED', problems: [], cases: new Map([['a', 'right'], ['b', 'wrong']]), review: { cost: true, memory: false },
    });
    const fenced = parseFindings('```\n## MIXED\n```\n## NO CHANGE\n\n' + table, ['a', 'b']);
    expect(fenced.verdict).toBe('NO CHANGE');
    expect(fenced.problems).toEqual([]);
    expect(parseFindings(`# Findings of run 3\n\n### PASSED\n\n## CORRECT\n${table}`, ['a', 'b']).verdict).toBe('CORRECT');
  });

  it('names a missing, misplaced or doubled verdict heading', () => {
    expect(parseFindings(table, ['a', 'b']).problems).toEqual([
      'the first level-2 heading must be the verdict, one of PROGRESS, NO CHANGE, REGRESSION, MIXED, CORRECT, PASSED, VOID, VERIFIED, FAILED (found no level-2 heading)',
    ]);
    const late = parseFindings(`## Cost review\n\n## PASSED\n${table}`, ['a', 'b']);
    expect(late.verdict).toBeNull();
    expect(late.problems[0]).toContain('(found "## Cost review")');
    expect(parseFindings(`## Passed\n${table}`, ['a', 'b']).problems[0]).toContain('(found "## Passed")');
    const two = parseFindings(`## PASSED\n${table}\n## REGRESSION\n`, ['a', 'b']);
    expect(two.verdict).toBeNull();
    expect(two.problems).toEqual(['the findings hold 2 verdict headings (PASSED, REGRESSION): keep one']);
  });

  it('reads the result column of rows for the run cases only; the first row of a case counts', () => {
    const text = `## MIXED\n${table}| zz | wrong |\n| a | wrong |\n| v | VOID |\n| u | ? |\n`;
    const parsed = parseFindings(text, ['a', 'b', 'v', 'u']);
    expect(parsed.cases).toEqual(new Map([['a', 'right'], ['b', 'wrong'], ['v', 'VOID'], ['u', '?']]));
    expect(parseFindings(`## MIXED\n| a | fine |\n`, ['a']).problems).toEqual(['case a: result must be right or wrong (found "fine")']);
  });
});

describe('setVerdict', () => {
  it('replaces the verdict heading and leaves every other line alone', () => {
    const text = `## NO CHANGE\n\nnotes\n${table()}\n## Cost review\n`;
    const set = setVerdict(text, 'PROGRESS');
    expect(set).toBe(text.replace('## NO CHANGE', '## PROGRESS'));
    expect(parseFindings(set, ['a']).verdict).toBe('PROGRESS');
    expect(setVerdict(set, 'PROGRESS')).toBe(set);
  });

  it('adds the heading on top when the findings have none', () => {
    const text = `Graded by hand.\n\n${table()}`;
    const set = setVerdict(text, 'NO CHANGE');
    expect(set).toBe(`## NO CHANGE\n\n${text}`);
    expect(parseFindings(set, ['a'])).toMatchObject({ verdict: 'NO CHANGE', problems: [] });
    expect(parseFindings(setVerdict(`## Cost review\n${table()}`, 'PASSED'), ['a'])).toMatchObject({ verdict: 'PASSED', problems: [], review: { cost: true } });
  });

  function table() {
    return '### Cases\n\n| case | result |\n| --- | --- |\n| a | right |\n';
  }
});
