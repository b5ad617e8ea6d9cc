import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { usageError } from '../../errors.js';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('show <run> [case]')
      .description('a run: its cases, answers, usage and verdict so far; with a case, that case; --log its stdout/stderr')
      .option('--log', "the case's captured stdout, stderr, raw result and transcript (if the runner wrote one)")
      .option('--transcript', 'only the transcript the runner wrote to TUNE_TRANSCRIPT (kept in the logs ref, capped at 1 MiB, secrets redacted)')
      .addOption(json())
      .addOption(tuningOpt())
      .addHelpText('after', `\nExamples:\n  git tune show batch01-nomem-run1\n  git tune show batch01-nomem-run1 billing-refund-03 --log\n  git tune show batch01-nomem-run1 billing-refund-03 --transcript`),
    run,
  );
}

export interface ShowOptions {
  log?: boolean;
  transcript?: boolean;
  json?: boolean;
  tuning?: string;
}

async function run(io: CommandIO, runName: string, caseId: string | undefined, opts: ShowOptions): Promise<void> {
  const [{ readRunResults, readRunJudge, requireRun }, { openTuning }, { caseRows, renderCaseTable, rightText }, { readCaseLog, readKeptFiles, readKeptFilesIn }, { RunStore }, { keptWorkspaceDir }, { caseOutcome, answersOf, answerVerdict, decidedBy }] = await Promise.all([
    import('../../app/results.js'), import('../../app/tuning.js'), import('../../core/report.js'), import('../../run/logs.js'), import('../../run/store.js'), import('../../run/case.js'), import('../../core/noise.js'),
  ]);
  /** A case's repeats (docs/method.md#noise): the majority and each answer. */
  const repeatLines = (r: import('../../contracts/result.js').CaseResult, judge: import('../../contracts/judge.js').JudgeFile): string[] => {
    if (!r.repeats?.length) return [];
    const o = caseOutcome(r, judge);
    return [
      `repeats: re-run ${r.repeats.length} time${r.repeats.length === 1 ? '' : 's'} on the same prose; ${o.right}/${o.n} right${o.rate === null ? '' : ` (${Math.round(o.rate * 100)}%)`}: ${decidedBy(r)} ${o.verdict}${o.flaky ? ' (flaky: the answers disagree)' : ''}`,
      ...answersOf(r).slice(1).map((a) => `  repeat ${a.n}${a.round === 2 ? ' (round 2)' : ''}: ${answerVerdict(r.id, a, judge)}, tokens ${a.result.tokens}, llm calls ${a.result.llmCalls}; answer: ${typeof a.result.answer === 'string' ? a.result.answer : JSON.stringify(a.result.answer)}`),
    ];
  };
  const tuning = await openTuning(io.cwd, opts.tuning);
  const state = requireRun(tuning, runName);
  const data = await readRunResults(tuning, runName);
  const judge = await readRunJudge(tuning, runName);
  const verdict = state.grade?.verdict ?? (state.void ? 'VOID' : null);
  if (!caseId) {
    if (opts.log) throw usageError('log-needs-case', '--log shows one case: name it', `git tune show ${runName} <case> --log`);
    if (opts.transcript) throw usageError('log-needs-case', '--transcript shows one case: name it', `git tune show ${runName} <case> --transcript`);
    if (opts.json) {
      printJson(io, { run: runName, finished: data.finished, verdict, void: state.void, meta: data.meta, results: data.results, pending: data.cases.filter((c) => !data.results.some((r) => r.id === c)) });
      return;
    }
    io.out(`${runName}: ${data.finished ? 'finished' : 'not finished'}; verdict ${verdict ?? 'not graded yet'}${state.void ? ` (${state.void})` : ''}; ${data.results.length}/${data.cases.length} cases have results`);
    if (data.meta) io.out(`runner ${data.meta.runner.join(' ')}; concurrency ${data.meta.concurrency}; ${data.meta.startedAt} → ${data.meta.finishedAt}`);
    io.out('');
    io.out(renderCaseTable(caseRows(data.results), false));
    return;
  }
  const result = data.results.find((r) => r.id === caseId);
  if (!data.cases.includes(caseId)) throw usageError('no-such-case', `${runName} has no case ${caseId}`, `git tune show ${runName}`);
  if (opts.log || opts.transcript) {
    const store = new RunStore(tuning.repo.gitdir, tuning.name, runName);
    const read = async (stream: 'stdout' | 'stderr' | 'transcript.jsonl') =>
      data.finished ? readCaseLog(tuning.repo, tuning.name, runName, caseId, stream) : store.readLog(caseId, stream);
    const transcript = await read('transcript.jsonl');
    if (opts.transcript) {
      if (opts.json) printJson(io, { run: runName, case: caseId, transcript });
      else if (transcript) io.out(transcript.endsWith('\n') ? transcript.slice(0, -1) : transcript);
      else io.err(`${runName} / ${caseId}: the runner wrote no transcript (a runner may write one to the file TUNE_TRANSCRIPT names; docs/contracts.md#runner)`);
      return;
    }
    const [stdout, stderr] = [await read('stdout'), await read('stderr')];
    const raw = data.finished ? await readCaseLog(tuning.repo, tuning.name, runName, caseId, 'result.json') : null;
    const kept = data.finished ? await readKeptFiles(tuning.repo, tuning.name, runName, caseId) : await readKeptFilesIn(keptWorkspaceDir(store.logDir, caseId));
    // Each repeat's logs, under <case>/repeat-<n>/ in the logs ref (docs/method.md#noise).
    const repeats = [];
    for (const rep of data.finished ? (result?.repeats ?? []) : []) {
      const at = `${caseId}/repeat-${rep.n}`;
      repeats.push({
        n: rep.n, stdout: await readCaseLog(tuning.repo, tuning.name, runName, at, 'stdout'), stderr: await readCaseLog(tuning.repo, tuning.name, runName, at, 'stderr'),
        result: await readCaseLog(tuning.repo, tuning.name, runName, at, 'result.json'),
      });
    }
    if (opts.json) printJson(io, { run: runName, case: caseId, stdout, stderr, result: raw, transcript, workspace: kept, repeats });
    else {
      io.out(`--- stdout\n${stdout ?? '(none kept)'}\n--- stderr\n${stderr ?? '(none kept)'}${raw ? `\n--- result.json\n${raw}` : ''}${transcript ? `\n--- transcript.jsonl\n${transcript}` : ''}`);
      for (const f of kept) io.out(`--- workspace/${f.path}\n${f.text}`);
      for (const r of repeats) io.out(`--- repeat-${r.n}/stdout\n${r.stdout ?? '(none kept)'}\n--- repeat-${r.n}/stderr\n${r.stderr ?? '(none kept)'}${r.result ? `\n--- repeat-${r.n}/result.json\n${r.result}` : ''}`);
    }
    return;
  }
  if (!result) {
    io.out(`${caseId}: no result yet in ${runName}`);
    return;
  }
  if (opts.json) {
    printJson(io, { run: runName, ...result, memoryWriteDetails: data.writes[caseId] ?? [] });
    return;
  }
  const lines = [
    `${runName} / ${caseId}: ${rightText(result.right, result.status)}${result.error ? ` (error: ${result.error})` : ''}${result.void ? ` (void: ${result.void})` : ''}`,
    `answer: ${typeof result.answer === 'string' ? result.answer : JSON.stringify(result.answer, null, 2)}`,
    ...result.checks.map((c) => `check ${c.type}: ${c.pass ? 'pass' : `FAIL${c.detail ? ` (${c.detail})` : ''}`}`),
    `tokens ${result.tokens}, cost $${result.costUsd.toFixed(4)}, llm calls ${result.llmCalls}, tool calls ${result.toolCalls}, memory reads ${result.memoryReads}, ${(result.durationMs / 1000).toFixed(1)}s, exit ${result.exitCode ?? result.signal}`,
    `memory writes: ${result.memoryWrites.added} added, ${result.memoryWrites.changed} changed, ${result.memoryWrites.deleted} deleted, ${result.memoryWrites.savedTwice} saved twice${result.memoryWrites.refused.length ? `; ignored: ${result.memoryWrites.refused.join(', ')}` : ''}`,
    ...(data.writes[caseId] ?? []).map((w) => `  ${w.op} ${w.path}${w.savedTwice ? ' (saved twice)' : ''}`),
    ...repeatLines(result, judge),
  ];
  io.out(lines.join('\n'));
}
