import type { Case } from '../../contracts/dataset.js';
import { describeValue, type Problem } from '../../contracts/problems.js';

/**
 * What the app reads off a `finetune/` folder for the import (the only I/O
 * before writing), and the collector every reader of it reports to: problems
 * refuse the folder whole, warnings are reported after the import. Pure.
 */
export interface RunFolder {
  /** The folder's name under runs/ as found. */
  folder: string;
  hasBatchDir: boolean;
  /** Compact files, relative to the run folder (posix), in a stable order. */
  files: string[];
}

export interface FolderInput {
  /** The folder as problems name it (relative to the working directory). */
  shown: string;
  /** The dataset file read (`dataset.json`, …), or null when the folder has none yet. */
  datasetFile: string | null;
  /** The validated dataset ([] when missing or refused; see problems). */
  cases: Case[];
  /** Text of every file read, by path relative to the folder (posix). */
  files: ReadonlyMap<string, string>;
  runFolders: RunFolder[];
  /** Problems found while reading (the dataset's, listed the way `dataset import` does). */
  problems: string[];
}

export interface FolderReader {
  input: FolderInput;
  problems: Problem[];
  warnings: string[];
  caseIds: Set<string>;
  /** A file as problems name it. */
  shown(rel: string): string;
  /** A JSON file, undefined when absent or not JSON (a problem then). */
  json(rel: string): unknown;
  /** Reports the ids that are not dataset cases (when the dataset itself was readable). */
  knownIds(ids: readonly string[], file: string, fieldName: string): void;
}

export function folderReader(input: FolderInput): FolderReader {
  const problems: Problem[] = [];
  const caseIds = new Set(input.cases.map((c) => c.id));
  const shown = (rel: string) => `${input.shown}/${rel}`;
  const parsed = new Map<string, unknown>();
  return {
    input, problems, warnings: [], caseIds, shown,
    json(rel) {
      if (parsed.has(rel)) return parsed.get(rel);
      const text = input.files.get(rel);
      let value: unknown;
      if (text !== undefined) {
        try {
          value = JSON.parse(text);
        } catch (err) {
          const m = /position (\d+)/.exec((err as Error).message);
          const where = m ? `line ${text.slice(0, Number(m[1])).split('\n').length}` : undefined;
          problems.push({ file: shown(rel), where, message: `is not valid JSON (${(err as Error).message})` });
        }
      }
      parsed.set(rel, value);
      return value;
    },
    knownIds(ids, file, fieldName) {
      if (input.problems.length > 0 || input.datasetFile === null) return;
      for (const id of ids) {
        if (!caseIds.has(id)) problems.push({ file, field: fieldName, message: 'names a case that is not in the dataset', received: describeValue(id) });
      }
    },
  };
}
