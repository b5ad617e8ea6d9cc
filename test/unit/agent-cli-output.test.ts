import { describe, expect, it } from 'vitest';
import { costAt, failureKind, jsonLines, modelArg, readClaude, readCodex, type CliRun } from '../../src/run/presets/agent-cli.js';

/**
 * What the agent-CLI presets read from Claude Code's and Codex's output
 * (docs/presets.md): the shapes each prints, the ones it may print instead,
 * and what is not there to count.
 */
const MEM = '/tmp/case/memory';

describe('Claude Code output', () => {
  it('--output-format json (the result event alone): model calls from num_turns, no tool calls to count', () => {
    const events = jsonLines(JSON.stringify({
      type: 'result', subtype: 'success', is_error: false, num_turns: 4, result: '30 days', total_cost_usd: 0.02,
      usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 7 },
    }))!;
    expect(readClaude(events, MEM)).toEqual({
      answer: '30 days', llmCalls: 4, toolCalls: 0, memoryReads: 0,
      usage: [{ model: 'claude', inputTokens: 115, outputTokens: 7, cachedTokens: 100, costUsd: 0.02 }],
    });
  });

  it('the total cost wins over the per-model costs (sub-agents), memory reads only for paths inside the memory folder', () => {
    const tool = (id: string, name: string, input: Record<string, unknown>) =>
      ({ type: 'assistant', message: { id, content: [{ type: 'tool_use', id: `t${id}`, name, input }] } });
    const events = [
      tool('m1', 'Read', { file_path: `${MEM}/refunds.md` }),
      tool('m1', 'Glob', { pattern: '*.md', path: MEM }),
      tool('m2', 'Read', { file_path: '/tmp/case/memory-other/x.md' }),
      tool('m3', 'Bash', { command: `cat ${MEM}/a.md` }),
      tool('m3', 'Bash', { command: `ls ${MEM}-other` }),
      tool('m3', 'Write', { file_path: `${MEM}/new.md` }),
      { type: 'result', result: 'ok', num_turns: 9, total_cost_usd: 0.05,
        modelUsage: { 'claude-haiku-4-5': { inputTokens: 1, outputTokens: 1, costUSD: 0.01 }, 'claude-sonnet-4-5': { inputTokens: 2, outputTokens: 2, costUSD: 0.03 } } },
    ];
    const run = readClaude(events, MEM);
    expect(run).toMatchObject({ llmCalls: 3, toolCalls: 6, memoryReads: 3 });
    expect('usage' in run && run.usage.reduce((s, u) => s + u.costUsd, 0)).toBeCloseTo(0.05, 12);
  });

  it('an error result is the case\'s error; output without a result event is unreadable', () => {
    expect(readClaude([{ type: 'result', is_error: true, subtype: 'error_max_turns', result: '' }], null)).toMatchObject({ error: 'the agent reported an error (error_max_turns)' });
    expect(readClaude([{ type: 'system', subtype: 'init' }], null)).toEqual({ unreadable: 'no result event (was the output format changed in options.args?)' });
    expect(jsonLines('{"type":"system"}\nnot json\n')).toBeNull();
    expect(jsonLines('')).toBeNull();
  });
});

describe('Codex output', () => {
  const turn = (input: number, cached: number, output: number) => ({ type: 'turn.completed', usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output } });
  const item = (type: string, extra: Record<string, unknown> = {}) => ({ type: 'item.completed', item: { id: type, type, ...extra } });

  it('the last agent message, usage summed over turns, a retried stream error is no failure', () => {
    const events = [
      { type: 'thread.started', thread_id: 't' },
      { type: 'error', message: 'Reconnecting... 1/5' },
      item('command_execution', { command: `ls ${MEM}` }),
      item('command_execution', { command: `ls ${MEM}2` }),
      item('agent_message', { text: 'first' }),
      turn(100, 40, 10),
      item('web_search', { query: 'refund policy' }),
      item('todo_list', { items: [] }),
      item('agent_message', { text: 'second' }),
      turn(200, 150, 20),
    ];
    expect(readCodex(events, MEM, { args: ['--model=gpt-5'], prices: {} })).toEqual({
      answer: 'second', llmCalls: 2, toolCalls: 3, memoryReads: 1,
      usage: [{ model: 'gpt-5', inputTokens: 300, outputTokens: 30, cachedTokens: 190, costUsd: 0 }],
    });
  });

  it('a failed turn or an error before any turn is the case\'s error; no codex events is unreadable', () => {
    expect(readCodex([{ type: 'turn.started' }, { type: 'turn.failed', error: { message: 'quota exceeded' } }], null, { args: [], prices: {} })).toMatchObject({ error: 'quota exceeded' });
    expect(readCodex([{ type: 'error', message: 'unauthorized' }], null, { args: [], prices: {} })).toMatchObject({ error: 'unauthorized' });
    expect(readCodex([{ result: 'x' }], null, { args: [], prices: {} })).toEqual({ unreadable: 'no codex events (thread.started, item.completed, turn.completed)' });
  });

  it('prices: cached input at its own price (else the input price); the model from -m or --model', () => {
    expect(costAt({ inputPerMTok: 2, outputPerMTok: 8, cachedPerMTok: 0.5 }, 1_000_000, 400_000, 100_000)).toBeCloseTo(1.2 + 0.2 + 0.8, 12);
    expect(costAt({ inputPerMTok: 2, outputPerMTok: 8 }, 1_000_000, 400_000, 0)).toBeCloseTo(2, 12);
    expect(costAt(undefined, 5, 0, 5)).toBe(0);
    expect(modelArg(['-m', 'o3'])).toBe('o3');
    expect(modelArg(['--model', 'gpt-5', '-m'])).toBe('gpt-5');
    expect(modelArg(['--json'])).toBeNull();
  });
});

describe('a failure the CLI reports, as the runner contract reads it', () => {
  it('claude: a refused key is its "<synthetic>" message (no model call) and an is_error result with api_error_status 401', () => {
    const events = [
      { type: 'assistant', message: { id: 'u1', model: '<synthetic>', content: [{ type: 'text', text: 'Invalid API key · Fix external API key' }] }, error: 'authentication_failed', api_error_status: 401 },
      { type: 'result', subtype: 'success', is_error: true, num_turns: 1, api_error_status: 401, result: 'Invalid API key · Fix external API key', total_cost_usd: 0, usage: {}, modelUsage: {} },
    ];
    const run = readClaude(events, null);
    expect(run).toMatchObject({ llmCalls: 0, apiStatus: 401, error: 'Invalid API key · Fix external API key' });
    expect(failureKind(run as CliRun)).toBe('down');
    const limited = readClaude([{ ...events[1]!, api_error_status: 429, result: 'Rate limited' }], null) as CliRun;
    expect(failureKind(limited)).toBe('void');
    const other = readClaude([{ ...events[1]!, api_error_status: undefined, result: 'Credit balance is too low' }], null) as CliRun;
    expect(other.apiStatus).toBeUndefined();
    expect(failureKind(other)).toBe('error');
    expect(failureKind(readClaude([{ ...events[1]!, is_error: false, result: 'ok' }], null) as CliRun)).toBeNull();
  });

  it('codex: the status in turn.failed\'s message', () => {
    const failed = (message: string) => readCodex([{ type: 'turn.started' }, { type: 'turn.failed', error: { message } }], null, { args: [], prices: {} }) as CliRun;
    expect(failureKind(failed('unexpected status 401 Unauthorized: Incorrect API key provided, url: http://x/v1/responses'))).toBe('down');
    expect(failureKind(failed('unexpected status 403 Forbidden: nope'))).toBe('down');
    expect(failureKind(failed('exceeded retry limit, last status: 429 Too Many Requests'))).toBe('void');
    expect(failureKind(failed('stream disconnected before completion'))).toBe('error');
  });
});
