/** One node of a chain graph as the API gives it. */
interface DagNode {
  name: string;
  status?: string;
  provider?: string;
}

const W = 150;
const H = 44;
const GAP_X = 60;
const GAP_Y = 20;

/** Each node's column: the longest path from a root, so every edge points rightwards. */
function columns(nodes: readonly DagNode[], edges: readonly { source: string; target: string }[]): Map<string, number> {
  const column = new Map(nodes.map((n) => [n.name, 0]));
  // Bellman-Ford style relaxation, bounded by the node count (a chain graph is acyclic).
  for (let round = 0; round < nodes.length; round++) {
    let changed = false;
    for (const e of edges) {
      const next = (column.get(e.source) ?? 0) + 1;
      if (next > (column.get(e.target) ?? 0) && next < nodes.length) {
        column.set(e.target, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return column;
}

/** The chain's steps as boxes left to right, the edges a run took drawn solid. */
export function DagDrawing({
  nodes,
  edges,
  label,
}: {
  nodes: readonly DagNode[];
  edges: readonly { source: string; target: string; on_execution_path: boolean }[];
  label: string;
}) {
  const column = columns(nodes, edges);
  const rows = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const c = column.get(n.name) ?? 0;
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    at.set(n.name, { x: c * (W + GAP_X) + 4, y: r * (H + GAP_Y) + 4 });
  }
  const width = (Math.max(0, ...column.values()) + 1) * (W + GAP_X);
  const height = Math.max(1, ...rows.values()) * (H + GAP_Y);
  return (
    <svg class="dag" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={label}>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" />
        </marker>
      </defs>
      {edges.map((e) => {
        const a = at.get(e.source);
        const b = at.get(e.target);
        if (!a || !b) return null;
        return (
          <line
            key={`${e.source}->${e.target}`}
            class={e.on_execution_path ? 'edge taken' : 'edge'}
            x1={a.x + W}
            y1={a.y + H / 2}
            x2={b.x}
            y2={b.y + H / 2}
            marker-end="url(#arrow)"
          />
        );
      })}
      {nodes.map((n) => {
        const p = at.get(n.name);
        if (!p) return null;
        return (
          <g key={n.name} class={`node ${n.status ?? 'definition'}`} transform={`translate(${p.x},${p.y})`}>
            <rect width={W} height={H} rx="6" />
            <text x={W / 2} y={18} text-anchor="middle">
              {n.name}
            </text>
            <text x={W / 2} y={34} text-anchor="middle" class="sub">
              {n.status ?? n.provider ?? ''}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
