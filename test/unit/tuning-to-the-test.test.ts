import { describe, expect, it } from 'vitest';
import { namesCaseId, tuningToTheTest } from '../../src/app/edit.js';

/**
 * The edit's "tunes to the test" warning (docs/method.md#edits): added prose that names a
 * case id. Ids match as whole tokens (`-`, `_` and a `.` between id
 * characters continue a token); an id that reads as an ordinary word or
 * number counts only quoted.
 */
describe('namesCaseId', () => {
  it('finds an id written as a token of its own, wherever it sits in a line', () => {
    for (const text of [
      'For q1, answer in days.',
      'See billing-refund-03.',
      '(billing-refund-03) is special',
      'cases: q1,q2',
      'ends with q1',
      'q1\nnext line',
      'the v1.2 case',
    ]) {
      const id = text.includes('billing') ? 'billing-refund-03' : text.includes('v1.2') ? 'v1.2' : 'q1';
      expect(namesCaseId(text, id), text).toBe(true);
    }
  });

  it('does not find an id inside a longer word or id', () => {
    for (const [text, id] of [
      ['Read the faq1 page first.', 'q1'],
      ['q10 is another case', 'q1'],
      ['the q1-draft rule', 'q1'],
      ['the q1_old rule', 'q1'],
      ['version v1.2 applies', 'v1'],
      ['see billing-refund-030', 'billing-refund-03'],
      ['see xbilling-refund-03', 'billing-refund-03'],
    ] as const) {
      expect(namesCaseId(text, id), `${id} in ${text}`).toBe(false);
    }
  });

  it('counts an id that reads as a word or number only when it is quoted as an id', () => {
    expect(namesCaseId('Answer in a sentence, like a person would.', 'a')).toBe(false);
    expect(namesCaseId('Offer a refund within 30 days.', 'refund')).toBe(false);
    expect(namesCaseId('Refunds take 7 days.', '7')).toBe(false);
    expect(namesCaseId('For case `a`, say yes.', 'a')).toBe(true);
    expect(namesCaseId('When the case is "refund", be brief.', 'refund')).toBe(true);
    expect(namesCaseId("case '7' wants a number", '7')).toBe(true);
  });
});

describe('tuningToTheTest', () => {
  const cases = [
    { id: 'a', input: 'short' },
    { id: 'q1', input: 'What is the refund window for annual plans?' },
    { id: 'billing-refund-03', input: 'Can I get a refund after 40 days?' },
  ];

  it('warns about no short id that only appears inside ordinary words', () => {
    expect(tuningToTheTest('- Answer a question as a faq1 entry would, in a calm tone.\n', cases)).toEqual([]);
  });

  it('warns about an id named as a token, and an input quoted verbatim', () => {
    expect(tuningToTheTest('- For q1 say 30 days.\n- Can I get a refund after 40 days? means no.\n', cases)).toEqual([
      'names case id q1',
      'quotes the input of case billing-refund-03 verbatim ("Can I get a refund after 40 days?…")',
    ]);
  });
});
