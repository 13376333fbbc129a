/**
 * The soak's workspace: people, the documents they type into, a page per agent, the logs the
 * automations write to, and the automations (one run on demand per agent, the schedules, one on a
 * signed connector event). Made through the domain services before any server starts.
 */
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices } from '../src/services.ts';

export const HOOK_SECRET = 'soak-hook-secret-0123456789';
export const HOOK_EVENT = 'message';

export interface SoakShape {
  people: number;
  documents: number;
  agents: number;
  schedules: number;
}

export interface Seeded {
  workspaceId: string;
  /** Per person: e-mail and personal access token. */
  people: { email: string; token: string }[];
  /** Per document: its id and the people (indexes) who type in it, each in a block of their own. */
  documents: { id: string; typists: number[] }[];
  /** Per agent (acting as the person with the same index): its page and its on-demand automation. */
  agents: { pageId: string; automationId: string }[];
  logs: { runs: string; schedules: string; hooks: string };
  /** Per schedule: its automation. */
  schedules: string[];
  hookAutomation: string;
}

export const email = (i: number) => `p${String(i).padStart(2, '0')}@soak.test`;
/** The paragraph a person types in starts with this. */
export const blockLabel = (i: number) => `p${String(i).padStart(2, '0')}:`;

/** A weekly schedule days away: within the soak these automations run only when an agent asks. */
const MANUAL = {
  kind: 'schedule',
  frequency: 'weekly',
  weekday: ((new Date().getUTCDay() + 3) % 7) + 1,
  hour: 4,
  minute: 0,
  timezone: 'UTC',
};
const lit = (value: unknown) => ({ kind: 'literal', value });
const ref = (node: string, path: string) => ({ kind: 'ref', node, path });
const trig = (path: string) => ({ kind: 'trigger', path });

/** A plan that appends one line, made from `at` by `template`, to the log document. */
function logPlan(name: string, log: string, at: Record<string, unknown>, template: string, now = false) {
  const nodes: Record<string, unknown>[] = [];
  if (now) nodes.push({ id: 'now', kind: 'transform', op: 'now', input: {} });
  nodes.push(
    { id: 'line', kind: 'transform', op: 'template', input: { at }, args: { template } },
    {
      id: 'log',
      kind: 'capability',
      capability: 'documents.append_to_document',
      input: { document_id: lit(log), content_markdown: ref('line', 'text') },
    },
  );
  const ids = nodes.map((n) => n.id as string);
  const edges = ids.slice(1).map((to, i) => ({ from: ids[i], to }));
  // The same line again as a sink of its own, so the run's output says what it logged.
  nodes.push({ id: 'echo', kind: 'transform', op: 'template', input: { at }, args: { template } });
  if (now) edges.push({ from: 'now', to: 'echo' });
  return { planVersion: 1, name, description: `${name}.`, nodes, edges };
}

export async function seed(
  databaseUrl: string,
  secretKey: Buffer,
  shape: SoakShape,
  scheduleMinute: number,
): Promise<Seeded> {
  const services = await openServices({ databaseUrl, secretKey });
  try {
    const people = Array.from({ length: shape.people }, (_, i) => i);
    const perDoc = Math.ceil(shape.people / shape.documents);
    const typists = (d: number) => people.slice(d * perDoc, (d + 1) * perDoc);
    const editors = Object.fromEntries(people.slice(1).map((i) => [email(i), 'editor' as const]));
    const { workspaces } = await importFixture(services.deps, {
      workspaces: [
        {
          name: 'Soak',
          users: people.map((i) => ({ email: email(i), name: `Person ${i}`, admin: i === 0 })),
          connectors: [{ provider: 'slack', connected: true, personal: false, secret: HOOK_SECRET }],
          artifacts: [
            ...Array.from({ length: shape.documents }, (_, d) => ({
              key: `doc${d}`,
              type: 'document' as const,
              title: `Soak ${d}`,
              owner: email(0),
              scope: 'org' as const,
              roles: editors,
              markdown: `# Soak ${d}\n\n${typists(d)
                .map((i) => blockLabel(i))
                .join('\n\n')}\n`,
            })),
            ...Array.from({ length: shape.agents }, (_, a) => ({
              key: `page${a}`,
              type: 'html_app' as const,
              title: `Page ${a}`,
              owner: email(a),
              scope: 'user' as const,
              html: `<p>page ${a}</p>`,
            })),
            ...(['runs', 'schedules', 'hooks'] as const).map((k) => ({
              key: `log-${k}`,
              type: 'document' as const,
              title: `Log of ${k}`,
              owner: email(0),
              scope: 'org' as const,
              roles: editors,
              markdown: `# Log of ${k}\n`,
            })),
          ],
        },
      ],
    });
    const ws = Object.values(workspaces)[0]!;
    const actor = (i: number): Actor => ({
      personId: ws.users[email(i)]!,
      workspaceId: ws.id,
      scopes: new Set(SCOPES),
    });
    const logs = {
      runs: ws.artifacts['log-runs']!,
      schedules: ws.artifacts['log-schedules']!,
      hooks: ws.artifacts['log-hooks']!,
    };
    const publish = async (who: number, name: string, plan: unknown, trigger: unknown) => {
      const draft = (await services.automations.draft(actor(who), {
        ask: `${name}.`,
        write_approval: 'automatic',
        plan_json: plan,
      })) as { kind: string; flow_version_id?: string; errors?: unknown };
      if (draft.kind !== 'plan')
        throw new Error(`the ${name} plan was refused: ${JSON.stringify(draft.errors)}`);
      const made = (await services.automations.publish(actor(who), {
        flow_version_id: draft.flow_version_id,
        name,
        trigger,
        notify: 'off',
      })) as { automation_id: string };
      return made.automation_id;
    };

    const tokens = await Promise.all(
      people.map(async (i) => {
        const a = actor(i);
        return (await services.tokens.create(a.personId, a.workspaceId, [...SCOPES], 86_400_000)).token;
      }),
    );
    const agents: Seeded['agents'] = [];
    for (let a = 0; a < shape.agents; a++) {
      const tag = `r${String(a).padStart(2, '0')}`;
      agents.push({
        pageId: ws.artifacts[`page${a}`]!,
        automationId: await publish(
          a,
          `Run ${a}`,
          logPlan(`Run ${a}`, logs.runs, ref('now', 'iso'), `${tag} {{at}}`, true),
          MANUAL,
        ),
      });
    }
    const schedules: string[] = [];
    for (let k = 0; k < shape.schedules; k++) {
      schedules.push(
        await publish(
          0,
          `Schedule ${k}`,
          logPlan(`Schedule ${k}`, logs.schedules, trig('scheduled_for'), `s${k} {{at}}`),
          { kind: 'schedule', frequency: 'hourly', minute: scheduleMinute, timezone: 'UTC' },
        ),
      );
    }
    const hookAutomation = await publish(0, 'Hook', logPlan('Hook', logs.hooks, trig('data.n'), 'h{{at}}'), {
      kind: 'connector_event',
      provider: 'slack',
      event: HOOK_EVENT,
    });
    return {
      workspaceId: ws.id,
      people: people.map((i) => ({ email: email(i), token: tokens[i]! })),
      documents: Array.from({ length: shape.documents }, (_, d) => ({
        id: ws.artifacts[`doc${d}`]!,
        typists: typists(d),
      })),
      agents,
      logs,
      schedules,
      hookAutomation,
    };
  } finally {
    await services.close();
  }
}
