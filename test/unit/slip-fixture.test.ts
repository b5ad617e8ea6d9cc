import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
// The slip agent's truth (test/fixtures/slip/truth.mjs): plain JavaScript shared by its runner, its editor, the trajectory test and the bench.
import * as truthModule from '../fixtures/slip/truth.mjs';

interface Case { id: string; input: { topic: string; unfixable?: boolean }; expected: string }
const truth = truthModule as unknown as {
  answerable: (prompt: string, item: Case) => boolean;
  slips: (seed: string, rate: number, run: string, id: string, n: number) => boolean;
  realFix: (before: { prompt: string; policy: string }, after: { prompt: string; policy: string }, cases: Case[]) => { real: boolean; fixes: string[]; cheaper: boolean };
};
const dir = path.join(ROOT, 'test/fixtures/slip');
const cases = JSON.parse(readFileSync(path.join(dir, 'cases.json'), 'utf8')) as Case[];
const prompt = readFileSync(path.join(dir, 'agent/prompt.md'), 'utf8');
const policy = readFileSync(path.join(dir, 'agent/memory-policy.md'), 'utf8');

describe('the slip agent\'s truth', () => {
  it('slips at about its rate, the same way for the same seed, run, case and answer number', () => {
    const draws = (seed: string, rate: number) => Array.from({ length: 2000 }, (_, i) => truth.slips(seed, rate, `batch01-nomem-run${i % 7}`, `case-${i}`, 1 + (i % 3)));
    const a = draws('1', 0.12);
    expect(draws('1', 0.12)).toEqual(a);
    expect(draws('2', 0.12)).not.toEqual(a);
    expect(a.filter(Boolean).length / a.length).toBeGreaterThan(0.09);
    expect(a.filter(Boolean).length / a.length).toBeLessThan(0.15);
    expect(draws('1', 0).some(Boolean)).toBe(false);
  });

  it('says which cases the prose answers and which edits are real fixes', () => {
    const byId = new Map(cases.map((c) => [c.id, c]));
    expect(cases.filter((c) => truth.answerable(prompt, c)).map((c) => c.id).sort()).toEqual(['ex-invoice-date', 'off-meeting-room', 'pol-refund-window']);
    const fixed = `${prompt}- order-number: the PATTERN order line\n`;
    expect(truth.answerable(fixed, byId.get('ex-order-number')!)).toBe(true);
    expect(truth.realFix({ prompt, policy }, { prompt: fixed, policy }, cases)).toEqual({ real: true, fixes: ['ex-order-number'], cheaper: false });
    // A note, or a rule for a case no prose can fix, changes no answer: useless.
    expect(truth.realFix({ prompt, policy }, { prompt: `${prompt}- note on order-number, look it up carefully (after r1)\n`, policy }, cases).real).toBe(false);
    expect(truth.realFix({ prompt, policy }, { prompt: `${prompt}- legal-advice: see the legal page\n`, policy }, cases).real).toBe(false);
    // The memory-policy line that makes a with-memory run cheaper is real; another line is not.
    expect(truth.realFix({ prompt, policy }, { prompt, policy: `${policy}- read memory first\n` }, cases)).toMatchObject({ real: true, cheaper: true });
    expect(truth.realFix({ prompt, policy }, { prompt, policy: `${policy}- keep memory tidy (after r1)\n` }, cases).real).toBe(false);
  });
});
