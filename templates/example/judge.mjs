#!/usr/bin/env node
// =============================================================================
// THE EXAMPLE JUDGE: A STAND-IN FOR AN LLM JUDGE. NO MODEL, NO NETWORK.
//
// Judge contract (git-tune's docs/contracts.md#judge): run once per case with TUNE_CASE
// (the case JSON), TUNE_RESULT (the runner's result JSON) and TUNE_OUTPUT
// (where it writes {right, rubric, evidence, summary, caseOnly, proposals}).
//
// It reads the case's reference answer (`expected`) and input.topics, so for a
// wrong case it proposes exactly the rule lines that make it right (e.g.
// `- refund window: 30 days` for agents/prompts/billing.md). A case whose own
// checks reject its reference answer is caseOnly. A result that saved a fact
// memory already held gets the memory-policy line as a proposal.
// =============================================================================
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_AGENTS_DIR, judgeCase } from './lib/example.mjs';

const env = process.env;

async function main() {
  for (const name of ['TUNE_CASE', 'TUNE_RESULT', 'TUNE_OUTPUT']) {
    if (!env[name]) {
      process.stderr.write(`judge.mjs: ${name} is not set (git-tune sets TUNE_CASE, TUNE_RESULT and TUNE_OUTPUT)\n`);
      process.exitCode = 2;
      return;
    }
  }
  const item = JSON.parse(await fs.readFile(env.TUNE_CASE, 'utf8'));
  let result = null;
  try {
    result = JSON.parse(await fs.readFile(env.TUNE_RESULT, 'utf8'));
  } catch (err) {
    result = { error: `the result cannot be read: ${err.message}` };
  }
  const verdict = judgeCase(item, result, { agentsDir: env.EXAMPLE_AGENTS_DIR || DEFAULT_AGENTS_DIR });
  await fs.mkdir(path.dirname(env.TUNE_OUTPUT), { recursive: true });
  await fs.writeFile(env.TUNE_OUTPUT, `${JSON.stringify(verdict, null, 2)}\n`);
  process.stdout.write(`${item.id}: ${verdict.right ? 'right' : 'wrong'}${verdict.caseOnly ? ' (case only)' : ''}: ${verdict.summary}\n`);
}

main().catch((err) => {
  process.stderr.write(`judge.mjs: ${err.stack ?? err}\n`);
  process.exitCode = 1;
});
