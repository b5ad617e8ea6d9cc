import { describe, expect, it } from 'vitest';
import { brain, DONT_KNOW, type BrainRequest } from '../helpers/model-brain.js';

/** The loopback model's runner brain follows the rules in its prose, and nothing else. */
const SAVE_TOOL = { name: 'save_memory', description: '', parameters: {} };
const ask = (system: string, question: string, extra: Partial<BrainRequest> = {}): BrainRequest => ({
  wire: 'openai', model: 'm', system, messages: [{ role: 'user', text: question }], tools: [], ...extra,
});

describe('the runner brain', () => {
  it('answers from a rule whose topic the question mentions, the longest topic first, and does not know otherwise', () => {
    const prose = '# Desk\n- When asked about refunds, answer: 30 days\n- When asked about refunds for gifts, answer: store credit\n';
    expect(brain(ask(prose, 'How long do REFUNDS take?'))).toEqual({ kind: 'text', text: '30 days' });
    expect(brain(ask(prose, 'What about refunds for gifts?'))).toEqual({ kind: 'text', text: 'store credit' });
    expect(brain(ask(prose, 'Where is the office?'))).toEqual({ kind: 'text', text: DONT_KNOW });
    expect(brain(ask('', 'refunds?'))).toEqual({ kind: 'text', text: DONT_KNOW });
  });

  it('saves what it is told to remember only when its prose says so, the tool is offered, and it does not know it yet', () => {
    const q = 'Remember: when asked about the wifi, answer: tulip\nWhat is the wifi?';
    const save = '- When told to remember something, save it to memory.\n';
    const call = { kind: 'tools', calls: [{ name: 'save_memory', arguments: { name: 'the-wifi.md', content: '- When asked about the wifi, answer: tulip\n' } }] };
    expect(brain(ask(save, q, { tools: [SAVE_TOOL] }))).toEqual(call);
    expect(brain(ask('', q, { tools: [SAVE_TOOL] }))).toEqual({ kind: 'text', text: 'tulip' }); // no rule to save
    expect(brain(ask(save, q))).toEqual({ kind: 'text', text: 'tulip' }); // no tool offered
    const known = `${save}# Memory\n- When asked about the wifi, answer: tulip\n`;
    expect(brain(ask(known, q, { tools: [SAVE_TOOL] }))).toEqual({ kind: 'text', text: 'tulip' });
    expect(brain(ask('- Always save what you are told to remember.\n- When asked about the wifi, answer: tulip\n', q, { tools: [SAVE_TOOL] }))).toEqual(call);
    // after its tool call, it answers
    const after = ask(save, q, { tools: [SAVE_TOOL] });
    after.messages.push({ role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'save_memory', arguments: {} }] }, { role: 'tool', toolCallId: 'c1', text: 'saved' });
    expect(brain(after)).toEqual({ kind: 'text', text: 'tulip' });
  });
});
