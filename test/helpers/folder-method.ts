import { seededRandom } from './random.js';

/**
 * A seeded simulation of the folder method (zen-finetune's `finetune/`
 * folder), written for the differential test of `git tune import`: it walks
 * the method as its README and scripts describe it (dataset, config,
 * selection, batches planned by the growth rule, no-memory runs graded and
 * edited until one passes, the candidate, with-memory runs, the checkpoint,
 * the final check) and writes, after every step, the folder exactly as the
 * method leaves it, in the scripts' file shapes. Every state is kept, so a
 * test can ask both `next.mjs` and git-tune what comes next.
 *
 * It draws the events the method meets: wrong and right cases, VOID runs
 * at and above the concurrency floor, a PASSED without its review (refused),
 * edits applied after a PASSED, runs laid out and not started, runs started
 * and never finished, the run limit reached (stop, list what is still wrong
 * as difficult, write PASSED), difficult cases fixed and re-opened and stuck,
 * a selection cut by `limit`, and the final check VERIFIED or not.
 *
 * The batch plan follows the growth and recheck rules as our docs state them
 * (the README's method; the plan step in docs/git-model.md); the test checks it against `batch.mjs` at every
 * state where a batch is due, so the folders stay ones the method can reach.
 */
export interface FolderState {
  /** `t03-s017`: trajectory and step. */
  id: string;
  /** What the simulation just did. */
  label: string;
  /** Files under `finetune/`, by path relative to it. */
  files: Record<string, string>;
  /** Folders that exist even when empty (a run's `batch/`, the final check's folder). */
  dirs: string[];
}

type Half = 'nomem' | 'mem';
const REASONS = ['wrong', 'regressed', 'flaky', 'memory', 'costly'] as const;
type Reason = (typeof REASONS)[number];

interface SimCase {
  id: string;
  class: string;
  complexity: 'simple' | 'medium' | 'complex';
  hardness: number;
}

interface Entry {
  id: string;
  reasons: Reason[];
  added: string;
  fixed?: string;
}

interface Plan {
  batch: number;
  size: number;
  why: string;
  kind: 'new' | 'difficult';
  new: string[];
  recheck: string[];
}

const random = seededRandom;

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const pad = (n: number) => String(n).padStart(2, '0');
const runName = (batch: number, half: Half, run: number) => `batch${pad(batch)}-${half}-run${run}`;
const batchOfRun = (run: string) => Number(/^batch(\d+)/.exec(run)?.[1] ?? 0);
const SEVERITY: readonly string[] = REASONS;

class Stop extends Error {}

class Simulation {
  readonly states: FolderState[] = [];
  private files = new Map<string, string>();
  private dirs = new Set<string>();
  private step = 0;
  private cases: SimCase[] = [];
  private selection: string[] = [];
  private config: { limit: number; minBatch: number; maxBatch: number; recheck: number; concurrency?: number; seed: number; maxRetries: number } =
    { limit: 0, minBatch: 1, maxBatch: 1, recheck: 0, seed: 1, maxRetries: 1 };
  private plans = new Map<number, Plan>();
  private difficult: Entry[] = [];
  private lastGood: number[] = [];
  /** Verdicts of every run so far, by name ('' while not graded). */
  private verdicts = new Map<string, string>();
  private wrongs = new Map<string, string[]>();

  constructor(
    private readonly rnd: () => number,
    private readonly trajectory: number,
    private readonly maxStates: number,
    /** A small tuning (a few easy cases) reaches the final check within the states allowed. */
    private readonly small: boolean,
  ) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)]!;
  }

  private chance(p: number): boolean {
    return this.rnd() < p;
  }

  private write(rel: string, content: string): void {
    this.files.set(rel, content);
  }

  private snap(label: string): void {
    this.states.push({
      id: `t${pad(this.trajectory)}-s${String(this.step++).padStart(3, '0')}`,
      label,
      files: Object.fromEntries([...this.files].sort(([a], [b]) => (a < b ? -1 : 1))),
      dirs: [...this.dirs].sort(),
    });
    if (this.states.length >= this.maxStates) throw new Stop();
  }

  run(): FolderState[] {
    try {
      this.walk();
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
    }
    return this.states;
  }

  // ------------------------------------------------------------ the method

  private walk(): void {
    // The README is written by hand in the folder method; git-tune writes its own.
    this.write('README.md', '# Fine-tuning\n\nThe plan, written before anything runs.\n');
    this.snap('nothing yet: build the dataset');
    this.writeDataset();
    this.snap('dataset.json written');
    this.writeConfig();
    this.snap('config.json written');
    this.writeSelection();
    this.snap('selection.json written');
    for (;;) {
      const plan = this.planBatch();
      if (!plan) break;
      this.plans.set(plan.batch, plan);
      const first = runName(plan.batch, 'nomem', 1);
      this.write(`runs/${first}/cases.json`, this.casesJson([...plan.new, ...plan.recheck]));
      this.write(`runs/${first}/plan.json`, json(plan));
      this.snap(`batch ${plan.batch} planned`);
      this.half(plan, 'nomem');
      this.half(plan, 'mem');
      this.lastGood.push(plan.batch);
      this.write('memory/last-good.json', json({ batches: this.lastGood }));
      this.snap(`batch ${plan.batch} checkpointed`);
    }
    this.finalCheck();
  }

  private writeDataset(): void {
    const classes = ['billing', 'shipping', 'account', 'search'].slice(0, 2 + Math.floor(this.rnd() * 3));
    const size = this.small ? 3 + Math.floor(this.rnd() * 5) : 8 + Math.floor(this.rnd() * 18);
    const shape = this.chance(0.3) ? 'samples' : 'cases';
    const items = [];
    for (let i = 0; i < size; i++) {
      const klass = this.pick(classes);
      const c: SimCase = {
        id: `${klass}-${pad(i + 1)}`, class: klass,
        complexity: this.pick(['simple', 'medium', 'medium', 'complex'] as const),
        // A few cases no edit fixes: they end difficult, some stuck.
        hardness: this.chance(this.small ? 0.06 : 0.12) ? 1 : this.rnd() * (this.small ? 0.4 : 0.6),
      };
      this.cases.push(c);
      const rubric = this.chance(0.5)
        ? this.chance(0.5) ? [{ id: 'r1', text: 'names the window' }, { id: 'r2', text: 'says what to do next' }] : ['names the window', 'is polite']
        : undefined;
      items.push({ id: c.id, class: c.class, complexity: c.complexity, input: `question ${i + 1} about ${klass}`, ...(rubric ? { rubric } : {}) });
    }
    this.write('dataset.json', json({ [shape]: items }));
  }

  private writeConfig(): void {
    const minBatch = 1 + Math.floor(this.rnd() * 3);
    this.config = {
      limit: this.cases.length - (this.chance(0.25) ? 1 + Math.floor(this.rnd() * 3) : 0),
      minBatch,
      maxBatch: minBatch + Math.floor(this.rnd() * 6),
      recheck: Math.floor(this.rnd() * 4),
      ...(this.chance(0.75) ? { concurrency: this.pick([4, 6, 8, 12, 16]) } : {}),
      seed: 1 + Math.floor(this.rnd() * 99),
      maxRetries: 1 + Math.floor(this.rnd() * 3),
    };
    this.write('config.json', json(this.config));
  }

  /** Classes in turn, complex cases first inside a class (a seeded shuffle stands in for the rest). */
  private writeSelection(): void {
    const byClass = new Map<string, SimCase[]>();
    for (const c of [...this.cases].sort(() => this.rnd() - 0.5)) byClass.set(c.class, [...(byClass.get(c.class) ?? []), c]);
    const queues = [...byClass.values()].map((q) => q.sort((a, b) => Number(b.complexity === 'complex') - Number(a.complexity === 'complex')));
    const order: SimCase[] = [];
    while (queues.some((q) => q.length > 0)) for (const q of queues) if (q.length > 0) order.push(q.shift()!);
    this.selection = order.slice(0, this.config.limit).map((c) => c.id);
    this.write('selection.json', json({ batch: this.selection.map((id) => ({ id, input: this.caseOf(id).id })) }));
  }

  private caseOf(id: string): SimCase {
    return this.cases.find((c) => c.id === id)!;
  }

  private casesJson(ids: readonly string[]): string {
    return json({ batch: ids.map((id) => ({ id, input: `question about ${id}` })) });
  }

  /** The next batch by the growth and recheck rules, or null: go to the final check. */
  private planBatch(): Plan | null {
    const n = this.plans.size + 1;
    const done = [...this.plans.values()];
    const used: string[] = [];
    for (const p of done) for (const id of [...p.new, ...p.recheck]) if (!used.includes(id)) used.push(id);
    const unused = this.selection.filter((id) => !used.includes(id));
    const retries = (e: Entry) => done.filter((p) => p.batch > batchOfRun(e.added) && [...p.new, ...p.recheck].includes(e.id)).length;
    const worst = (e: Entry) => Math.min(...e.reasons.map((r) => SEVERITY.indexOf(r)));
    const open = this.difficult
      .filter((e) => !e.fixed && retries(e) < this.config.maxRetries)
      .sort((a, b) => worst(a) - worst(b) || retries(a) - retries(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const fixed = this.difficult.filter((e) => e.fixed);
    let size = this.config.minBatch;
    let why = `batch 1 is the smoke test: minBatch ${size}`;
    if (n > 1) {
      const prev = this.plans.get(n - 1)!;
      const counted = (half: Half) => [...this.verdicts].filter(([name, v]) => name.startsWith(`batch${pad(n - 1)}-${half}-`) && v !== 'VOID').length;
      const added = this.difficult.filter((e) => batchOfRun(e.added) === n - 1 && !e.fixed).length;
      const smooth = counted('nomem') <= 2 && counted('mem') <= 2 && added === 0;
      size = smooth ? Math.min(this.config.maxBatch, prev.size * 2) : prev.size;
      why = smooth ? `batch ${n - 1} went smoothly: ${prev.size} -> ${size}` : `batch ${n - 1} did not go smoothly: stays at ${size}`;
    }
    let kind: Plan['kind'] = 'new';
    let fresh = unused.slice(0, size);
    if (fresh.length === 0) {
      kind = 'difficult';
      fresh = open.map((e) => e.id).filter((id) => this.selection.includes(id)).slice(0, size);
    }
    if (fresh.length === 0) return null;
    const pool = used.filter((id) => !fresh.includes(id) && this.selection.includes(id));
    let s = ((this.config.seed * 7919 + n * 104729) % 2147483646) + 1;
    const key = new Map<string, number>();
    for (const id of pool) {
      s = (s * 48271) % 2147483647;
      key.set(id, s);
    }
    const first = [...open, ...fixed].map((e) => e.id).filter((id) => key.has(id));
    const complex = (id: string) => Number(this.caseOf(id).complexity === 'complex');
    const rest = pool.filter((id) => !first.includes(id)).sort((a, b) => complex(b) - complex(a) || key.get(a)! - key.get(b)!);
    const recheck = [...first, ...rest].slice(0, this.config.recheck);
    return { batch: n, size, why, kind, new: fresh, recheck };
  }

  private entry(id: string): Entry | undefined {
    return this.difficult.find((e) => e.id === id);
  }

  /** Puts a case on the difficult list (or adds a reason, re-opening a fixed entry). */
  private markDifficult(id: string, reason: Reason, run: string): void {
    const e = this.entry(id);
    if (!e) this.difficult.push({ id, reasons: [reason], added: run });
    else {
      if (!e.reasons.includes(reason)) e.reasons.push(reason);
      delete e.fixed;
    }
    this.write('difficult.json', json({ cases: this.difficult }));
  }

  /** One half of a batch: runs until one passes, or the run limit stops it. */
  private half(plan: Plan, half: Half): void {
    const ids = [...plan.new, ...plan.recheck];
    if (half === 'mem') {
      const first = runName(plan.batch, 'mem', 1);
      this.write(`runs/${first}/cases.json`, this.casesJson(ids));
      this.snap(`${first} laid out`);
    }
    let number = 1;
    let concurrency = this.config.concurrency ?? 16;
    for (;;) {
      const name = runName(plan.batch, half, number);
      if (this.chance(0.15)) {
        this.dirs.add(`runs/${name}/batch`);
        this.snap(`${name} started, not finished`);
      }
      this.dirs.add(`runs/${name}/batch`);
      this.write(`runs/${name}/batch/batch.json`, json({ batch: { concurrency, cases: ids.length } }));
      this.verdicts.set(name, '');
      this.snap(`${name} finished, not graded`);
      if (this.chance(0.08)) {
        this.grade(name, 'VOID', []);
        this.snap(`${name} VOID at concurrency ${concurrency}`);
        if (concurrency <= 4) throw new Stop(); // the floor: the machine cannot run the batch
        const halved = Math.max(4, Math.floor(concurrency / 2));
        if ((this.config.concurrency ?? 16) > halved) {
          this.config.concurrency = halved;
          this.write('config.json', json(this.config));
        }
        concurrency = Math.min(this.config.concurrency ?? 16, halved);
        number += 1;
        this.layOut(plan, half, number, ids);
        continue;
      }
      const tuned = [...this.verdicts].filter(([n, v]) => n.startsWith(`batch${pad(plan.batch)}-${half}-`) && v !== 'VOID').length;
      const wrong = ids.filter((id) => this.rnd() < this.caseOf(id).hardness - 0.15 * (number - 1) + (half === 'mem' ? -0.2 : 0));
      const verdict = this.verdictFor(half, name, wrong, ids);
      if (verdict === 'PASSED') {
        if (this.chance(0.12)) {
          this.grade(name, 'PASSED', wrong, false);
          this.snap(`${name} PASSED without its review`);
        }
        this.grade(name, 'PASSED', wrong, true);
        if (tuned < 4 && this.chance(0.1)) {
          this.write(`runs/${name}/changes.md`, '# Changes\n\nOne more rule, after the pass.\n');
          this.snap(`${name} PASSED with edits applied after it`);
          number += 1;
          this.layOut(plan, half, number, ids);
          continue;
        }
        this.passed(plan, half, name, ids, wrong);
        return;
      }
      this.grade(name, verdict, wrong);
      this.noteTrouble(plan, half, name, wrong);
      if (tuned >= 4) {
        this.snap(`${name} is run 4 and did not pass: stop`);
        for (const id of wrong) if (!this.entry(id) || this.entry(id)!.fixed) this.markDifficult(id, half === 'mem' ? 'memory' : 'wrong', name);
        this.grade(name, 'PASSED', wrong, true);
        this.passed(plan, half, name, ids, wrong);
        return;
      }
      if (this.chance(0.7)) this.snap(`${name} ${verdict}, nothing applied yet`);
      const aims = wrong.length > 0 && this.chance(0.3) ? `Aims: ${wrong.slice(0, 2).join(', ')}\n\n` : '';
      this.write(`runs/${name}/changes.md`, `# Changes\n\n${aims}- a rule for what went wrong\n`);
      this.snap(`${name} edits applied`);
      number += 1;
      this.layOut(plan, half, number, ids);
    }
  }

  private layOut(plan: Plan, half: Half, number: number, ids: readonly string[]): void {
    const name = runName(plan.batch, half, number);
    this.write(`runs/${name}/cases.json`, this.casesJson(ids));
    this.snap(`${name} laid out`);
  }

  private verdictFor(half: Half, name: string, wrong: readonly string[], ids: readonly string[]): string {
    if (wrong.length === 0) return half === 'mem' ? (this.chance(0.6) ? 'PASSED' : 'CORRECT') : this.chance(0.15) ? 'CORRECT' : 'PASSED';
    if (half === 'mem') return 'REGRESSION';
    const before = [...this.wrongs].filter(([n]) => n.startsWith(name.replace(/run\d+$/, 'run'))).at(-1)?.[1];
    if (!before) return wrong.length * 2 >= ids.length ? 'MIXED' : 'PROGRESS';
    const fixed = before.filter((id) => !wrong.includes(id)).length;
    const broke = wrong.filter((id) => !before.includes(id)).length;
    return fixed > 0 && broke > 0 ? 'MIXED' : fixed > 0 ? 'PROGRESS' : broke > 0 ? 'REGRESSION' : 'NO CHANGE';
  }

  /** A recheck case that fails is regressed; memory that made a case worse is listed too. */
  private noteTrouble(plan: Plan, half: Half, name: string, wrong: readonly string[]): void {
    for (const id of wrong) {
      if (half === 'nomem' && plan.recheck.includes(id) && this.chance(0.5)) this.markDifficult(id, 'regressed', name);
      if (half === 'mem' && this.chance(0.3)) this.markDifficult(id, 'memory', name);
    }
  }

  private grade(name: string, verdict: string, wrong: readonly string[], review = false): void {
    const batch = this.plans.get(batchOfRun(name));
    const ids = batch ? [...batch.new, ...batch.recheck] : this.selection;
    const half = name.includes('-mem-') ? 'mem' : 'nomem';
    const lines = [`# Findings: ${name}`, '', `## ${verdict}`, ''];
    if (verdict !== 'VOID') {
      lines.push('| case | right | llm calls |', '| --- | --- | ---: |', ...ids.map((id) => `| ${id} | ${wrong.includes(id) ? 'no' : 'yes'} | ${3 + id.length} |`), '');
    } else lines.push('Killed for memory (exit 137): the run says nothing about the prose.', '');
    if (review) lines.push(half === 'mem' ? '## Memory review' : '## Cost review', '', 'Every case read; nothing left worth cutting.', '');
    this.write(`runs/${name}/findings.md`, lines.join('\n'));
    this.verdicts.set(name, verdict);
    if (verdict !== 'VOID') this.wrongs.set(name, [...wrong]);
  }

  private passed(plan: Plan, half: Half, name: string, ids: readonly string[], wrong: readonly string[]): void {
    if (half === 'nomem') {
      for (const id of ids) {
        const e = this.entry(id);
        if (e && !e.fixed && !wrong.includes(id) && this.chance(0.6)) {
          e.fixed = name;
          this.write('difficult.json', json({ cases: this.difficult }));
        }
      }
      const right = ids.filter((id) => !wrong.includes(id) && !this.entry(id));
      if (right.length > 0 && this.chance(0.15)) this.markDifficult(this.pick(right), 'costly', name);
      this.snap(`${name} PASSED: build the candidate`);
      this.write('memory/candidate.json', json({ from: name, nodes: 10 + ids.length }));
      this.snap(`candidate built from ${name}`);
    } else {
      this.snap(`${name} PASSED with memory: keep its memory`);
    }
  }

  private finalCheck(): void {
    this.dirs.add('runs/final-check');
    this.snap('final check under way');
    this.dirs.add('runs/final-check/batch');
    this.write('runs/final-check/batch/batch.json', json({ batch: { concurrency: this.config.concurrency ?? 16, cases: this.selection.length } }));
    this.snap('final check finished, not graded');
    const verified = this.chance(0.7);
    this.write('runs/final-check/findings.md', `# Final check\n\n## ${verified ? 'VERIFIED' : 'FAILED'}\n\n${verified ? 'Every case right.' : 'Two cases regressed.'}\n`);
    this.snap(`final check ${verified ? 'VERIFIED' : 'failed'}`);
  }
}

/**
 * `count` trajectories of the method from `seed`, each cut at `maxStates`
 * states (a long tuning repeats itself; short ones cover more kinds).
 */
export function generateFolderStates(seed: number, count: number, maxStates = 60): FolderState[] {
  const out: FolderState[] = [];
  for (let t = 0; t < count; t++) {
    // Small tunings run to their end; large ones are cut earlier (they repeat themselves).
    const small = t % 2 === 1;
    out.push(...new Simulation(random(seed * 1000 + t), t, small ? maxStates * 2 : Math.ceil(maxStates * 0.6), small).run());
  }
  return out;
}
