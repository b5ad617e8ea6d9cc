/**
 * A small checker for the mermaid git-tune writes (the README's map, the
 * USAGE chart): not a mermaid parser, but strict about the subset we emit,
 * so a label that breaks out of its quotes or a node defined twice fails.
 */
export interface FlowchartCheck {
  nodes: Map<string, string>;
  /** Subgraphs by id: their title and the nodes defined in them. */
  subgraphs: Map<string, { title: string; direction: string | null; members: string[] }>;
  edges: Array<[string, string]>;
  classes: Map<string, string>;
  problems: string[];
}

const NODE = /^([A-Za-z][A-Za-z0-9_]*)(\(\[|\[\(|\{\{|\[|\()"([^"]*)"(\]\)|\)\]|\}\}|\]|\))$/;
const PAIRS: Record<string, string> = { '([': '])', '[(': ')]', '{{': '}}', '[': ']', '(': ')' };
const EDGE = /^([A-Za-z][A-Za-z0-9_]*) (-->|-\.->|-\. [^".|]+ \.->) ([A-Za-z][A-Za-z0-9_]*)$/;
const SUBGRAPH = /^subgraph ([A-Za-z][A-Za-z0-9_]*)\["([^"]*)"\]$/;
/** Words mermaid's flowchart grammar reads as keywords: no id may be one. */
const RESERVED = new Set(['end', 'subgraph', 'graph', 'flowchart', 'direction', 'class', 'classDef', 'style', 'linkStyle', 'click', 'call', 'href', 'default']);

/** The mermaid blocks of a markdown text. */
export function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

export function checkFlowchart(block: string): FlowchartCheck {
  const lines = block.split('\n');
  const out: FlowchartCheck = { nodes: new Map(), subgraphs: new Map(), edges: [], classes: new Map(), problems: [] };
  /** The subgraph being read (we emit no nesting: a subgraph inside another is a problem). */
  let open: string | null = null;
  /** Which subgraph each node was defined in. */
  const parent = new Map<string, string>();
  if (!/^flowchart (LR|TD|TB|RL|BT)$/.test(lines[0] ?? '')) out.problems.push(`first line is not a flowchart header: ${lines[0]}`);
  const classDefs = new Set<string>();
  for (const raw of lines.slice(1)) {
    const line = raw.trim();
    if (!line) continue;
    let m: RegExpExecArray | null;
    if ((m = SUBGRAPH.exec(line))) {
      if (open !== null) out.problems.push(`subgraph ${m[1]} opens inside subgraph ${open}`);
      if (out.subgraphs.has(m[1]!) || out.nodes.has(m[1]!)) out.problems.push(`subgraph ${m[1]} is defined twice or is also a node`);
      out.subgraphs.set(m[1]!, { title: m[2]!, direction: null, members: [] });
      open = m[1]!;
    } else if ((m = /^direction (LR|RL|TB|TD|BT)$/.exec(line))) {
      if (open === null) out.problems.push('direction outside a subgraph');
      else out.subgraphs.get(open)!.direction = m[1]!;
    } else if (line === 'end') {
      if (open === null) out.problems.push('end without a subgraph');
      else if (out.subgraphs.get(open)!.members.length === 0) out.problems.push(`subgraph ${open} is empty`);
      open = null;
    } else if ((m = /^classDef ([A-Za-z]+) [^\s].*$/.exec(line))) {
      classDefs.add(m[1]!);
    } else if ((m = /^class ([A-Za-z0-9_,]+) ([A-Za-z]+)$/.exec(line))) {
      for (const id of m[1]!.split(',')) {
        if (out.classes.has(id)) out.problems.push(`node ${id} is in two classes`);
        out.classes.set(id, m[2]!);
      }
    } else if ((m = EDGE.exec(line))) {
      out.edges.push([m[1]!, m[3]!]);
    } else if ((m = NODE.exec(line))) {
      if (PAIRS[m[2]!] !== m[4]) out.problems.push(`node ${m[1]} opens with ${m[2]} and closes with ${m[4]}`);
      if (out.nodes.has(m[1]!) || out.subgraphs.has(m[1]!)) out.problems.push(`node ${m[1]} is defined twice`);
      out.nodes.set(m[1]!, m[3]!);
      if (open !== null) {
        out.subgraphs.get(open)!.members.push(m[1]!);
        parent.set(m[1]!, open);
      }
    } else {
      out.problems.push(`line not understood: ${line}`);
    }
  }
  if (open !== null) out.problems.push(`subgraph ${open} is never closed`);
  for (const id of [...out.nodes.keys(), ...out.subgraphs.keys()]) if (RESERVED.has(id)) out.problems.push(`id ${id} is a mermaid keyword`);
  for (const [a, b] of out.edges) {
    for (const id of [a, b]) if (!out.nodes.has(id) && !out.subgraphs.has(id)) out.problems.push(`edge ${a} → ${b} names an undefined node ${id}`);
    // Mermaid drops a subgraph's own direction once one of its nodes is linked outside it.
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const sub = parent.get(x);
      if (sub && out.subgraphs.get(sub)!.direction && parent.get(y) !== sub) out.problems.push(`edge ${a} → ${b} links node ${x} out of subgraph ${sub}, whose direction mermaid would then drop`);
    }
  }
  for (const [id, cls] of out.classes) {
    if (!out.nodes.has(id)) out.problems.push(`class ${cls} names an undefined node ${id}`);
    if (!classDefs.has(cls)) out.problems.push(`class ${cls} is not defined`);
  }
  const now = [...out.classes].filter(([, c]) => c === 'now').map(([id]) => id);
  if (now.length !== 1) out.problems.push(`${now.length} now nodes: ${now.join(', ')}`);
  return out;
}

export function checkXyChart(block: string): string[] {
  const problems: string[] = [];
  const lines = block.split('\n').map((l) => l.trim());
  if (lines[0] !== 'xychart-beta') problems.push('not an xychart-beta');
  const list = (key: string) => {
    const line = lines.find((l) => l.startsWith(`${key} [`) || (key === 'x-axis' && /^x-axis "[^"]+" \[/.test(l)));
    if (!line) return null;
    const inner = line.slice(line.indexOf('[') + 1, line.lastIndexOf(']'));
    return inner.split(',').map((s) => s.trim());
  };
  const x = list('x-axis');
  const bar = list('bar');
  const lineSeries = list('line');
  if (!x || !bar || !lineSeries) return [...problems, 'x-axis, bar or line missing'];
  if (bar.length !== x.length || lineSeries.length !== x.length) problems.push(`x-axis has ${x.length} categories, bar ${bar.length}, line ${lineSeries.length}`);
  if (!x.every((c) => /^"[^"]+"$/.test(c))) problems.push('x-axis categories must be quoted');
  if (![...bar, ...lineSeries].every((v) => /^\d+$/.test(v))) problems.push('values must be whole numbers');
  return problems;
}
