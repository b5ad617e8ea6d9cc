import { createHash } from 'node:crypto';
import type { Config } from '../../contracts/config.js';
import { datasetRev } from '../../contracts/dataset.js';
import type { BatchPlan, Selection } from '../../contracts/files.js';
import { formatProblem } from '../../contracts/problems.js';
import { countedRuns, foldHistory, halfRuns, type TuningState } from '../fold.js';
import { batchLabel, type Half } from '../names.js';
import { batchPlanPath, configPath, datasetPath, RUN_FILES, runDir, runFilePath, selectionPath, tuningDir } from '../paths.js';
import { formatStep, parseStep, type DifficultChange, type StepData } from '../steps.js';
import { folderReader, type FolderInput } from './folder.js';
import { caseResultsFile } from './results.js';
import { parseRunFolderName } from './values.js';
import { placeDifficult, readDifficult, type DifficultPlacement } from './difficult.js';
import { readMemoryPointers } from './memory.js';
import { gradeRuns, groupBatches, halfOf, passingRun, readPlans, readRuns, type Batches, type RunPlan } from './runs.js';
import { readConfig, readSelection, type InitFlags } from './settings.js';

/**
 * A `finetune/` folder, read, becomes the list of step commits that replay
 * it (docs/import.md), oldest first: init (config.yaml), dataset, select, difficult
 * entries added before batch 1, then per batch: plan; per run (nomem before
 * mem, by number) run-start, run (tagged), grade, and when that grade found
 * an edit unconfirmed, a revert of it (the folder method reverts such edits
 * by hand: there is no prose history to undo), then edit; a PASSED at
 * `maxRuns` is followed by a revert of every edit still pending (reverted by
 * hand before PASSED was written there). A run folder that holds its cases
 * but never started is a `run-plan` (its batch's first no-memory run needs
 * none: the plan lays it out). The batch's difficult entries follow its last
 * graded run; the candidate follows the no-memory half (when with-memory runs
 * follow, or candidate.json names that run); the checkpoint follows the
 * with-memory half (when a later batch or the final check follows, or
 * last-good.json holds that batch or a later one); then the final check.
 * Pure: the plan is data, folded as it is built so every step is checked
 * against the history before anything is written.
 */
export interface PlannedStep {
  data: StepData;
  difficult: DifficultChange[];
  subject: string;
  body: string;
  /** Paths relative to the repository root, with their content. */
  files: Array<[path: string, content: string]>;
  tags: string[];
  /** For a revert: the indexes (in the plan's steps) of the edits it reverts. */
  reverts?: number[];
}

export interface ImportPlan {
  tuning: string;
  dir: string;
  steps: PlannedStep[];
  tags: string[];
  warnings: string[];
  /** Every problem, formatted; when there is any, `steps` is empty and nothing may be written. */
  problems: string[];
  /** The state the imported history folds to (placeholder oids). */
  state: TuningState;
}

export interface ImportOptions {
  tuning: string;
  flags?: InitFlags;
  /** config.yaml's text for these values (the app's renderer: comments on every key). */
  renderConfig: (values: Record<string, unknown>) => string;
}

/** A fake but stable oid per planned step, so the plan can be folded before anything is written. */
export function placeholderOid(index: number): string {
  return createHash('sha1').update(`git-tune import step ${index}`).digest('hex');
}

/** Everything the replay needs, read and checked. */
interface ReadTuning {
  tuning: string;
  dir: string;
  input: FolderInput;
  config: Config;
  configText: string;
  folderConcurrency: number;
  selection: Selection | null;
  batches: Batches;
  plans: Map<number, BatchPlan>;
  final: RunPlan | null;
  candidateRun: string | null;
  lastGood: number;
  difficult: DifficultPlacement;
}

/** Turns the folder into the step commits that replay it; a bad folder gets every problem and no step. */
export function planImport(input: FolderInput, options: ImportOptions): ImportPlan {
  const { tuning } = options;
  const r = folderReader(input);
  const { config, values, folderConcurrency } = readConfig(r, options.flags ?? {});
  const hasRuns = input.runFolders.some((f) => parseRunFolderName(f.folder) !== null);
  const selection = input.datasetFile === null ? null : readSelection(r, config, hasRuns);
  const { runs, final } = readRuns(r);
  const holds = [
    ...(input.files.has('selection.json') ? ['selection.json'] : []),
    ...(runs.length > 0 || final ? ['runs/'] : []),
    ...(input.files.has('difficult.json') ? ['difficult.json'] : []),
  ];
  if (input.datasetFile === null && holds.length > 0) {
    r.problems.push({ file: r.shown('dataset.json'), message: `is missing, yet the folder holds ${holds.join(', ')}: the dataset comes first (a list of cases, or {"cases": [...]})` });
  }
  const batches = groupBatches(r, runs);
  const selected = selection?.ids ?? [];
  const plans = readPlans(r, batches, new Set(selected));
  gradeRuns(r, runs, final, selected);
  const { candidateRun, lastGood } = readMemoryPointers(r, runs, batches);
  const difficult = placeDifficult(r, readDifficult(r, batches.last), plans, batches);
  const dir = tuningDir(tuning);
  const refused = (problems: string[]): ImportPlan => ({
    tuning, dir, steps: [], tags: [], warnings: r.warnings, problems, state: foldHistory(tuning, []),
  });
  if (r.problems.length > 0 || input.problems.length > 0) return refused([...input.problems, ...r.problems.map(formatProblem)]);

  const { steps, state } = replay(
    {
      tuning, dir, input, config, configText: options.renderConfig(values), folderConcurrency, selection, batches, plans,
      final, candidateRun, lastGood, difficult,
    },
    r.warnings,
  );
  if (state.warnings.length > 0) {
    return refused(state.warnings.map((w) => formatProblem({ file: input.shown, message: `does not replay as a history: ${w}` })));
  }
  return { tuning, dir, steps, tags: steps.flatMap((s) => s.tags), warnings: r.warnings, problems: [], state };
}

/** The step commits, in the order things happened (the order is documented at the top of this file). */
function replay(t: ReadTuning, warnings: string[]): { steps: PlannedStep[]; state: TuningState } {
  const { tuning, dir, input, config, selection, batches } = t;
  const steps: PlannedStep[] = [];
  const indexByOid = new Map<string, number>();
  const selected = selection?.ids ?? [];
  // Folded as it grows, so a step can ask what the history says so far (one fold for the whole replay).
  const state = foldHistory(tuning, [], selected);
  const shown = (rel: string) => `${input.shown}/${rel}`;
  const subject = (text: string) => `tune(${tuning}): ${text}`;
  const from = (rel: string) => `Imported from ${shown(rel)}.`;
  const runPath = (run: RunPlan, rel: string) => `${runDir(dir, run.name)}/${rel}`;
  const copy = (run: RunPlan, rels: string[]): Array<[string, string]> =>
    rels.filter((rel) => run.files.includes(rel)).map((rel) => [runPath(run, rel), input.files.get(`${run.base}/${rel}`)!]);
  const add = (step: Omit<PlannedStep, 'difficult' | 'tags' | 'files'> & Partial<PlannedStep>) => {
    const planned: PlannedStep = { difficult: [], tags: [], files: [], ...step };
    const oid = placeholderOid(steps.length);
    indexByOid.set(oid, steps.length);
    steps.push(planned);
    const message = formatStep({ ...planned.data, tuning, difficult: planned.difficult } as Parameters<typeof formatStep>[0], planned.subject, planned.body);
    foldHistory(tuning, [{ oid, message, step: parseStep(message) }], selected, state);
  };
  const cases = input.cases;
  const classes = new Set(cases.map((c) => c.class)).size;
  const revs = new Map(cases.map((c) => [c.id, c.rev]));
  const indexOf = (oid: string) => indexByOid.get(oid)!;

  add({
    data: { step: 'init', tuning }, subject: subject('init'),
    body: `Start tuning ${tuning}, imported from the folder ${input.shown}.`,
    files: [[configPath(dir), t.configText]],
  });
  if (input.datasetFile === null) return { steps, state };
  add({
    data: { step: 'dataset', cases: cases.length, rev: datasetRev(cases) },
    subject: subject(`dataset of ${cases.length} cases in ${classes} class${classes === 1 ? '' : 'es'}`),
    body: from(input.datasetFile),
    files: [[datasetPath(dir), cases.map((c) => JSON.stringify(c)).join('\n') + (cases.length ? '\n' : '')]],
  });
  if (selection === null) return { steps, state };
  const cut = selection.limit < selection.total ? ` (limit ${selection.limit} of ${selection.total})` : '';
  add({
    data: { step: 'select', selected: selection.limit, total: selection.total },
    subject: subject(`select ${selection.limit} cases${cut}`),
    body: input.files.has('selection.json') ? `${from('selection.json')} The folder's order is kept.` : 'The folder has no selection.json: git tune select\'s order.',
    files: [[selectionPath(dir), `${JSON.stringify(selection, null, 2)}\n`]],
  });
  const addDifficult = (batch: number) => {
    const changes = t.difficult.changes.get(batch);
    if (!changes) return;
    const adds = changes.filter((c) => c.op === 'add').length;
    const notes = t.difficult.notes.get(batch) ?? [];
    add({
      data: { step: 'difficult' }, difficult: changes,
      subject: subject(`difficult list${batch === 0 ? ' before batch 1' : ` of batch ${batch}`} (${adds} added, ${changes.length - adds} fixed)`),
      body: [from('difficult.json'), ...(notes.length ? ['', 'Notes:', ...notes.map((n) => `- ${n}`)] : [])].join('\n'),
    });
  };

  // docs/method.md#edits: an imported folder has no prose history; an edit a run did not confirm was undone by hand.
  const addUnconfirmedRevert = (run: RunPlan) => {
    const left = state.edits.filter((e) => e.settledBy === run.name && e.status === 'unconfirmed');
    if (left.length === 0) return;
    add({
      data: { step: 'revert', reverts: left.map((e) => e.oid) },
      reverts: left.map((e) => indexOf(e.oid)),
      subject: subject(`revert ${left.length} edit${left.length === 1 ? '' : 's'} ${run.name} did not confirm (reverted in the folder)`),
      body: `${run.name} did not confirm the edit${left.length === 1 ? '' : 's'} made before it. The folder keeps no prose history, so the folder method's rule stands: an unconfirmed edit was reverted by hand. The changes.md files stay as the record.`,
    });
  };

  // docs/import.md: the folder method reverts by hand before it writes PASSED at the run limit.
  const addHandRevert = (run: RunPlan, batch: number, half: Half) => {
    if (countedRuns(halfRuns(state, batch, half)) < config.maxRuns) return;
    const left = state.edits.filter((e) => e.batch === batch && e.half === half && (e.status === 'pending' || e.status === 'unconfirmed'));
    if (left.length === 0) return;
    add({
      data: { step: 'revert', reverts: left.map((e) => e.oid) },
      reverts: left.map((e) => indexOf(e.oid)),
      subject: subject(`revert ${left.length} edit${left.length === 1 ? '' : 's'} of ${batchLabel(batch)} ${half} (reverted in the folder)`),
      body: `${run.name} is the half's run ${config.maxRuns} of ${config.maxRuns}: the folder method reverted its unconfirmed and pending edits by hand before writing PASSED. The changes.md files stay as the record.`,
    });
  };

  const addRun = (run: RunPlan) => {
    if (!run.started) {
      // Its cases laid out, never started: the batch's first no-memory run is its plan's; any other is a run-plan.
      const first = run.id.kind === 'batch' && run.id.half === 'nomem' && run.id.number === 1;
      if (!first) add({ data: { step: 'run-plan', run: run.name }, subject: subject(`plan ${run.name} (not started)`), body: from(run.base), files: copy(run, ['cases.json']) });
      return;
    }
    const concurrency = run.results?.concurrency ?? t.folderConcurrency;
    const startFiles = ['cases.json', 'plan.json'];
    const otherFiles = run.files.filter((f) => !startFiles.includes(f) && f !== 'findings.md' && f !== 'changes.md');
    add({
      data: { step: 'run-start', run: run.name, concurrency },
      subject: subject(`start ${run.name}`),
      body: from(run.base),
      files: copy(run, run.finished ? startFiles : [...startFiles, ...otherFiles]),
    });
    if (!run.finished) return;
    const results = run.results!;
    const count = run.id.kind === 'final' ? selected.length : (run.cases ?? []).length;
    // The folder's own results.json, if any, is copied as it is instead.
    const own = run.files.includes('results.json');
    const resultsFile = own ? null : caseResultsFile(results, revs);
    if (resultsFile === null && !own) warnings.push(`${shown(`${run.base}/batch/batch.json`)}: its results do not fit results.json; only the file itself is kept`);
    add({
      data: {
        step: 'run', run: run.name, concurrency, cases: count, void: results.void, stopped: results.stopped,
        tokens: results.tokens, costUsd: results.costUsd,
      },
      subject: subject(`run ${run.name} (${count} cases${results.void ? ', VOID' : ''})`),
      body: from(`${run.base}/batch/batch.json`),
      files: [
        ...copy(run, [...otherFiles, ...(run.verdict ? [] : [RUN_FILES.findings])]),
        ...(resultsFile === null ? [] : [[runFilePath(dir, run.name, RUN_FILES.results), resultsFile] as [string, string]]),
      ],
      tags: [run.name],
    });
    if (!run.verdict) return;
    add({
      data: { step: 'grade', run: run.name, verdict: run.verdict, wrong: run.wrong, review: run.review },
      subject: subject(`grade ${run.name} ${run.verdict} (${run.wrong.length} wrong)`),
      body: from(`${run.base}/findings.md`),
      files: copy(run, [RUN_FILES.findings]),
    });
    if (run.id.kind !== 'batch') return;
    addUnconfirmedRevert(run);
    if (run.changes) {
      add({
        data: { step: 'edit', run: run.name, aims: run.changes.aims },
        subject: subject(`edit after ${run.name}`),
        body: `${from(`${run.base}/changes.md`)} The prose edits themselves were made in the project before the import.`,
        files: copy(run, [RUN_FILES.changes]),
      });
    }
    if (run.verdict === 'PASSED') addHandRevert(run, run.id.batch, run.id.half);
  };

  addDifficult(0);
  for (const b of batches.numbers) {
    const plan = t.plans.get(b)!;
    add({
      data: { step: 'plan', batch: b, size: plan.size, kind: plan.kind, new: plan.new, recheck: plan.recheck },
      subject: subject(`plan batch ${b} (${plan.new.length} ${plan.kind} + ${plan.recheck.length} recheck)`),
      body: plan.why,
      files: [[batchPlanPath(dir, b), `${JSON.stringify(plan, null, 2)}\n`]],
    });
    const list = batches.runs.get(b)!;
    const lastGraded = [...list].reverse().find((x) => x.verdict !== null) ?? null;
    const nomemPass = passingRun(batches, b, 'nomem');
    const memPass = passingRun(batches, b, 'mem');
    // A with-memory run folder, even one only laid out, comes after the candidate it runs from.
    const memFolders = list.some((x) => halfOf(x) === 'mem');
    for (const half of ['nomem', 'mem'] as const) {
      if (half === 'mem' && nomemPass && (memFolders || t.candidateRun === nomemPass.name)) {
        add({
          data: { step: 'candidate', run: nomemPass.name },
          subject: subject(`candidate memory from ${nomemPass.name}`),
          body: t.candidateRun === nomemPass.name ? from('memory/candidate.json') : `Batch ${b}'s with-memory runs started from it.`,
        });
      }
      for (const run of list.filter((x) => halfOf(x) === half)) {
        addRun(run);
        if (run === lastGraded) addDifficult(b);
      }
    }
    if (!lastGraded) addDifficult(b);
    const later = b < batches.last ? `batch ${b + 1}` : t.final?.started ? 'the final check' : null;
    if (memPass && (later || t.lastGood >= b)) {
      add({
        data: { step: 'checkpoint', batch: b },
        subject: subject(`checkpoint: batch ${b} is the last good memory`),
        body: t.lastGood === b
          ? from('memory/last-good.json')
          : `In the folder ${later ?? `batch ${t.lastGood}'s checkpoint`} follows it, so it was the last good memory then.`,
      });
    } else if (later && !memPass) {
      warnings.push(`batch ${b} never passed with memory, yet ${later} follows: no checkpoint is imported for it`);
    }
  }
  if (t.final) addRun(t.final);
  return { steps, state };
}
