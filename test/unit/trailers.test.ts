import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMessage, messageTrailers, parseMessage, trailerValue, trailerValues, type CommitMessage } from '../../src/core/trailers.js';

describe('trailers: formatMessage / parseMessage', () => {
  const roundTrips: Array<[string, CommitMessage]> = [
    ['subject only', { subject: 'tune(demo): init', body: '', trailers: [] }],
    ['subject and trailers', { subject: 'tune(demo): run', body: '', trailers: [['Tune-Step', 'run'], ['Tune-Run', 'batch03-nomem-run2']] }],
    [
      'subject, two-paragraph body and trailers',
      {
        subject: 'tune(demo): plan batch 2',
        body: 'batch 1 went smoothly: 3 → 6\n\nsecond paragraph, with: a colon',
        trailers: [['Tune-Tuning', 'demo'], ['Tune-Step', 'plan']],
      },
    ],
    ['a repeated key keeps its order', { subject: 's', body: 'b', trailers: [['Tune-Reverts', 'aaa'], ['Tune-Other', 'x'], ['Tune-Reverts', 'bbb']] }],
    ['an empty value', { subject: 's', body: '', trailers: [['Tune-Keys', '']] }],
  ];

  for (const [name, message] of roundTrips) {
    it(`round-trips: ${name}`, () => {
      const text = formatMessage(message);
      expect(text.endsWith('\n')).toBe(true);
      expect(parseMessage(text)).toEqual(message);
    });
  }

  it('writes trailers as the last paragraph, one `Key: value` per line', () => {
    const text = formatMessage({ subject: 'tune(demo): grade', body: 'why', trailers: [['Tune-Step', 'grade'], ['Tune-Verdict', 'NO CHANGE']] });
    expect(text).toBe('tune(demo): grade\n\nwhy\n\nTune-Step: grade\nTune-Verdict: NO CHANGE\n');
  });

  it('reads a message written by native git (CRLF, extra blank lines at the end)', () => {
    const parsed = parseMessage('subject\r\n\r\nbody line\r\n\r\nTune-Step: note\r\nTune-Tuning: demo\r\n\r\n\r\n');
    expect(parsed).toEqual({ subject: 'subject', body: 'body line', trailers: [['Tune-Step', 'note'], ['Tune-Tuning', 'demo']] });
  });

  it('does not take a last paragraph as trailers when one of its lines is not a trailer', () => {
    const parsed = parseMessage('subject\n\nTune-Step: run\nthis line is prose\n');
    expect(parsed.trailers).toEqual([]);
    expect(parsed.body).toBe('Tune-Step: run\nthis line is prose');
  });

  it('reads trailers above a closing block of comment lines, as git does (a revert committed with --no-edit after a conflict)', () => {
    const message = 'Revert "tune(desk): edit"\n\nThis reverts commit 1234.\n\nTune-Tuning: desk\nTune-Step: revert\n\n# Conflicts:\n#\tdesk/tone.md\n';
    expect(messageTrailers(message)).toEqual([['Tune-Tuning', 'desk'], ['Tune-Step', 'revert']]);
    expect(parseMessage(message)).toEqual({ subject: 'Revert "tune(desk): edit"', body: 'This reverts commit 1234.', trailers: [['Tune-Tuning', 'desk'], ['Tune-Step', 'revert']] });
    // A comment right under the trailers closes the message too; one between trailers is no trailer; comments alone have none; without trailers the text stays whole.
    expect(messageTrailers('s\n\nTune-Step: revert\n# note')).toEqual([['Tune-Step', 'revert']]);
    expect(messageTrailers('s\n\nTune-Step: revert\n# note\nTune-Run: r1')).toEqual([]);
    expect(messageTrailers('# only\n# comments\n')).toEqual([]);
    expect(parseMessage('s\n\nprose\n\n# kept')).toEqual({ subject: 's', body: 'prose\n\n# kept', trailers: [] });
  });

  it('never takes the subject as trailers', () => {
    expect(parseMessage('Tune-Step: run\n')).toEqual({ subject: 'Tune-Step: run', body: '', trailers: [] });
  });

  it('refuses a trailer key or value that would not read back', () => {
    expect(() => formatMessage({ subject: 's', body: '', trailers: [['Bad Key', 'v']] })).toThrow(/invalid trailer/);
    expect(() => formatMessage({ subject: 's', body: '', trailers: [['Key', 'two\nlines']] })).toThrow(/invalid trailer/);
  });

  it('looks trailers up case-insensitively', () => {
    const trailers = [['Tune-Reverts', 'a'], ['tune-reverts', 'b'], ['Tune-Run', 'r']] as const;
    expect(trailerValue([...trailers], 'TUNE-RUN')).toBe('r');
    expect(trailerValue([...trailers], 'Tune-Missing')).toBeUndefined();
    expect(trailerValues([...trailers], 'Tune-Reverts')).toEqual(['a', 'b']);
  });
});

describe('parseMessage reads like the plain paragraph split it replaced', () => {
  // The first implementation, kept as the reference: split every paragraph, then look at the last.
  const reference = (text: string): CommitMessage => {
    const paragraphs = text.replace(/\r\n/g, '\n').replace(/\n+$/, '').split(/\n{2,}/);
    const subject = (paragraphs.shift() ?? '').trim();
    let trailers: Array<[string, string]> = [];
    const last = paragraphs[paragraphs.length - 1];
    if (last !== undefined) {
      const parsed = last.split('\n').map((line) => /^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]?(.*)$/.exec(line));
      if (parsed.every((m) => m !== null)) {
        trailers = parsed.map((m) => [m![1]!, m![2]!.trim()]);
        paragraphs.pop();
      }
    }
    return { subject, body: paragraphs.join('\n\n'), trailers };
  };

  it('on messages built from subjects, blank-line runs, prose and trailer-like lines', () => {
    const piece = fc.constantFrom(
      'subject', ' spaced ', 'Tune-Step: run', 'Key:v', 'a: b', 'prose line', '', ' ', '\n', '\n\n', '\n\n\n', '\r\n', '\r\n\r\n', 'x:',
      'Tune-Step:\tx', 'Tune-Step:  two spaces ', 'Key :v', '-x: y', 'K_e: v', ':x', 'ü: x', 'a-: b', 'K: a\u2028b', 'K: a\rb', 'K: v:w', '9: nine',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), fc.array(fc.constantFrom('\n', '\n\n', '\n\n\n', ''), { maxLength: 14 }), (parts, seps) => {
        const text = parts.map((p, i) => p + (seps[i] ?? '')).join('');
        expect(parseMessage(text)).toEqual(reference(text));
        expect(messageTrailers(text)).toEqual(reference(text).trailers);
      }),
      { numRuns: 3000 },
    );
  });
});
