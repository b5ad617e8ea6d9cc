import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';

/**
 * Renders a mermaid block the way a reader sees it on GitHub: the real
 * mermaid library (the devDependency's browser bundle) in headless Chromium,
 * in a container 900 px wide where the SVG is scaled down to fit
 * (max-width: 100%, as GitHub shows it). No puppeteer: a static page renders
 * the block, measures the height of every line of text as drawn after the
 * scaling (a Range over each text node, getClientRects), and writes what it
 * found into the DOM, which `chromium --dump-dom` prints.
 */
export const WIDTH = 900;
const MERMAID = path.join(ROOT, 'node_modules/mermaid/dist/mermaid.min.js');
const BROWSERS = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

export const INSTALL_HINT =
  'The mermaid render test needs a headless Chromium. On Debian or Ubuntu: `sudo apt-get install -y --no-install-recommends chromium` ' +
  '(.ci/run installs it when run as root), or point CHROMIUM at a Chromium or Chrome binary.';

/** The browser to drive: $CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH; null when there is none. */
export function findChromium(): string | null {
  const named = process.env.CHROMIUM;
  if (named) return existsSync(named) ? named : null;
  for (const name of BROWSERS) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  }
  return null;
}

export interface TextLine {
  text: string;
  /** Where the line is drawn, in CSS px, after the SVG is scaled into the container. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Rendered {
  /** The error mermaid raised, or null. */
  error: string | null;
  /** The SVG's own width (its viewBox) and its width as drawn in the container. */
  naturalWidth: number;
  width: number;
  height: number;
  lines: TextLine[];
}

/** Pairs of lines of text drawn over each other (by more than a pixel each way). */
export function overlaps(lines: readonly TextLine[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i]!;
      const b = lines[j]!;
      const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (w > 1 && h > 1) out.push([a.text, b.text]);
    }
  }
  return out;
}

function page(block: string): string {
  // The block goes in as JSON, with `<` escaped so nothing in it can close the script.
  const source = JSON.stringify(block).replace(/</g, '\\u003c');
  return `<!doctype html>
<html><head><meta charset="utf-8">
<style>body { margin: 0; background: #fff } #box { width: ${WIDTH}px } #box svg { max-width: 100%; height: auto; display: block }</style>
<script src="${pathToFileURL(MERMAID).href}"></script>
</head><body><div id="box"></div><pre id="out">pending</pre>
<script>
(async () => {
  const out = document.getElementById('out');
  const done = (result) => { out.textContent = encodeURIComponent(JSON.stringify(result)); };
  try {
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    const { svg } = await mermaid.render('map', ${source});
    const box = document.getElementById('box');
    box.innerHTML = svg;
    const el = box.querySelector('svg');
    const rect = el.getBoundingClientRect();
    const lines = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) if (r.width > 0 && r.height > 0) lines.push({ text: n.textContent.trim(), x: r.x, y: r.y, width: r.width, height: r.height });
    }
    const error = document.querySelector('.error-text') ? document.querySelector('.error-text').textContent : null;
    done({ error, naturalWidth: el.viewBox.baseVal.width, width: rect.width, height: rect.height, lines });
  } catch (e) {
    done({ error: String((e && e.message) || e), naturalWidth: 0, width: 0, height: 0, lines: [] });
  }
})();
</script></body></html>`;
}

const run = promisify(execFile);

/** One headless Chromium launch with its own profile; its stdout. */
async function chromium(browser: string, dir: string, args: string[]): Promise<string> {
  const { stdout } = await run(browser, [
    '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--no-first-run',
    `--user-data-dir=${path.join(dir, 'profile')}`, '--virtual-time-budget=20000', ...args,
  ], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 });
  return stdout;
}

/**
 * Renders `block` at 900 px wide; with `png`, also writes a screenshot of the
 * whole diagram there (a second launch, the window as tall as the diagram).
 */
export async function renderMermaid(block: string, opts: { png?: string } = {}): Promise<Rendered> {
  const browser = findChromium();
  if (!browser) throw new Error(process.env.CHROMIUM ? `CHROMIUM names ${process.env.CHROMIUM}, which does not exist. ${INSTALL_HINT}` : INSTALL_HINT);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-render-'));
  try {
    const file = path.join(dir, 'page.html');
    writeFileSync(file, page(block));
    const dom = await chromium(browser, dir, ['--dump-dom', pathToFileURL(file).href]);
    const found = /<pre id="out">([^<]*)<\/pre>/.exec(dom);
    if (!found || found[1] === 'pending') throw new Error(`the page did not finish rendering in Chromium (${browser}):\n${dom.slice(0, 2000)}`);
    const result = JSON.parse(decodeURIComponent(found[1]!)) as Rendered;
    if (opts.png && !result.error) {
      const height = Math.ceil(result.height) + 8;
      await chromium(browser, dir, [`--window-size=${WIDTH},${height}`, `--screenshot=${opts.png}`, pathToFileURL(file).href]);
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
