// THE EXAMPLE AGENT'S LOGIC: A STAND-IN FOR AN LLM AGENT.
//
// No model is called and nothing touches the network. The "agent" answers a
// case by looking up rule lines (`- key: value`) in its prose files; "LLM
// calls" and tokens are computed from the text it handles, so the same prose,
// case and memory always give the same answer and the same usage, to the token.
//
// This module is pure (no file system, no clock, no randomness): agent.mjs,
// judge.mjs and editor.mjs do the I/O around it. See ../README.md.

/** Where the prose lives, relative to the repository root (override: EXAMPLE_AGENTS_DIR). */
export const DEFAULT_AGENTS_DIR = 'agents';

/** Flag lines the agent understands in agents/prompts/house.md (or a class file). */
export const HOUSE = {
  noApology: 'never apologise',
  jsonPlans: 'answer plans as json',
};

/** Flag lines the agent understands in agents/memory-policy.md. */
export const POLICY = {
  readFirst: 'check memory for a fact before looking it up',
  save: 'save every fact you look up',
  noResave: 'never save a fact that is already in memory',
};

/** What an upset customer gets first, unless the house rules say `- never apologise`. */
export const APOLOGY = 'Sorry for the trouble. ';

/** The answer for a topic the prose has no rule for. */
export const UNKNOWN = 'unknown';

/** Modes a case (input.simulate) or the env (EXAMPLE_SIMULATE) may ask for. */
export const SIMULATIONS = [
  'oom', 'oom-signal', 'oom-heap', 'hang', 'hang-hard', 'garbage', 'no-output', 'crash', 'error', 'void', 'sandbox-down', 'escape',
];

// ---------------------------------------------------------------- prose

const FLAG_ALIASES = new Map([['never apologize', HOUSE.noApology]]);

/** Keys compare lowercased with `_` read as a space: input.topics `refund_window` is the rule `refund window`. */
export function normalizeKey(text) {
  return String(text).toLowerCase().replace(/[_\s]+/g, ' ').replace(/:+$/, '').trim();
}

export function normalizeFlag(text) {
  const t = String(text).toLowerCase().replace(/\s+/g, ' ').replace(/[.!]+$/, '').trim();
  return FLAG_ALIASES.get(t) ?? t;
}

/**
 * A rule line is a markdown list item: `- key: value` (a rule) or `- text`
 * (a flag). Every other line is prose the agent reads but does not act on.
 */
export function parseRuleLine(line) {
  const m = /^\s*[-*]\s+(.*\S)\s*$/.exec(line);
  if (!m) return null;
  const body = m[1];
  const colon = body.indexOf(': ');
  if (colon > 0) return { kind: 'rule', key: normalizeKey(body.slice(0, colon)), value: body.slice(colon + 2).trim(), text: body };
  return { kind: 'flag', flag: normalizeFlag(body), text: body };
}

/** Rules (later lines win) and flags of one prose file. */
export function parseProse(text) {
  const rules = new Map();
  const flags = new Set();
  for (const line of String(text ?? '').split('\n')) {
    const parsed = parseRuleLine(line);
    if (!parsed) continue;
    if (parsed.kind === 'rule') rules.set(parsed.key, parsed.value);
    else flags.add(parsed.flag);
  }
  return { rules, flags };
}

export function isSafeSegment(name) {
  return typeof name === 'string' && /^[A-Za-z0-9._-]+$/.test(name) && name !== '.' && name !== '..';
}

/** The prose files the agent reads for a case of class `cls`, relative to the repository root. */
export function proseFilesFor(cls, agentsDir = DEFAULT_AGENTS_DIR) {
  return {
    house: `${agentsDir}/prompts/house.md`,
    cls: isSafeSegment(cls) ? `${agentsDir}/prompts/${cls}.md` : null,
    policy: `${agentsDir}/memory-policy.md`,
  };
}

// ---------------------------------------------------------------- cases

/** A case input: an object {question, topics, format, mood, …} or plain text (a question). */
export function normalizeInput(input) {
  if (typeof input === 'string') return { question: input };
  if (input && typeof input === 'object' && !Array.isArray(input)) return input;
  return { question: JSON.stringify(input) ?? '' };
}

/** Topics of a text question: the rule keys it names, in the order it names them. */
export function topicsFromQuestion(question, rules) {
  const q = String(question ?? '').toLowerCase();
  return [...rules.keys()]
    .map((key) => ({ key, at: q.indexOf(key) }))
    .filter((t) => t.at >= 0)
    .sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : 1))
    .map((t) => t.key);
}

/** value (one bare value), sentence ("Key: value." each) or plan (a JSON object). */
export function formatOf(item, input, topics) {
  if (input.format === 'value' || input.format === 'sentence' || input.format === 'plan') return input.format;
  if (item.complexity === 'complex') return 'plan';
  return topics.length === 1 ? 'value' : 'sentence';
}

export const label = (topic) => topic.charAt(0).toUpperCase() + topic.slice(1);
export const snake = (topic) => topic.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '').toLowerCase();
export const slug = (topic) => topic.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();

export function renderAnswer(format, cls, topics, values, { apologise, jsonPlans }) {
  if (format === 'value') return values.join('; ');
  if (format === 'sentence') {
    return (apologise ? APOLOGY : '') + topics.map((t, i) => `${label(t)}: ${values[i]}.`).join(' ');
  }
  const steps = topics.map((t, i) => `${label(t)}: ${values[i]}`);
  if (!jsonPlans) return [`Plan for ${cls}:`, ...steps.map((s, i) => `${i + 1}. ${s}`)].join('\n');
  const plan = { class: cls };
  topics.forEach((t, i) => { plan[snake(t)] = values[i]; });
  plan.steps = steps;
  return plan;
}

// ---------------------------------------------------------------- memory

export const factPath = (topic) => `facts/${slug(topic)}.md`;

/** What a look-up of `topic` finds. Depends on the topic only, so two cases write the same bytes. */
export function factContent(topic) {
  let section = 0;
  for (const ch of topic) section = (section * 31 + ch.charCodeAt(0)) % 97;
  return [
    `# ${label(topic)}`,
    '',
    `topic: ${topic}`,
    `source: Example Shop handbook, section ${section + 1}`,
    'looked up by: the example agent (a stand-in: no model, no network)',
    '',
  ].join('\n');
}

export const isFact = (text, topic) => typeof text === 'string' && text.split('\n').includes(`topic: ${topic}`);

// ---------------------------------------------------------------- usage

export const SYSTEM_TOKENS = 250;
export const LOOKUP_INPUT = 600;
export const LOOKUP_OUTPUT = 80;
export const LOOKUP_CACHED = 400;
export const MAIN_MODEL = 'example-main';
export const LOOKUP_MODEL = 'example-lookup';
/** USD per million tokens: [input, output]. An unknown target is priced like example-main. */
export const PRICES = {
  'example-main': [3, 15],
  'example-large': [15, 75],
  'example-lookup': [1, 5],
};

export const tokensOf = (text) => Math.ceil(String(text).length / 4);

function costOf(model, inputTokens, outputTokens) {
  const [inPrice, outPrice] = PRICES[model] ?? PRICES[MAIN_MODEL];
  return Math.round((inputTokens * inPrice + outputTokens * outPrice)) / 1e6;
}

function usageEntry(model, inputTokens, outputTokens, cachedTokens) {
  return { model, inputTokens, outputTokens, cachedTokens, costUsd: costOf(model, inputTokens, outputTokens) };
}

// ---------------------------------------------------------------- the agent

/**
 * Answers one case. `prose` holds the texts of the files proseFilesFor names
 * (null when missing); `memory.read(rel)` returns a memory file's text or
 * null; `memory.enabled` is false when TUNE_MEMORY is not given.
 * Returns the result JSON (without I/O), the memory writes to make, and a
 * transcript.
 */
export function answerCase({ item, prose, memory, target = '', files = {} }) {
  const input = normalizeInput(item.input);
  const question = String(input.question ?? '');
  const house = parseProse(prose.house);
  const own = parseProse(prose.cls);
  const policy = parseProse(prose.policy).flags;
  const rules = new Map([...house.rules, ...own.rules]);
  const flags = new Set([...house.flags, ...own.flags]);
  const transcript = [`case ${item.id ?? '(no id)'} (${item.class ?? 'no class'})`];

  const topics = Array.isArray(input.topics) ? input.topics.map(normalizeKey) : topicsFromQuestion(question, rules);
  const format = formatOf(item, input, topics);
  const facts = [];
  const reads = [];
  const writes = [];
  const resaved = [];
  let lookups = 0;
  let toolCalls = 0;

  for (const topic of topics) {
    const rel = factPath(topic);
    const fresh = factContent(topic);
    const stored = memory.enabled ? memory.read(rel) : null;
    if (stored !== null && isFact(stored, topic) && policy.has(POLICY.readFirst)) {
      reads.push(rel);
      toolCalls += 1;
      facts.push(stored);
      transcript.push(`memory: read ${rel}`);
      if (policy.has(POLICY.save) && !policy.has(POLICY.noResave)) {
        writes.push({ path: rel, content: stored });
        resaved.push(rel);
        toolCalls += 1;
        transcript.push(`memory: saved ${rel} again (the memory policy does not forbid it)`);
      }
      continue;
    }
    lookups += 1;
    toolCalls += 1;
    facts.push(fresh);
    transcript.push(`look-up: ${topic} (1 llm call, 1 tool call)`);
    if (memory.enabled && policy.has(POLICY.save)) {
      if (stored === fresh && policy.has(POLICY.noResave)) {
        transcript.push(`memory: ${rel} is already there, not saved`);
        continue;
      }
      writes.push({ path: rel, content: fresh });
      if (stored === fresh) resaved.push(rel);
      toolCalls += 1;
      transcript.push(`memory: saved ${rel}`);
    }
  }

  const values = topics.map((t) => rules.get(t) ?? UNKNOWN);
  const used = topics.map((t, i) => ({
    topic: t,
    value: values[i],
    from: own.rules.has(t) ? files.cls ?? 'class prose' : house.rules.has(t) ? files.house ?? 'house prose' : null,
  }));
  const answer = topics.length === 0
    ? 'I have no rule for that question.'
    : renderAnswer(format, String(item.class ?? ''), topics, values, {
      apologise: input.mood === 'upset' && !flags.has(HOUSE.noApology),
      jsonPlans: flags.has(HOUSE.jsonPlans),
    });
  transcript.push(`answer (${format}): ${typeof answer === 'string' ? answer.split('\n').join(' / ') : JSON.stringify(answer)}`);

  const proseText = [prose.house, prose.cls, prose.policy].filter((t) => typeof t === 'string').join('\n');
  const answerText = typeof answer === 'string' ? answer : JSON.stringify(answer);
  const mainInput = SYSTEM_TOKENS + tokensOf(proseText) + tokensOf(question) + facts.reduce((n, f) => n + tokensOf(f), 0);
  const usage = [usageEntry(target || MAIN_MODEL, mainInput, tokensOf(answerText) + 12, 0)];
  if (lookups > 0) {
    usage.push(usageEntry(
      LOOKUP_MODEL,
      lookups * (LOOKUP_INPUT + tokensOf(question)),
      lookups * LOOKUP_OUTPUT,
      (lookups - 1) * LOOKUP_CACHED,
    ));
  }
  const llmCalls = 1 + lookups;
  const result = {
    answer,
    usage,
    llmCalls,
    toolCalls,
    memoryReads: reads.length,
    // A computed, not measured, duration: results stay byte-for-byte reproducible.
    durationMs: 300 + 900 * llmCalls + 120 * toolCalls,
    example: {
      standIn: 'the bundled example agent: no model, no network',
      format,
      topics: used,
      prose: Object.values(files).filter(Boolean),
      memory: { read: reads, wrote: writes.map((w) => w.path), resaved },
    },
  };
  return { result, writes, transcript };
}

// ---------------------------------------------------------------- checks (as git-tune's docs/contracts.md#dataset defines them)

function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export function sameValue(a, b) {
  if (typeof a === 'string' && typeof b === 'string') return a.trim() === b.trim();
  return canonical(a) === canonical(b);
}

export const answerText = (answer) => (typeof answer === 'string' ? answer : JSON.stringify(answer) ?? '');

export function jsonOf(answer) {
  if (typeof answer !== 'string') return answer;
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
}

export function readJsonPath(root, path) {
  const tokens = /^\$((?:\.[A-Za-z_$][\w$-]*|\[\d+\]|\['[^']*'\]|\["[^"]*"\])*)$/.exec(String(path).trim());
  if (!tokens) return undefined;
  let cur = root;
  for (const m of tokens[1].matchAll(/\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g)) {
    const key = m[1] ?? m[3] ?? m[4];
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = key !== undefined ? cur[key] : cur[Number(m[2])];
  }
  return cur;
}

/** One check on an answer; `command` checks are not run here (null). */
export function passesCheck(check, answer) {
  const text = answerText(answer);
  switch (check.type) {
    case 'equals': return sameValue(answer, check.value);
    case 'contains': return text.includes(check.value);
    case 'not-contains': return !text.includes(check.value);
    case 'regex':
      try {
        return new RegExp(check.value, check.flags).test(text);
      } catch {
        return false;
      }
    case 'json': {
      const found = readJsonPath(jsonOf(answer), check.path);
      return found !== undefined && sameValue(found, check.value);
    }
    default: return null;
  }
}

// ---------------------------------------------------------------- the judge

/** What each topic's value is in an answer (or a reference answer) of the given format. */
export function valuesIn(answer, format, topics) {
  const out = {};
  if (topics.length === 0) return out;
  const json = jsonOf(answer);
  if (format === 'plan' && json && typeof json === 'object') {
    for (const t of topics) if (typeof json[snake(t)] === 'string') out[t] = json[snake(t)];
    return out;
  }
  const text = answerText(answer);
  if (format === 'value') {
    if (topics.length === 1) out[topics[0]] = text.trim();
    else text.split('; ').forEach((v, i) => { if (topics[i]) out[topics[i]] = v.trim(); });
    return out;
  }
  // "Label: value." pieces (sentences) or "n. Label: value" lines (a plan written as text).
  let from = 0;
  const starts = topics.map((t) => {
    const at = text.indexOf(`${label(t)}: `, from);
    if (at >= 0) from = at + 1;
    return at;
  });
  topics.forEach((t, i) => {
    if (starts[i] < 0) return;
    const begin = starts[i] + label(t).length + 2;
    const later = starts.filter((s) => s > starts[i]);
    const newline = text.indexOf('\n', begin);
    const end = Math.min(later.length ? Math.min(...later) : text.length, newline >= 0 ? newline : text.length);
    out[t] = text.slice(begin, end).trim().replace(/\.$/, '');
  });
  return out;
}

/** The topics, format and right values of a case, read from its input and reference answer. */
export function truthOf(item) {
  const input = normalizeInput(item.input);
  if (!Array.isArray(input.topics) || item.expected === undefined) return null;
  const topics = input.topics.map(normalizeKey);
  const format = formatOf(item, input, topics);
  return { topics, format, values: valuesIn(item.expected, format, topics) };
}

/**
 * Grades one result (the judge contract, git-tune's docs/contracts.md#judge). A wrong case gets, as
 * proposals, exactly the rule lines that make it right. A case whose own
 * checks reject its reference answer is `caseOnly`: no prose edit can fix it.
 */
export function judgeCase(item, result, { agentsDir = DEFAULT_AGENTS_DIR } = {}) {
  const files = proseFilesFor(item.class, agentsDir);
  const rubricItems = Array.isArray(item.rubric) ? item.rubric : [];
  /** @type {Record<string, string>} */
  const rubric = {};
  /** @type {Record<string, string>} */
  const evidence = {};
  const proposals = [];
  const propose = (file, change, why, expect) => {
    if (!proposals.some((p) => p.file === file && p.change === change)) proposals.push({ file, change, why, expect, case: item.id });
  };

  if (!result || result.answer === undefined || result.answer === null || result.error) {
    for (const r of rubricItems) {
      rubric[r.id] = 'missed';
      evidence[r.id] = 'no answer';
    }
    const why = result?.error ?? 'the result holds no answer';
    return { right: false, rubric, evidence, summary: `the agent gave no answer: ${why}`, caseOnly: false, proposals };
  }

  const answer = result.answer;
  const text = answerText(answer);
  const truth = truthOf(item);
  const hasExpected = item.expected !== undefined;
  const broken = hasExpected
    ? (item.checks ?? []).filter((c) => passesCheck(c, item.expected) === false)
    : [];
  const caseOnly = broken.length > 0;
  const got = truth ? valuesIn(answer, truth.format, truth.topics) : {};
  const wrongTopics = truth ? truth.topics.filter((t) => truth.values[t] !== undefined && got[t] !== truth.values[t]) : [];
  const apologised = text.includes(APOLOGY.trim()) && !(hasExpected && answerText(item.expected).includes(APOLOGY.trim()));
  const planAsText = truth?.format === 'plan' && typeof jsonOf(answer) !== 'object';
  const right = hasExpected ? sameValue(answer, item.expected) : wrongTopics.length === 0 && !apologised && !planAsText;

  if (!caseOnly) {
    for (const t of wrongTopics) {
      propose(
        files.cls ?? files.house,
        `- ${t}: ${truth.values[t]}`,
        `the answer gives ${JSON.stringify(got[t] ?? '(nothing)')} for "${t}"; the reference answer says ${JSON.stringify(truth.values[t])}`,
        `"${t}" answered as ${JSON.stringify(truth.values[t])}`,
      );
    }
    if (apologised) propose(files.house, '- never apologise', 'the answer opens with an apology the reference answer does not make', 'no apology');
    if (planAsText) propose(files.house, '- answer plans as JSON', 'the plan came as text; the reference answer is a JSON object', 'the plan is a JSON object');
  }
  const resaved = result.example?.memory?.resaved ?? [];
  if (Array.isArray(resaved) && resaved.length > 0) {
    propose(
      files.policy,
      '- never save a fact that is already in memory',
      `saved again what memory already held: ${resaved.join(', ')}`,
      'saved twice 0',
    );
  }

  for (const r of rubricItems) {
    if (r.topic !== undefined && truth) {
      const t = normalizeKey(r.topic);
      const want = truth.values[t];
      if (got[t] !== undefined && got[t] === want) rubric[r.id] = 'met';
      else if (got[t] !== undefined && got[t] !== UNKNOWN) {
        rubric[r.id] = 'partial';
        evidence[r.id] = `says "${t}" is ${JSON.stringify(got[t])}`;
      } else {
        rubric[r.id] = 'missed';
        evidence[r.id] = got[t] === UNKNOWN ? `does not know "${t}"` : `does not mention "${t}"`;
      }
    } else if (r.flag !== undefined) {
      const flag = normalizeFlag(r.flag);
      const met = flag === HOUSE.noApology ? !text.includes(APOLOGY.trim()) : flag === HOUSE.jsonPlans ? typeof jsonOf(answer) === 'object' : right;
      rubric[r.id] = met ? 'met' : 'missed';
      if (!met) evidence[r.id] = flag === HOUSE.noApology ? `opens with "${APOLOGY.trim()}"` : `answer: ${JSON.stringify(text.slice(0, 80))}`;
    } else {
      rubric[r.id] = right ? 'met' : 'missed';
      if (!right) evidence[r.id] = `answer: ${JSON.stringify(text.slice(0, 80))}`;
    }
  }

  let summary;
  if (caseOnly) {
    summary = `the case is at fault: its reference answer fails its own ${broken.map((c) => c.type).join(', ')} check${broken.length === 1 ? '' : 's'}; fix the case, not the prose`;
  } else if (right) {
    summary = proposals.length ? 'right, but the memory policy let it save a fact twice' : 'right';
  } else if (proposals.length) {
    summary = `wrong: ${proposals.map((p) => p.change).join('; ')} would fix it`;
  } else {
    summary = 'wrong, and no rule line explains it';
  }
  return { right, rubric, evidence, summary, caseOnly, proposals };
}

// ---------------------------------------------------------------- the editor

/**
 * Applies one proposed change to a prose file's text. A change is a rule
 * line: `- key: value` replaces the line with the same key (or is added),
 * `- flag` is added when missing. Anything else is skipped.
 */
export function applyChange(text, change) {
  const first = String(change ?? '').trim().split('\n')[0] ?? '';
  const parsed = parseRuleLine(first);
  if (!parsed) return { op: 'skipped', reason: 'not a rule line ("- key: value" or "- flag")', text };
  const line = `- ${parsed.text}`;
  const lines = String(text ?? '').split('\n');
  const same = [];
  lines.forEach((l, i) => {
    const p = parseRuleLine(l);
    if (p && p.kind === parsed.kind && (p.kind === 'rule' ? p.key === parsed.key : p.flag === parsed.flag)) same.push(i);
  });
  if (parsed.kind === 'flag' && same.length > 0) return { op: 'unchanged', line, text };
  if (parsed.kind === 'rule' && same.length > 0) {
    const was = lines[same[0]].trim();
    if (same.length === 1 && parseRuleLine(lines[same[0]]).value === parsed.value) return { op: 'unchanged', line, text };
    const out = lines.filter((_, i) => !same.slice(1).includes(i));
    out[same[0]] = line;
    return { op: 'replaced', was, line, text: out.join('\n') };
  }
  let last = -1;
  lines.forEach((l, i) => { if (parseRuleLine(l)) last = i; });
  if (last >= 0) {
    lines.splice(last + 1, 0, line);
    return { op: 'added', line, text: lines.join('\n') };
  }
  const body = String(text ?? '').replace(/\n+$/, '');
  return { op: 'added', line, text: body ? `${body}\n\n${line}\n` : `${line}\n` };
}
