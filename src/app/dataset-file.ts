import { promises as fs } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseAllDocuments, parseDocument } from 'yaml';
import { caseRev, caseSchema, type Case } from '../contracts/dataset.js';
import { describeValue, formatProblem, problemsFromZod, type Problem } from '../contracts/problems.js';
import { usageError } from '../errors.js';

/**
 * Reading a dataset a user gives us (JSON, JSONL or YAML; a file or a folder
 * of them) and the tuning's own copy, `dataset.jsonl`. A bad input is refused
 * whole with every problem listed; nothing is written.
 */
const EXTENSIONS = new Set(['.json', '.jsonl', '.yaml', '.yml']);

interface RawItem {
  file: string;
  where: string;
  value: unknown;
}

function itemsOf(value: unknown, file: string, where: string, problems: Problem[]): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object' && Array.isArray((value as { cases?: unknown }).cases)) {
    return (value as { cases: unknown[] }).cases;
  }
  problems.push({ file, where, message: 'must be a list of cases, or an object with a `cases` list', received: describeValue(value) });
  return null;
}

function readJsonl(text: string, file: string, problems: Problem[]): RawItem[] {
  const out: RawItem[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push({ file, where: `line ${i + 1}`, value: JSON.parse(line) });
    } catch (err) {
      problems.push({ file, where: `line ${i + 1}`, message: `is not valid JSON (${(err as Error).message})` });
    }
  });
  return out;
}

function readJson(text: string, file: string, problems: Problem[]): RawItem[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const m = /position (\d+)/.exec((err as Error).message);
    const where = m ? `line ${text.slice(0, Number(m[1])).split('\n').length}` : undefined;
    problems.push({ file, where, message: `is not valid JSON (${(err as Error).message})` });
    return [];
  }
  return (itemsOf(value, file, 'top level', problems) ?? []).map((v, i) => ({ file, where: `case ${i + 1}`, value: v }));
}

function readYaml(text: string, file: string, problems: Problem[]): RawItem[] {
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: counter });
  if (!Array.isArray(docs)) return [];
  const out: RawItem[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        problems.push({ file, where: e.linePos ? `line ${e.linePos[0].line}` : undefined, message: `is not valid YAML: ${e.message.split('\n')[0]}` });
      }
      continue;
    }
    const value = doc.toJS();
    const items = itemsOf(value, file, 'top level', problems);
    if (!items) continue;
    const seq = doc.contents as { items?: Array<{ range?: [number, number, number] }> } | null;
    const seqItems = Array.isArray(value) ? seq?.items : (doc.get('cases', true) as typeof seq)?.items;
    items.forEach((v, i) => {
      const range = seqItems?.[i]?.range;
      const line = range ? ` (line ${counter.linePos(range[0]).line})` : '';
      out.push({ file, where: `case ${i + 1}${line}`, value: v });
    });
  }
  return out;
}

async function filesOf(input: string, shown = input): Promise<string[]> {
  const stat = await fs.stat(input).catch(() => null);
  if (!stat) throw usageError('no-such-file', `${shown} does not exist`, 'git tune dataset import <file|dir>');
  if (stat.isFile()) return [input];
  const names = (await fs.readdir(input)).filter((n) => EXTENSIONS.has(path.extname(n).toLowerCase())).sort();
  if (names.length === 0) {
    throw usageError('empty-dataset-dir', `${shown} holds no .json, .jsonl, .yaml or .yml file`, 'git tune dataset import <file|dir>');
  }
  return names.map((n) => path.join(input, n));
}

/** Reads and validates every case; throws a `bad-dataset` TuneError listing every problem. */
export async function readDatasetInput(input: string, displayBase = process.cwd(), label = 'the dataset'): Promise<Case[]> {
  const problems: Problem[] = [];
  const raw: RawItem[] = [];
  // Relative to the command's directory, not the process's (auto and demo run commands in-process).
  for (const file of await filesOf(path.resolve(displayBase, input), input)) {
    const shown = path.relative(displayBase, file) || file;
    const text = await fs.readFile(file, 'utf8');
    const ext = path.extname(file).toLowerCase();
    const read = ext === '.jsonl' ? readJsonl : ext === '.yaml' || ext === '.yml' ? readYaml : readJson;
    // A loop, not push(...): spread arguments overflow the stack past some 120,000 cases.
    for (const item of read(text, shown, problems)) raw.push(item);
  }
  return validateCases(raw, problems, label);
}

/** Cases already parsed from `file` (a folder's dataset.json, its shapes normalised): checked as every dataset is. */
export function validateDatasetValues(values: readonly unknown[], file: string): Case[] {
  return validateCases(values.map((value, i) => ({ file, where: `case ${i + 1}`, value })), []);
}

function validateCases(raw: RawItem[], problems: Problem[], label = 'the dataset'): Case[] {
  const cases: Case[] = [];
  const firstSeen = new Map<string, RawItem>();
  for (const item of raw) {
    const parsed = caseSchema.safeParse(item.value);
    if (!parsed.success) {
      problems.push(...problemsFromZod(parsed.error, item.value, item.file, item.where));
      continue;
    }
    const c = parsed.data;
    const earlier = firstSeen.get(c.id);
    if (earlier) {
      problems.push({ file: item.file, where: item.where, field: 'id', message: `repeats the id of ${earlier.file} ${earlier.where}; ids must be unique`, received: describeValue(c.id) });
      continue;
    }
    firstSeen.set(c.id, item);
    const { rev: _old, ...rest } = c;
    cases.push({ ...rest, rev: caseRev(rest) } as Case);
  }
  if (raw.length === 0 && problems.length === 0) {
    problems.push({ file: raw[0]?.file ?? 'dataset', message: 'holds no case' });
  }
  if (problems.length > 0) {
    throw usageError(
      'bad-dataset',
      `${label} was refused: ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was written`,
      'git tune dataset import <file|dir>   # again, once every problem listed is fixed (nothing was written)',
      problems.map(formatProblem),
    );
  }
  return cases;
}

export function formatDatasetJsonl(cases: readonly Case[]): string {
  return cases.map((c) => JSON.stringify(c)).join('\n') + (cases.length ? '\n' : '');
}

/** The tuning's own copy, written by us: trusted but still validated. */
export function parseDatasetJsonl(text: string, file: string): Case[] {
  const problems: Problem[] = [];
  const raw = readJsonl(text, file, problems);
  const cases = validateCases(raw, problems);
  return cases;
}

export function parseYamlOrJson(text: string): unknown {
  return parseDocument(text).toJS();
}
