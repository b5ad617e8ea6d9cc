#!/usr/bin/env node
// =============================================================================
// THE EXAMPLE EDITOR: A STAND-IN FOR AN LLM EDITOR. NO MODEL, NO NETWORK.
//
// Editor contract (git-tune's docs/contracts.md#editor): run once per graded run in the
// repository root with TUNE_FINDINGS (the findings file), TUNE_PROPOSALS (the
// merged proposals, JSON: [{file, change, why, expect}]), TUNE_CHANGES (where
// to write changes.md) and TUNE_HALF (nomem or mem). It edits prose in place;
// git-tune commits the edit.
//
// A proposal's `change` must be a rule line: `- key: value` replaces the line
// with the same key in `file` (or is added after the file's last rule line);
// `- flag` is added when missing. Other changes are listed as skipped. In the
// with-memory half only memory-policy files change (git-tune's docs/method.md#halves).
// =============================================================================
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_AGENTS_DIR, applyChange, parseRuleLine } from './lib/example.mjs';

const env = process.env;

function isMemoryPolicy(file, agentsDir) {
  return file === `${agentsDir}/memory-policy.md` || /^memory[-_]policy/i.test(path.posix.basename(file));
}

/** A prose path the editor may touch: relative, inside the repository, markdown, not git's or git-tune's. */
function checkPath(file, root) {
  if (typeof file !== 'string' || file === '') return 'no file named';
  if (path.isAbsolute(file) || file.split(/[\\/]/).includes('..')) return 'not a path inside the repository';
  if (!file.endsWith('.md')) return 'not a markdown prose file';
  const top = file.split(/[\\/]/)[0];
  if (top === '.git' || top === '.tune') return `${top}/ is not prose`;
  if (!path.resolve(root, file).startsWith(path.resolve(root) + path.sep)) return 'not a path inside the repository';
  return null;
}

async function readProposals(file) {
  const value = JSON.parse(await fs.readFile(file, 'utf8'));
  const list = Array.isArray(value) ? value : Array.isArray(value?.proposals) ? value.proposals : null;
  if (!list) throw new Error('TUNE_PROPOSALS must hold a JSON list of {file, change, why, expect}');
  return list.filter((p) => p && typeof p === 'object');
}

function casesOf(p) {
  const ids = [];
  for (const v of [p.case, ...(Array.isArray(p.cases) ? p.cases : [])]) if (typeof v === 'string' && v) ids.push(v);
  return ids;
}

async function main() {
  for (const name of ['TUNE_PROPOSALS', 'TUNE_CHANGES']) {
    if (!env[name]) {
      process.stderr.write(`editor.mjs: ${name} is not set (git-tune sets TUNE_FINDINGS, TUNE_PROPOSALS, TUNE_CHANGES, TUNE_HALF)\n`);
      process.exitCode = 2;
      return;
    }
  }
  const root = path.resolve(env.TUNE_ROOT || process.cwd());
  const half = env.TUNE_HALF === 'mem' ? 'mem' : 'nomem';
  const agentsDir = env.EXAMPLE_AGENTS_DIR || DEFAULT_AGENTS_DIR;
  let proposals;
  try {
    proposals = await readProposals(env.TUNE_PROPOSALS);
  } catch (err) {
    process.stderr.write(`editor.mjs: cannot read ${env.TUNE_PROPOSALS}: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const findings = env.TUNE_FINDINGS ? await fs.readFile(env.TUNE_FINDINGS, 'utf8').catch(() => '') : '';
  const verdict = /^## +(.+)$/m.exec(findings)?.[1]?.trim();

  // Merge: one entry per (file, change), remembering every case that asked for it.
  const merged = [];
  for (const p of proposals) {
    const change = String(p.change ?? '').trim();
    const found = merged.find((m) => m.file === p.file && m.change === change);
    if (found) found.cases.push(...casesOf(p).filter((id) => !found.cases.includes(id)));
    else merged.push({ file: p.file, change, why: p.why, expect: p.expect, cases: casesOf(p) });
  }

  const applied = [];
  const skipped = [];
  const texts = new Map();
  for (const p of merged) {
    const bad = checkPath(p.file, root);
    if (bad) {
      skipped.push({ ...p, reason: bad });
      continue;
    }
    if (half === 'mem' && !isMemoryPolicy(p.file, agentsDir)) {
      skipped.push({ ...p, reason: 'only memory-policy files may change in the with-memory half' });
      continue;
    }
    const full = path.join(root, p.file);
    let text = texts.get(p.file);
    if (text === undefined) {
      text = await fs.readFile(full, 'utf8').catch(() => null);
      if (text === null && !p.file.startsWith(`${agentsDir}/`)) {
        skipped.push({ ...p, reason: `no such file (new prose files are only made under ${agentsDir}/)` });
        continue;
      }
      text ??= '';
    }
    const out = applyChange(text, p.change);
    if (out.op === 'skipped') {
      skipped.push({ ...p, reason: out.reason });
      continue;
    }
    if (out.op === 'unchanged') {
      skipped.push({ ...p, reason: 'already there' });
      continue;
    }
    // Two proposals setting one key differently: the first wins, the other is reported.
    const rule = parseRuleLine(out.line);
    const key = rule.kind === 'rule' ? rule.key : undefined;
    if (key !== undefined && applied.some((a) => a.file === p.file && a.key === key)) {
      skipped.push({ ...p, reason: 'conflicts with an earlier proposal for the same rule' });
      continue;
    }
    texts.set(p.file, out.text);
    applied.push({ ...p, op: out.op, was: out.was, line: out.line, key });
  }
  for (const [file, text] of texts) {
    await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fs.writeFile(path.join(root, file), text);
  }

  const lines = ['# Changes', ''];
  lines.push(`Made by the example editor (a stand-in: no model) for the ${half === 'mem' ? 'with-memory' : 'no-memory'} half${verdict ? `, after a run graded ${verdict}` : ''}.`, '');
  if (applied.length === 0) lines.push('No prose change: no proposal could be applied.', '');
  for (const a of applied) {
    lines.push(a.op === 'replaced' ? `- \`${a.file}\`: \`${a.was}\` → \`${a.line}\`` : `- \`${a.file}\`: added \`${a.line}\``);
    if (a.why) lines.push(`  - why: ${a.why}`);
    if (a.expect) lines.push(`  - expect: ${a.expect}`);
  }
  if (skipped.length) {
    lines.push('', '## Not applied', '');
    for (const s of skipped) lines.push(`- \`${s.file ?? '(no file)'}\`: \`${s.change}\`: ${s.reason}`);
  }
  const aims = [...new Set(applied.flatMap((a) => a.cases))];
  if (half === 'nomem' && aims.length) lines.push('', `Aims: ${aims.join(', ')}`);
  await fs.mkdir(path.dirname(env.TUNE_CHANGES), { recursive: true });
  await fs.writeFile(env.TUNE_CHANGES, `${lines.join('\n')}\n`);
  process.stdout.write(`example editor: ${applied.length} change${applied.length === 1 ? '' : 's'} applied, ${skipped.length} not applied\n`);
}

main().catch((err) => {
  process.stderr.write(`editor.mjs: ${err.stack ?? err}\n`);
  process.exitCode = 1;
});
