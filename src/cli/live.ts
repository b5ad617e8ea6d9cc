import type { CaseEvent } from '../run/progress.js';

/**
 * What `git tune auto` (and `demo`) show while they work, on stderr. On a
 * terminal: the log scrolls, and under it a panel is redrawn in place with
 * the current step, the cases running with their elapsed time, and the tokens
 * and cost so far. Elsewhere (a pipe, a file, `--plain`, NO_COLOR): plain
 * append-only lines, the log alone.
 */
export interface LiveView {
  /** The step being worked on, and the tuning's usage when it starts. */
  step(text: string, usage: Usage): void;
  /** Narration: one line or several, appended to the log. */
  log(text: string, indent?: string): void;
  /** A case of a run started or finished (from the runner pool). */
  caseEvent(event: CaseEvent): void;
  /** Erases the panel and stops redrawing; later lines go straight to the stream. */
  close(): void;
}

export type { Usage } from '../app/auto.js';
import type { Usage } from '../app/auto.js';

export interface LiveViewOptions {
  title: string;
  write: (text: string) => void;
  /** Redraw in place (a terminal) or append plain lines. */
  tty: boolean;
  columns: () => number;
  clock: () => Date;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(4)}`;

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function createLiveView(opts: LiveViewOptions): LiveView {
  const started = opts.clock().getTime();
  let stepText = 'starting';
  let base: Usage = { tokens: 0, costUsd: 0 };
  const session: Usage = { tokens: 0, costUsd: 0 };
  const sinceStep: Usage = { tokens: 0, costUsd: 0 };
  const running = new Map<string, number>();
  let run: { name: string; done: number } | null = null;

  const panel = (): string[] => {
    const now = opts.clock().getTime();
    const lines = [`${opts.title} · ${formatElapsed(now - started)}`, `  ${stepText}`];
    if (run) {
      const cases = [...running].map(([id, t]) => `${id} ${formatElapsed(now - t)}`);
      const shown = cases.slice(0, 4).join(', ') + (cases.length > 4 ? `, +${cases.length - 4} more` : '');
      lines.push(`  ${run.name}: ${run.done} finished${cases.length ? ` · running: ${shown}` : ''}`);
    }
    lines.push(`  tokens ${fmt(base.tokens + sinceStep.tokens)} (${usd(base.costUsd + sinceStep.costUsd)}) in the tuning · ${fmt(session.tokens)} (${usd(session.costUsd)}) this session`);
    const width = Math.max(20, opts.columns() - 1);
    return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
  };
  const screen = panelUnderLog(opts, panel);
  const { draw, log } = screen;

  return {
    step(text, usage) {
      stepText = text;
      base = { ...usage };
      sinceStep.tokens = 0;
      sinceStep.costUsd = 0;
      run = null;
      running.clear();
      log(text);
    },
    log,
    caseEvent(event) {
      if (!run || run.name !== event.run) {
        run = { name: event.run, done: 0 };
        running.clear();
      }
      if (event.kind === 'started') running.set(event.id, opts.clock().getTime());
      else {
        running.delete(event.result.id);
        run.done++;
        for (const u of [session, sinceStep]) {
          u.tokens += event.result.tokens;
          u.costUsd += event.result.costUsd;
        }
      }
      draw();
    },
    close: screen.close,
  };
}

/**
 * The live view of `git tune auto --fleet`: one line per target under the
 * log on a terminal (its step, its run's cases, what it spent), redrawn in
 * place; plain lines elsewhere. Each target's narration is prefixed with
 * `[<target>]`, so interleaved lines still say whose they are.
 */
export interface FleetView {
  /** The view one target's driver writes to. */
  target(name: string): LiveView;
  log(text: string): void;
  close(): void;
}

export function createFleetView(opts: LiveViewOptions, targets: readonly string[]): FleetView {
  const started = opts.clock().getTime();
  interface Slot { step: string; run: string | null; done: number; running: Map<string, number>; spent: Usage }
  const slots = new Map<string, Slot>(targets.map((t) => [t, { step: 'starting', run: null, done: 0, running: new Map(), spent: { tokens: 0, costUsd: 0 } }]));
  const width = Math.max(...targets.map((t) => t.length), 6);
  const panel = (): string[] => {
    const now = opts.clock().getTime();
    const total = [...slots.values()].reduce((u, s) => ({ tokens: u.tokens + s.spent.tokens, costUsd: u.costUsd + s.spent.costUsd }), { tokens: 0, costUsd: 0 });
    const lines = [`${opts.title} · ${formatElapsed(now - started)} · ${fmt(total.tokens)} tokens (${usd(total.costUsd)}) this session`];
    for (const [name, s] of slots) {
      // The step's number and kind, its run's cases and the cost first: a narrow terminal cuts the step's message.
      const colon = s.step.indexOf(': ');
      const [kind, what] = colon < 0 ? [s.step, ''] : [s.step.slice(0, colon), s.step.slice(colon + 2)];
      const cases = s.run ? ` · ${s.run}: ${s.done} finished${s.running.size ? `, ${s.running.size} running` : ''}` : '';
      lines.push(`  ${name.padEnd(width)}  ${kind}${cases} · ${usd(s.spent.costUsd)}${what ? ` · ${what}` : ''}`);
    }
    const cols = Math.max(20, opts.columns() - 1);
    return lines.map((l) => (l.length > cols ? `${l.slice(0, cols - 1)}…` : l));
  };
  const screen = panelUnderLog(opts, panel);
  const { draw, log } = screen;
  return {
    target(name) {
      const slot = slots.get(name)!;
      const prefix = `[${name}] `;
      return {
        step(text) {
          slot.step = text.replace(/^\S+ · /, '');
          slot.run = null;
          slot.running.clear();
          log(text, prefix);
        },
        log: (text, indent = '') => log(text, `${prefix}${indent}`),
        caseEvent(event) {
          if (slot.run !== event.run) {
            slot.run = event.run;
            slot.done = 0;
            slot.running.clear();
          }
          if (event.kind === 'started') slot.running.set(event.id, opts.clock().getTime());
          else {
            slot.running.delete(event.result.id);
            slot.done++;
            slot.spent.tokens += event.result.tokens;
            slot.spent.costUsd += event.result.costUsd;
          }
          draw();
        },
        close() {},
      };
    },
    log: (text) => log(text),
    close: screen.close,
  };
}

/**
 * A panel redrawn in place under a scrolling log on a terminal (erased,
 * the log line written, the panel drawn again; redrawn every second for the
 * clocks); elsewhere the log alone, append-only.
 */
function panelUnderLog(opts: LiveViewOptions, panel: () => string[]) {
  let drawn = 0;
  let closed = false;
  const erase = () => {
    if (drawn > 0) opts.write(`\x1b[${drawn}F\x1b[0J`);
    drawn = 0;
  };
  const draw = () => {
    if (!opts.tty || closed) return;
    const lines = panel();
    erase();
    opts.write(`${lines.join('\n')}\n`);
    drawn = lines.length;
  };
  const log = (text: string, prefix = '') => {
    const lines = text.replace(/\r/g, '').split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) return;
    const out = `${lines.map((l) => `${prefix}${l}`).join('\n')}\n`;
    if (opts.tty && !closed) {
      erase();
      opts.write(out);
      draw();
    } else opts.write(out);
  };
  const timer = opts.tty ? setInterval(draw, 1000) : null;
  timer?.unref();
  return {
    draw,
    log,
    close() {
      if (timer) clearInterval(timer);
      if (opts.tty && !closed) erase();
      closed = true;
    },
  };
}
