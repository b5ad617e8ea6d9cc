import { viewDifficult } from './difficult.js';
import { countedRuns, isVoidRun, rightCases, type BatchState, type TuningState } from './fold.js';
import type { Half } from './names.js';
import type { PredictedBatch, ReadmeInput } from './readme.js';
import { answerTokens } from './tuning-state.js';
import { formatCount, percentSaved, representativeRun } from './usage.js';

/*
 * The README's mermaid map (docs/reports.md#the-map), drawn from the state and
 * the batches the growth rule still plans. Pure, as the rest of the README.
 */

/**
 * The map is drawn top-down (docs/reports.md): set-up, one subgraph per batch
 * with its no-memory and with-memory halves side by side, the batches ahead,
 * the final check and `done`; the difficult list and the last good memory are
 * stores beside them. Batches are linked subgraph to subgraph, never node to
 * node, so mermaid keeps each subgraph's halves left to right.
 *
 * It stays legible at any length: the width does not grow with the number of
 * batches (they stack), and the height is bounded by grouping. At most
 * MAP_BATCHES batches are drawn one subgraph each: past that, the oldest
 * finished batches become one summary node. When more than MAP_AHEAD batches
 * are ahead, the next one is drawn and the rest become one node.
 */
export const MAP_BATCHES = 12;
export const MAP_AHEAD = 3;

type MapClass = 'done' | 'ahead' | 'failed' | 'store';

interface MapNode {
  id: string;
  label: string[];
  shape: 'box' | 'stadium' | 'hex' | 'db';
  cls: MapClass | null;
}

/** A batch drawn as a subgraph: its id, title and two halves. */
interface MapBatch {
  id: string;
  title: string;
  halves: [MapNode, MapNode];
}

const nodeId = (batch: number, half: Half) => `b${batch}${half === 'nomem' ? 'n' : 'm'}`;
const subgraphId = (batch: number) => `B${batch}`;
const plural = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

/** A mermaid label: lines joined by <br/>, with nothing in them that could end the label or open markup. */
function label(lines: readonly string[]): string {
  return `"${lines.map((l) => l.replace(/["[\]{}()<>|#`]/g, ' ').replace(/\s+/g, ' ').trim()).join('<br/>')}"`;
}

/** The status line of one half: ✔ passed, ✘ another verdict, ▶ running, with runs so far and cases right. */
function halfStatus(b: BatchState, half: Half): { text: string; cls: MapClass | null } {
  const runs = b.runs.filter((r) => r.half === half);
  const last = runs[runs.length - 1];
  if (!last) return { text: 'not run yet', cls: 'ahead' };
  const counted = plural(countedRuns(runs), 'run');
  const before = countedRuns(runs) > 0 ? ` · ${counted} before` : '';
  if (!last.finished) return { text: `▶ run ${last.number} ${last.stopped !== null ? 'stopped' : 'running'}${before}`, cls: null };
  if (isVoidRun(last)) return { text: `run ${last.number} VOID · ${counted}`, cls: null };
  if (!last.grade) return { text: `run ${last.number} waits for its grade · ${counted}`, cls: null };
  const right = `${rightCases(last).length}/${last.cases.length} right`;
  if (last.grade.verdict === 'PASSED') return { text: `✔ ${counted} · ${right}`, cls: 'done' };
  return { text: `✘ ${last.grade.verdict} · ${counted} · ${right}`, cls: null };
}

/** The tokens the with-memory half saved against the no-memory half (last finished non-VOID run of each), or null. */
function tokensSaved(b: BatchState): string | null {
  const n = representativeRun(b.runs, 'nomem');
  const m = representativeRun(b.runs, 'mem');
  return n && m && n.tokens > 0 ? `${percentSaved(n.tokens, m.tokens)} tokens` : null;
}

function drawnBatch(state: TuningState, b: BatchState): MapBatch {
  const { plan } = b;
  const added = state.difficult.filter((e) => e.batch === plan.batch).length;
  const title = `batch ${plan.batch} · ${plan.new.length} ${plan.kind === 'difficult' ? 'difficult' : 'new'}${plan.recheck.length ? ` + ${plan.recheck.length} recheck` : ''}${added ? ` · ${added} difficult added` : ''}`;
  const n = halfStatus(b, 'nomem');
  const m = halfStatus(b, 'mem');
  const saved = m.cls === 'ahead' ? null : tokensSaved(b);
  return {
    id: subgraphId(plan.batch),
    title,
    halves: [
      { id: nodeId(plan.batch, 'nomem'), label: ['no memory', n.text], shape: 'box', cls: n.cls },
      { id: nodeId(plan.batch, 'mem'), label: ['with memory', saved ? `${m.text} · ${saved}` : m.text], shape: 'box', cls: m.cls },
    ],
  };
}

function plannedBatch(p: PredictedBatch): MapBatch {
  const size = `${p.exact ? '' : '~'}${p.size} ${p.kind === 'difficult' ? 'difficult' : 'new'}`;
  return {
    id: subgraphId(p.batch),
    title: `batch ${p.batch} · ${size}${p.exact ? ', planned next' : ' if all goes smoothly'}`,
    halves: [
      { id: nodeId(p.batch, 'nomem'), label: ['no memory', 'not run yet'], shape: 'box', cls: 'ahead' },
      { id: nodeId(p.batch, 'mem'), label: ['with memory', 'not run yet'], shape: 'box', cls: 'ahead' },
    ],
  };
}

/** "10, 10, 10, 5" as "10 ×3, 5". */
function sizeRuns(sizes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < sizes.length;) {
    let j = i;
    while (j < sizes.length && sizes[j] === sizes[i]) j++;
    parts.push(j - i > 1 ? `${sizes[i]} ×${j - i}` : `${sizes[i]}`);
    i = j;
  }
  return parts.join(', ');
}

const span = (from: number, to: number) => (from === to ? `batch ${from}` : `batches ${from}-${to}`);

/** Finished batches grouped into one node: how many cases, runs and checkpoints, and what memory saved. */
function pastNode(state: TuningState, batches: readonly BatchState[]): MapNode {
  const first = batches[0]!.plan.batch;
  const last = batches[batches.length - 1]!.plan.batch;
  const fresh = batches.reduce((s, b) => s + b.plan.new.length, 0);
  const runs = (half: Half) => batches.reduce((s, b) => s + countedRuns(b.runs.filter((r) => r.half === half)), 0);
  let without = 0;
  let withMemory = 0;
  for (const b of batches) {
    const n = representativeRun(b.runs, 'nomem');
    const m = representativeRun(b.runs, 'mem');
    if (n && m) { without += answerTokens(n); withMemory += answerTokens(m); }
  }
  const checkpointed = batches.filter((b) => state.checkpoints.includes(b.plan.batch)).length;
  const added = state.difficult.filter((e) => e.batch >= first && e.batch <= last).length;
  const lines = [`${span(first, last)}: done`, `${plural(fresh, 'new case')}${added ? ` · ${added} difficult added` : ''}`, `runs: ${runs('nomem')} no memory, ${runs('mem')} with`];
  lines.push(`${checkpointed === batches.length ? 'all' : `${checkpointed} of ${batches.length}`} checkpointed${without > 0 ? ` · ${percentSaved(without, withMemory)} tokens` : ''}`);
  return { id: 'past', label: lines, shape: 'box', cls: checkpointed === batches.length ? 'done' : null };
}

/** The batches ahead past the next one, as one node. */
function aheadNode(rest: readonly PredictedBatch[]): MapNode {
  const fresh = rest.filter((p) => p.kind === 'new');
  const difficult = rest.find((p) => p.kind === 'difficult');
  const lines = [`${span(rest[0]!.batch, rest[rest.length - 1]!.batch)} planned`];
  if (fresh.length) lines.push(`sizes ~${sizeRuns(fresh.map((p) => p.size))} new`, 'if all goes smoothly');
  if (difficult) lines.push(`${fresh.length ? 'then ' : ''}~${plural(difficult.size, 'difficult case')}`);
  return { id: 'ahead', label: lines, shape: 'box', cls: 'ahead' };
}

/** Which node is `now`, from the next step. */
function nowNode(input: ReadmeInput, ids: ReadonlySet<string>): string {
  const { next, state } = input;
  const fallback = (): string => {
    const b = state.batches[state.batches.length - 1];
    if (state.final.length > 0) return 'final';
    if (!b) return 'start';
    return nodeId(b.plan.batch, b.runs.some((r) => r.half === 'mem') ? 'mem' : 'nomem');
  };
  if (!next) return fallback();
  let id: string | null = null;
  if (next.kind === 'dataset' || next.kind === 'config' || next.kind === 'select') id = 'start';
  else if (next.kind === 'done') id = 'done';
  else if (next.kind === 'final' || next.kind === 'final-failed' || (next.run !== null && next.batch === null && next.half === null)) id = 'final';
  else if (next.kind === 'candidate' || next.kind === 'mem-run' || next.kind === 'checkpoint') id = next.batch !== null ? nodeId(next.batch, 'mem') : null;
  else if (next.batch !== null) id = nodeId(next.batch, next.half ?? 'nomem');
  return id !== null && ids.has(id) ? id : fallback();
}

function shapeOf(n: MapNode): string {
  const t = label(n.label);
  switch (n.shape) {
    case 'stadium': return `${n.id}([${t}])`;
    case 'hex': return `${n.id}{{${t}}}`;
    case 'db': return `${n.id}[(${t})]`;
    default: return `${n.id}[${t}]`;
  }
}

export function renderMap(input: ReadmeInput, predicted: PredictedBatch[]): string {
  const { state } = input;
  const selected = state.selection ? `${state.selection.selected} of ${state.selection.total} cases selected` : state.dataset ? `${state.dataset.cases} cases, not selected yet` : 'no dataset yet';
  const start: MapNode = { id: 'start', label: ['set-up', selected], shape: 'stadium', cls: state.selection ? 'done' : null };

  // What is drawn one subgraph each, and what is grouped.
  const aheadEach = predicted.length <= MAP_AHEAD ? predicted : predicted.slice(0, 1);
  const aheadRest = predicted.slice(aheadEach.length);
  const room = Math.max(1, MAP_BATCHES - aheadEach.length);
  const grouped = state.batches.length > room ? state.batches.slice(0, state.batches.length - room) : [];
  const shown = state.batches.slice(grouped.length);

  const singles: MapNode[] = [start];
  const chain: string[] = ['start'];
  const past = grouped.length > 0 ? pastNode(state, grouped) : null;
  if (past) { singles.push(past); chain.push(past.id); }
  const subgraphs = [...shown.map((b) => drawnBatch(state, b)), ...aheadEach.map(plannedBatch)];
  chain.push(...subgraphs.map((s) => s.id));
  const ahead = aheadRest.length > 0 ? aheadNode(aheadRest) : null;
  if (ahead) { singles.push(ahead); chain.push(ahead.id); }

  const finalRun = state.final[state.final.length - 1];
  const finalText = finalRun ? (finalRun.grade ? finalRun.grade.verdict : finalRun.finished ? 'waits for its grade' : 'running') : 'not run yet';
  const verified = finalRun?.grade?.verdict === 'VERIFIED';
  const cases = state.selection ? `all ${state.selection.selected} selected cases at once` : 'every selected case at once';
  singles.push(
    { id: 'final', label: ['final check', cases, finalText], shape: 'hex', cls: verified ? 'done' : finalRun?.grade ? 'failed' : finalRun ? null : 'ahead' },
    { id: 'done', label: ['done'], shape: 'stadium', cls: verified ? 'done' : 'ahead' },
  );
  chain.push('final', 'done');
  const view = viewDifficult(state, input.config?.maxRetries ?? 3);
  const count = (s: string) => view.filter((e) => e.status === s).length;
  const lastGoodBatch = state.checkpoints.length ? Math.max(...state.checkpoints) : null;
  singles.push(
    { id: 'difficult', label: ['difficult list', `${count('open')} open · ${count('fixed')} fixed · ${count('stuck')} stuck`], shape: 'db', cls: 'store' },
    { id: 'memory', label: ['last good memory', lastGoodBatch === null ? 'empty' : `up to batch ${lastGoodBatch}`], shape: 'db', cls: 'store' },
  );

  /** The drawn item a batch is in: its subgraph, or the group of finished batches. */
  const itemOf = (batch: number) => (grouped.some((b) => b.plan.batch === batch) ? 'past' : subgraphs.some((s) => s.id === subgraphId(batch)) ? subgraphId(batch) : null);
  const nodes = [...singles, ...subgraphs.flatMap((s) => s.halves)];
  const ids = new Set(nodes.map((n) => n.id));
  const now = nowNode(input, ids);

  const lines = ['## Map', '', '```mermaid', 'flowchart TD'];
  for (const n of singles) lines.push(`  ${shapeOf(n)}`);
  for (const s of subgraphs) {
    lines.push(`  subgraph ${s.id}[${label([s.title])}]`, '    direction LR');
    for (const n of s.halves) lines.push(`    ${shapeOf(n)}`);
    lines.push(`    ${s.halves[0].id} --> ${s.halves[1].id}`, '  end');
  }
  for (let i = 1; i < chain.length; i++) lines.push(`  ${chain[i - 1]} --> ${chain[i]}`);
  // The stores sit beside the batches that use them: an edge from each
  // batch that added difficult cases would pull the list across the map.
  lines.push(`  difficult -. open ones rechecked first .-> ${aheadEach.length ? subgraphId(aheadEach[0]!.batch) : 'final'}`);
  if (lastGoodBatch !== null) lines.push(`  ${itemOf(lastGoodBatch) ?? 'start'} -. checkpoint .-> memory`);
  lines.push('  memory -. with it .-> final');
  lines.push(
    '  classDef done fill:#dff5e1,stroke:#2e7d32',
    '  classDef ahead fill:#fafafa,stroke:#9e9e9e,stroke-dasharray:4 3,color:#616161',
    '  classDef failed fill:#fde2e2,stroke:#c62828',
    '  classDef store fill:#e8eefc,stroke:#3f51b5',
    '  classDef now fill:#fff3c4,stroke:#f57f17,stroke-width:3px',
  );
  for (const cls of ['done', 'ahead', 'failed', 'store'] as const) {
    const members = nodes.filter((n) => n.cls === cls && n.id !== now).map((n) => n.id);
    if (members.length > 0) lines.push(`  class ${members.join(',')} ${cls}`);
  }
  lines.push(`  class ${now} now`, '```');
  const notes = ['Each batch is a box with its no-memory half and its with-memory half (✔ passed, ✘ the last verdict, ▶ running; runs so far, cases right, and the tokens memory saved); the `now` node is highlighted; dashed boxes are ahead, sized by the growth rule as if each batch went smoothly.'];
  if (past) notes.push(`Batches ${grouped[0]!.plan.batch}-${grouped[grouped.length - 1]!.plan.batch} are summed up in one box to keep the map legible: each is in the table below.`);
  lines.push('', notes.join(' '));
  return lines.join('\n');
}
