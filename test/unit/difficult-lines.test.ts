import { describe, expect, it } from 'vitest';
import { parseDifficultLines } from '../../src/app/difficult.js';

const findings = (section: string) => `# Findings of batch01-nomem-run1

## PASSED

Every case is right.

## Difficult
${section}
## Cost review

add not-here wrong
`;

describe('the `## Difficult` lines of a findings file (docs/method.md#difficult-list)', () => {
  it('reads add and fix lines, list items or not, and only under the Difficult heading', () => {
    const r = parseDifficultLines(findings(['add billing-03 wrong', '- fix refund.7', '* add x_1 costly', '1. add y regressed', ''].join('\n')));
    expect(r.problems).toEqual([]);
    expect(r.changes).toEqual([
      { op: 'add', id: 'billing-03', reason: 'wrong' },
      { op: 'fix', id: 'refund.7' },
      { op: 'add', id: 'x_1', reason: 'costly' },
      { op: 'add', id: 'y', reason: 'regressed' },
    ]);
  });

  it('keeps the note after an em dash, a double dash, a dash or a hash', () => {
    const r = parseDifficultLines(findings([
      '- add a wrong — still quotes 14 days',
      '- add b flaky -- right in run 1, wrong in run 2',
      '- fix c - right and cheap now',
      'add d memory # memory made it worse',
      'add e costly #tight',
      'add a wrong — a second note',
    ].join('\n')));
    expect(r.problems).toEqual([]);
    expect(r.changes.map((c) => c.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'a']);
    expect(Object.fromEntries(r.notes)).toEqual({
      a: ['still quotes 14 days', 'a second note'],
      b: ['right in run 1, wrong in run 2'],
      c: ['right and cheap now'],
      d: ['memory made it worse'],
      e: ['tight'],
    });
  });

  it('ignores blank lines, html comments (one line or many), deeper headings, fences and a (none) placeholder', () => {
    const r = parseDifficultLines(findings([
      '<!-- one line per case: add <id> <reason> or fix <id> -->',
      '',
      '<!--',
      'add hidden wrong',
      '-->',
      '### proposed',
      '```',
      'add <id> <reason>',
      '## Difficult',
      '```',
      '(none)',
      '- _none_',
      'add kept wrong <!-- inline -->',
    ].join('\n')));
    expect(r.problems).toEqual([]);
    expect(r.changes).toEqual([{ op: 'add', id: 'kept', reason: 'wrong' }]);
  });

  it('names the file line, the rule and an example for every bad line', () => {
    const md = findings(['add a hard', 'add b', 'fix c d', 'remove e', 'add ../x wrong', 'ADD f WRONG'].join('\n'));
    const r = parseDifficultLines(md);
    const lineOf = (text: string) => md.split('\n').indexOf(text) + 1;
    expect(r.changes).toEqual([{ op: 'add', id: 'f', reason: 'wrong' }]);
    expect(r.problems).toHaveLength(5);
    expect(r.problems[0]).toBe(`line ${lineOf('add a hard')}: \`add a hard\`: the reason must be one of wrong, regressed, flaky, memory, costly (found \`hard\`) (e.g. \`add billing-03 wrong — still quotes 14 days\` or \`fix billing-03\`)`);
    expect(r.problems[1]).toContain(`line ${lineOf('add b')}: \`add b\`: \`add\` takes a case id and a reason`);
    expect(r.problems[2]).toContain(`line ${lineOf('fix c d')}: \`fix c d\`: \`fix\` takes one case id`);
    expect(r.problems[3]).toContain('`remove e`: a line here must be `add <id> <reason>` or `fix <id>`');
    expect(r.problems[4]).toContain('`../x` is not a case id');
  });

  it('finds nothing when there is no Difficult section, and reads every one there is', () => {
    expect(parseDifficultLines('## PASSED\n\nadd a wrong\n')).toEqual({ changes: [], problems: [], notes: new Map() });
    const two = parseDifficultLines('## Difficult\nadd a wrong\n## Other\nadd b wrong\n## Difficult cases\r\nfix c\r\n');
    expect(two.changes).toEqual([{ op: 'add', id: 'a', reason: 'wrong' }, { op: 'fix', id: 'c' }]);
  });
});
