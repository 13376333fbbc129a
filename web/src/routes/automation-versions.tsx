import { call } from '../api.ts';
import { useResource } from '../hooks.ts';
import { planVersions, type PlanDiff, type PlanVersion } from '../../../src/contract/automations.ts';
import { JsonValue } from '../ui/json.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';

const FIELDS: Record<string, string> = {
  name: 'the plan’s name',
  description: 'the plan’s description',
  ask: 'the ask',
  write_approval: 'whether writes need an approval',
};

function Changes({ diff }: { diff: PlanDiff }) {
  const lines: string[] = [
    ...diff.added.map((n) => `Added step ${n.node_id} (${n.kind})`),
    ...diff.removed.map((n) => `Removed step ${n.node_id} (${n.kind})`),
    ...diff.changed.map((n) => `Changed step ${n.node_id}: ${n.fields.join(', ')}`),
    ...diff.edges_added.map((e) => `Added edge ${e}`),
    ...diff.edges_removed.map((e) => `Removed edge ${e}`),
    ...diff.fields.map((f) => `Changed ${FIELDS[f] ?? f}`),
  ];
  if (lines.length === 0) return <p className="muted small">Same plan as the version before.</p>;
  return (
    <ul className="diff">
      {lines.map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  );
}

/** Who made a version: its author, or an agent for them. Versions from before it was recorded do not say. */
function madeBy(v: PlanVersion): string {
  return v.made_by === 'agent' ? `an agent for ${v.author}` : v.author;
}

/** The versions of the plan, newest first, each with who made it and what changed from the one before. */
export function Versions({ automationId, stamp }: { automationId: string; stamp: string }) {
  const versions = useResource(`versions:${automationId}:${stamp}`, () =>
    call(planVersions, { params: { id: automationId } }),
  );
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <ErrorNote error={versions.error} />
      {versions.loading && <Loading what="versions" />}
      <ul className="versions">
        {versions.data?.versions.map((v) => (
          <li key={v.flow_version_id}>
            <p>
              <strong>Version {v.version}</strong>
              {v.live && <span className="badge accent">live</span>} by {madeBy(v)},{' '}
              <When at={v.created_at} />
            </p>
            <p className="small">{v.ask}</p>
            {v.changes ? <Changes diff={v.changes} /> : <p className="muted small">The first version.</p>}
            <JsonValue value={v.plan_json} label={`Plan of version ${v.version}`} />
          </li>
        ))}
      </ul>
      {versions.data?.truncated && <p className="muted small">Showing the latest 50 versions.</p>}
    </section>
  );
}
