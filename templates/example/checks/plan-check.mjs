#!/usr/bin/env node
// A `command` check for the example dataset (part of the example agent, a
// stand-in for an LLM agent). git-tune runs it in the repository root with
// TUNE_CASE (the case JSON) and TUNE_RESULT (the runner's result JSON).
// Exit 0: the answer is a JSON plan with one step per topic of the case, in
// order, and no step is "unknown". Exit 1 otherwise, the reason on stderr.
import { readFileSync } from 'node:fs';
import { jsonOf, label, normalizeKey, UNKNOWN } from '../lib/example.mjs';

function fail(reason) {
  process.stderr.write(`plan-check: ${reason}\n`);
  process.exit(1);
}

let item;
let result;
try {
  item = JSON.parse(readFileSync(process.env.TUNE_CASE ?? '', 'utf8'));
  result = JSON.parse(readFileSync(process.env.TUNE_RESULT ?? '', 'utf8'));
} catch (err) {
  fail(`cannot read TUNE_CASE / TUNE_RESULT: ${err.message}`);
}
const topics = (item.input?.topics ?? []).map(normalizeKey);
const plan = jsonOf(result.answer);
if (!plan || typeof plan !== 'object' || !Array.isArray(plan.steps)) fail('the answer is not a JSON plan with a steps list');
if (plan.steps.length !== topics.length) fail(`the plan has ${plan.steps.length} steps for ${topics.length} topics`);
topics.forEach((t, i) => {
  const step = String(plan.steps[i]);
  if (!step.startsWith(`${label(t)}: `)) fail(`step ${i + 1} should be about ${t}: ${JSON.stringify(step)}`);
  if (step.endsWith(`: ${UNKNOWN}`)) fail(`step ${i + 1} does not know ${t}`);
});
