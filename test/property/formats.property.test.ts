import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig, renderConfig } from '../../src/app/config-file.js';
import { configSchema, withDefaults } from '../../src/contracts/config.js';
import { DIFFICULT_REASONS } from '../../src/contracts/files.js';
import { formatRunName, parseRunName, parseTagName, tagName, type RunId } from '../../src/core/names.js';
import { redactJson, redactText, secretsOf } from '../../src/core/redact.js';
import { formatStep, isSealed, parseStep, VERDICTS, type Step } from '../../src/core/steps.js';
import { formatMessage, parseMessage, type Trailer } from '../../src/core/trailers.js';

/**
 * Every format is a parse/format pair (STYLE.md): commit messages and their
 * trailers, step messages and their seal, run and tag names, config.yaml,
 * and the redaction of secrets. Properties over generated values.
 */
export const RUNS = { messages: 300, steps: 300, seal: 300, names: 500, config: 150, redact: 300 };

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
const paragraph = fc.array(line, { minLength: 1, maxLength: 3 }).map((l) => l.join('\n'));
const trailerKey = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,15}$/);
const trailerValue = fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' ').trim());
const id = fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/).filter((s) => s !== '.' && s !== '..');
const ids = fc.uniqueArray(id, { maxLength: 6 });
const runName = fc.oneof(
  fc.constant('final-check'),
  fc.record({ batch: fc.integer({ min: 1, max: 120 }), half: fc.constantFrom('nomem' as const, 'mem' as const), number: fc.integer({ min: 1, max: 12 }) })
    .map((r) => formatRunName({ kind: 'batch', ...r })),
);
const tuningName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/);
const difficultChange = fc.oneof(
  fc.record({ op: fc.constant('add' as const), id, reason: fc.constantFrom(...DIFFICULT_REASONS) }),
  fc.record({ op: fc.constant('fix' as const), id }),
);
const oneLine = fc.string({ minLength: 1, maxLength: 30 }).map((s) => s.replace(/\s+/g, ' ').trim()).filter((s) => s.length > 0);

/** Any step, with values as the tool writes them (ids safe as path segments, reasons on one line). */
const usd = fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 1_000_000);
const stepData = fc.oneof(
  fc.constant({ step: 'init' as const }),
  fc.record({ step: fc.constant('config' as const), keys: fc.array(fc.stringMatching(/^[a-z][A-Za-z.]{0,12}$/), { maxLength: 3 }) }),
  fc.record({ step: fc.constant('dataset' as const), cases: fc.nat(100_000), rev: fc.stringMatching(/^[0-9a-f]{12}$/) }),
  fc.record({ step: fc.constant('select' as const), selected: fc.nat(1000), total: fc.nat(1000) }),
  fc.record({ step: fc.constant('plan' as const), batch: fc.integer({ min: 1, max: 99 }), size: fc.integer({ min: 1, max: 50 }), kind: fc.constantFrom('new' as const, 'difficult' as const), new: ids, recheck: ids }),
  fc.record({ step: fc.constant('run-start' as const), run: runName, concurrency: fc.integer({ min: 1, max: 64 }) }),
  fc.record({
    step: fc.constant('run' as const), run: runName, concurrency: fc.integer({ min: 1, max: 64 }), cases: fc.nat(500),
    void: fc.option(oneLine, { nil: null }), stopped: fc.option(oneLine, { nil: null }), tokens: fc.nat(10_000_000), costUsd: usd,
  }),
  fc.record({ step: fc.constant('run-stop' as const), run: runName, reason: oneLine, tokens: fc.nat(10_000_000), costUsd: usd }),
  fc.record({ step: fc.constant('grade' as const), run: runName, verdict: fc.constantFrom(...VERDICTS), wrong: ids, review: fc.boolean() }),
  fc.record({ step: fc.constant('edit' as const), run: runName, aims: fc.option(ids, { nil: null }) }),
  fc.record({ step: fc.constant('revert' as const), reverts: fc.array(fc.stringMatching(/^[0-9a-f]{40}$/), { maxLength: 3 }) }),
  fc.constant({ step: 'difficult' as const }),
  fc.record({ step: fc.constant('candidate' as const), run: runName }),
  fc.record({ step: fc.constant('checkpoint' as const), batch: fc.integer({ min: 1, max: 99 }) }),
  fc.constant({ step: 'note' as const }),
);
export const stepArb: fc.Arbitrary<Step> = fc.tuple(tuningName, fc.array(difficultChange, { maxLength: 3 }), stepData)
  .map(([tuning, difficult, data]) => ({ ...data, tuning, difficult }) as Step);

describe('commit messages: formatMessage / parseMessage', () => {
  it(`round-trips any subject, body and trailers (${RUNS.messages} runs)`, () => {
    fc.assert(fc.property(
      line, fc.array(paragraph, { maxLength: 3 }), fc.array(fc.tuple(trailerKey, trailerValue), { maxLength: 8 }),
      (subject, paragraphs, trailers) => {
        const message = { subject, body: paragraphs.join('\n\n'), trailers: trailers as Trailer[] };
        const text = formatMessage(message);
        expect(text.endsWith('\n')).toBe(true);
        expect(parseMessage(text)).toEqual(message);
      },
    ), { numRuns: RUNS.messages });
  });
});

describe('step messages: formatStep / parseStep and the seal', () => {
  it(`round-trips every step kind with any values (${RUNS.steps} runs)`, () => {
    fc.assert(fc.property(stepArb, line, fc.array(paragraph, { maxLength: 2 }), (step, subject, body) => {
      const text = formatStep(step, subject, body.join('\n\n'));
      expect(isSealed(text)).toBe(true);
      expect(parseStep(text)).toEqual(step);
    }), { numRuns: RUNS.steps });
  });

  it(`no longer trusts a step once any trailer is changed, dropped or added (${RUNS.seal} runs)`, () => {
    fc.assert(fc.property(stepArb, fc.nat(), fc.constantFrom('change', 'drop', 'add'), trailerValue, (step, pick, how, value) => {
      const text = formatStep(step, 'tune: a step');
      const { subject, body, trailers } = parseMessage(text);
      const seal = trailers[trailers.length - 1]!;
      const rest = trailers.slice(0, -1);
      const i = pick % rest.length;
      let edited: Trailer[];
      if (how === 'change') {
        if (rest[i]![1] === value) return;
        edited = rest.map((t, j) => (j === i ? [t[0], value] as const : t));
      } else if (how === 'drop') edited = rest.filter((_, j) => j !== i);
      else edited = [...rest.slice(0, i), ['Tune-Difficult', `add x${value.replace(/\s/g, '')} wrong`] as const, ...rest.slice(i)];
      const forged = formatMessage({ subject, body, trailers: [...edited, seal] });
      expect(isSealed(forged)).toBe(false);
      expect(parseStep(forged)).toBeNull();
    }), { numRuns: RUNS.seal });
  });
});

describe('names', () => {
  it(`run names: format then parse is the identity, and any name that parses formats back to itself (${RUNS.names} runs)`, () => {
    const runId: fc.Arbitrary<RunId> = fc.oneof(
      fc.constant({ kind: 'final' as const }),
      fc.record({ kind: fc.constant('batch' as const), batch: fc.integer({ min: 1, max: 5000 }), half: fc.constantFrom('nomem' as const, 'mem' as const), number: fc.integer({ min: 1, max: 5000 }) }),
    );
    fc.assert(fc.property(runId, fc.string({ maxLength: 24 }), (run, text) => {
      expect(parseRunName(formatRunName(run))).toEqual(run);
      const parsed = parseRunName(text);
      if (parsed) expect(formatRunName(parsed)).toBe(text);
    }), { numRuns: RUNS.names });
  });

  it(`tag names round-trip for every tuning and run name (${RUNS.names} runs)`, () => {
    fc.assert(fc.property(tuningName.filter((n) => !n.endsWith('.lock')), runName, (tuning, run) => {
      expect(parseTagName(tagName(tuning, run))).toEqual({ tuning, run });
    }), { numRuns: RUNS.names });
  });
});

describe('config.yaml: renderConfig / parseConfig', () => {
  const text = fc.string({ maxLength: 20 });
  const command = fc.record({
    command: fc.array(text, { minLength: 1, maxLength: 4 }),
    shell: fc.boolean(),
    timeoutSec: fc.integer({ min: 1, max: 100_000 }),
    env: fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/), text, { maxKeys: 3 }),
  }, { requiredKeys: ['command'] });
  const config = fc.record({
    limit: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null }),
    minBatch: fc.integer({ min: 1, max: 20 }),
    extra: fc.integer({ min: 0, max: 30 }),
    recheck: fc.integer({ min: 0, max: 20 }),
    concurrency: fc.integer({ min: 1, max: 64 }),
    seed: fc.nat(2 ** 31),
    maxRetries: fc.integer({ min: 1, max: 9 }),
    maxRuns: fc.integer({ min: 1, max: 9 }),
    prose: fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 3 }),
    memoryPolicy: fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 2 }),
    runner: fc.option(command, { nil: null }),
    judge: fc.option(command, { nil: null }),
    memory: fc.record({ merge: fc.option(fc.array(text, { minLength: 1, maxLength: 3 }), { nil: null }) }),
    budget: fc.record({ maxCostUsd: fc.option(fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100), { nil: null }), maxTokens: fc.option(fc.integer({ min: 1, max: 1e9 }), { nil: null }) }),
    targets: fc.array(fc.record({ name: fc.string({ minLength: 1, maxLength: 10 }), env: fc.dictionary(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,8}$/), text, { maxKeys: 2 }) }), { maxLength: 2 }),
  }, { requiredKeys: ['minBatch', 'extra'] }).map(({ extra, ...c }) => ({ ...c, maxBatch: c.minBatch + extra }));

  it(`parses back to what was rendered, every default filled in (${RUNS.config} runs)`, () => {
    fc.assert(fc.property(config, (values) => {
      const { config: parsed } = parseConfig(renderConfig(values), 'config.yaml');
      expect(parsed).toEqual(withDefaults(configSchema.parse(values)));
    }), { numRuns: RUNS.config });
  });
});

describe('redaction of secrets', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9+/=_-]{6,40}$/).filter((s) => s.trim().length >= 6);
  const name = fc.constantFrom('OPENAI_API_KEY', 'GH_TOKEN', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'MY_SERVICE_APIKEY', 'npm_token');
  it(`leaves no secret in any text or JSON that held it, however embedded (${RUNS.redact} runs)`, () => {
    fc.assert(fc.property(name, secret, fc.array(fc.string({ maxLength: 30 }), { minLength: 1, maxLength: 5 }), (key, value, parts) => {
      const secrets = secretsOf({ [key]: value, HOME: '/home/someone', PATH: '/usr/bin' });
      expect(secrets.map((s) => s.name)).toEqual([key]);
      const text = parts.join(value);
      const out = redactText(text, secrets);
      expect(out.includes(value)).toBe(false);
      if (!text.includes(value) && !text.includes(encodeURIComponent(value))) expect(out).toBe(text);
      const json = redactJson({ answer: text, nested: [{ [value]: JSON.stringify({ value }) }] }, secrets);
      expect(JSON.stringify(json).includes(value)).toBe(false);
    }), { numRuns: RUNS.redact });
  });
});
