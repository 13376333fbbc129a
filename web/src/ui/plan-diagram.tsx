import { Link } from 'react-router';
import '../styles/automations-app.css';

/*
 * A plan drawn as a diagram: its steps top to bottom in the order they can run, each a box with
 * its title and kind, edges between them (a branch's labelled yes and no), a map's body drawn
 * inside it, a subflow linking to the automation it runs. On a run's page each box carries its
 * status in colour and in words, with a legend. Every box is a button (a subflow's a link):
 * focusable, and Enter opens its details.
 */

export interface DiagramNode {
  id: string;
  kind: string;
  title?: string;
  capability?: string;
  automation_id?: string;
  body?: { nodes: DiagramNode[]; edges?: DiagramEdge[] };
}
export interface DiagramEdge {
  from: string;
  to: string;
  when?: boolean;
}

const W = 184;
const H = 58;
const GAP_X = 20;
const GAP_Y = 36;
const PAD = 12;
const HEAD = 44;

interface Placed {
  node: DiagramNode;
  x: number;
  y: number;
  w: number;
  h: number;
  inner?: Layout;
}
interface Layout {
  width: number;
  height: number;
  placed: Map<string, Placed>;
  edges: DiagramEdge[];
}

/** Each node's level: the longest path of edges from a step with none coming in. */
function levels(nodes: DiagramNode[], edges: DiagramEdge[]): Map<string, number> {
  const ids = new Set(nodes.map((n) => n.id));
  const into = new Map<string, string[]>();
  for (const e of edges)
    if (ids.has(e.from) && ids.has(e.to)) into.set(e.to, [...(into.get(e.to) ?? []), e.from]);
  const level = new Map<string, number>();
  const visiting = new Set<string>();
  const of = (id: string): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle (the validator refuses it): drawn flat
    visiting.add(id);
    const l = Math.max(-1, ...(into.get(id) ?? []).map(of)) + 1;
    visiting.delete(id);
    level.set(id, l);
    return l;
  };
  for (const n of nodes) of(n.id);
  return level;
}

function layout(nodes: DiagramNode[], edges: DiagramEdge[] = []): Layout {
  const level = levels(nodes, edges);
  const rows: Placed[][] = [];
  for (const node of nodes) {
    const inner = node.kind === 'map' && node.body ? layout(node.body.nodes, node.body.edges) : undefined;
    const w = inner ? Math.max(W, inner.width + 2 * PAD) : W;
    const h = inner ? HEAD + inner.height + PAD : H;
    const l = level.get(node.id) ?? 0;
    (rows[l] ??= []).push({ node, x: 0, y: 0, w, h, ...(inner ? { inner } : {}) });
  }
  const rowWidth = (row: Placed[]) => row.reduce((s, p) => s + p.w, 0) + GAP_X * (row.length - 1);
  const width = Math.max(W, ...rows.map((r) => (r ? rowWidth(r) : 0)));
  const placed = new Map<string, Placed>();
  let y = 0;
  for (const row of rows) {
    if (!row) continue;
    let x = (width - rowWidth(row)) / 2;
    const rowHeight = Math.max(...row.map((p) => p.h));
    for (const p of row) {
      p.x = x;
      p.y = y;
      x += p.w + GAP_X;
      placed.set(p.node.id, p);
    }
    y += rowHeight + GAP_Y;
  }
  return { width, height: Math.max(0, y - GAP_Y), placed, edges };
}

export const STATUS_WORDS: Record<string, string> = {
  not_started: 'Not started',
  pending: 'Pending',
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  skipped: 'Skipped',
  simulated: 'Simulated',
  cancelled: 'Cancelled',
};

const LEGEND = ['succeeded', 'simulated', 'running', 'waiting', 'failed', 'skipped', 'not_started'];

function Edges({ at, ox, oy }: { at: Layout; ox: number; oy: number }) {
  return (
    <>
      {at.edges.map((e) => {
        const a = at.placed.get(e.from);
        const b = at.placed.get(e.to);
        if (!a || !b) return null;
        const x1 = ox + a.x + a.w / 2;
        const y1 = oy + a.y + a.h;
        const x2 = ox + b.x + b.w / 2;
        const y2 = oy + b.y;
        const mid = (y1 + y2) / 2;
        return (
          <g key={`${e.from}-${e.to}`}>
            <path
              d={`M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2 - 4}`}
              className="edge"
              markerEnd="url(#arrow)"
            />
            {e.when !== undefined && (
              <text x={(x1 + x2) / 2 + 4} y={mid} className="edge-label">
                {e.when ? 'yes' : 'no'}
              </text>
            )}
          </g>
        );
      })}
      {[...at.placed.values()].map((p) =>
        p.inner ? <Edges key={p.node.id} at={p.inner} ox={ox + p.x + PAD} oy={oy + p.y + HEAD} /> : null,
      )}
    </>
  );
}

function kindWords(n: DiagramNode): string {
  if (n.kind === 'capability' && n.capability) return n.capability;
  if (n.kind === 'map') return 'map: for each item';
  return n.kind;
}

function Boxes({
  at,
  ox,
  oy,
  statusOf,
  onOpen,
  prefix,
}: {
  at: Layout;
  ox: number;
  oy: number;
  statusOf?: ((id: string) => string) | undefined;
  onOpen?: ((id: string) => void) | undefined;
  prefix: string;
}) {
  return (
    <>
      {[...at.placed.values()].map((p) => {
        const n = p.node;
        const title = n.title ?? n.id;
        const status = statusOf?.(`${prefix}${n.id}`);
        const words = status ? (STATUS_WORDS[status] ?? status) : undefined;
        const label = `${title}, ${kindWords(n)}${words ? `, ${words}` : ''}`;
        const style = { left: ox + p.x, top: oy + p.y, width: p.w, height: p.h };
        const content = (
          <>
            <span className="node-title">{title}</span>
            <span className="node-kind">{kindWords(n)}</span>
            {words && <span className="node-status">{words}</span>}
          </>
        );
        const cls = `node kind-${n.kind}${status ? ` status-${status}` : ''}`;
        return (
          <div key={n.id}>
            {n.kind === 'subflow' && n.automation_id ? (
              <Link
                className={cls}
                style={style}
                to={`/automations/${encodeURIComponent(n.automation_id)}`}
                aria-label={label}
              >
                {content}
              </Link>
            ) : (
              <button
                type="button"
                className={cls}
                style={style}
                aria-label={label}
                onClick={() => onOpen?.(`${prefix}${n.id}`)}
              >
                {content}
              </button>
            )}
            {p.inner && (
              <Boxes
                at={p.inner}
                ox={ox + p.x + PAD}
                oy={oy + p.y + HEAD}
                statusOf={statusOf}
                onOpen={onOpen}
                prefix={`${prefix}${n.id}.`}
              />
            )}
          </div>
        );
      })}
    </>
  );
}

/** The plan diagram (a region named `Plan diagram`); `statusOf` colours each step by its status on a run's page. */
export function PlanDiagram({
  nodes,
  edges,
  statusOf,
  onOpen,
}: {
  nodes: DiagramNode[];
  edges?: DiagramEdge[] | undefined;
  /** A step's status by its id (`map.body_node` inside a map). */
  statusOf?: (id: string) => string;
  onOpen?: (id: string) => void;
}) {
  const at = layout(nodes, edges);
  const width = at.width + 2;
  const height = at.height + 2;
  return (
    <section className="diagram" aria-label="Plan diagram">
      <div className="diagram-scroll">
        <div className="diagram-canvas" style={{ width, height }}>
          <svg width={width} height={height} aria-hidden="true" className="diagram-edges">
            <defs>
              <marker
                id="arrow"
                viewBox="0 0 8 8"
                refX="7"
                refY="4"
                markerWidth="8"
                markerHeight="8"
                orient="auto"
              >
                <path d="M0,0 L8,4 L0,8 z" className="arrow" />
              </marker>
            </defs>
            <Edges at={at} ox={1} oy={1} />
          </svg>
          <Boxes at={at} ox={1} oy={1} statusOf={statusOf} onOpen={onOpen} prefix="" />
        </div>
      </div>
      {statusOf && (
        <ul className="legend" aria-label="Legend">
          {LEGEND.map((s) => (
            <li key={s}>
              <span className={`swatch status-${s}`} aria-hidden="true" /> {STATUS_WORDS[s]}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
