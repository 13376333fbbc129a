import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CallContext } from '../../src/capabilities/capability.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { type Actor, SCOPES } from '../../src/domains/workspace/actor.ts';
import { importFixture } from '../../src/domains/import/import.ts';
import { dropPgSchema } from '../../src/storage/db.ts';
import { openServices, type ServiceOptions, type Services } from '../../src/services.ts';
import { PG_URL, type TestDatabase } from './databases.ts';
import { testFixture } from './fixture.ts';
import { connect, type Harness, type ToolCaller } from './harness.ts';
import { ok } from './results.ts';

export type Json = Record<string, unknown>;

/** A stand-in for an outside connector call (an engine's `connectorCalls` entry). */
export type ConnectorCall = (input: Json, ctx: CallContext) => Promise<Json>;

/** The issue the stand-in GitHub connector answers `github.get_issue` with. */
export const STAND_IN_ISSUE = {
  number: 7,
  title: 'Flaky',
  body: '',
  state: 'open',
  url: 'https://example.test/7',
  labels: [],
};

export interface NodeInfo {
  node_id: string;
  status: string;
  attempt: number;
  error?: string;
}

export interface RunInfo {
  run_id: string;
  status: string;
  dry_run: boolean;
  cause: string;
  error?: string;
  queued_at?: string;
  started_at?: string;
  finished_at?: string;
  nodes: NodeInfo[];
  output?: Json;
}

export interface Published {
  automation_id: string;
  session_id: string;
  flow_version_id: string;
}

export interface PublishOptions {
  trigger?: Json;
  write_approval?: 'required' | 'automatic';
  scope?: 'personal' | 'workspace';
  notify?: 'off' | 'problems' | 'everyRun';
  cooldown_s?: number;
  enabled?: boolean;
}

// ── plan builders ───────────────────────────────────────────────────────────────────────────

export const lit = (value: unknown) => ({ kind: 'literal', value });
export const ref = (node: string, path: string) => ({ kind: 'ref', node, path });
export const trig = (path: string) => ({ kind: 'trigger', path });

export const WEEKLY = {
  kind: 'schedule',
  frequency: 'weekly',
  weekday: 3,
  hour: 4,
  minute: 0,
  timezone: 'UTC',
};

export function plan(name: string, nodes: Json[], edges: Json[] = []): Json {
  return { planVersion: 1, name, description: `${name}.`, nodes, edges };
}

export const chain = (...ids: string[]) => ids.slice(1).map((to, i) => ({ from: ids[i], to }));

export const capability = (id: string, key: string, input: Json, extra: Json = {}) => ({
  id,
  kind: 'capability',
  capability: key,
  input,
  ...extra,
});

export const transform = (id: string, op: string, input: Json, args?: Json) => ({
  id,
  kind: 'transform',
  op,
  input,
  ...(args ? { args } : {}),
});

export const approval = (id: string, extra: Json = {}) => ({
  id,
  kind: 'approval',
  message: lit(`Go ahead with ${id}?`),
  ...extra,
});

export const postMessage = (id: string, text: unknown) =>
  capability(id, 'conversations.post_message', { text: typeof text === 'string' ? lit(text) : text });

// ── running automations through the tools ───────────────────────────────────────────────────

/**
 * Helpers for publishing, running and inspecting automations. The harness and the engine are
 * read when a helper is called, so the factory can be made before a suite's `before` sets them.
 */
export function automationHelpers(harness: () => Harness, engine: () => Engine) {
  let counter = 0;
  const database = () => harness().services.deps.db;
  const ada = () => harness().actor('ada@acme.test');

  async function publish(caller: ToolCaller, planJson: Json, options: PublishOptions = {}) {
    const drafted = ok(
      await caller.call('draft_automation', {
        plan_json: planJson,
        ask: `Do ${String(planJson.name)}.`,
        ...(options.write_approval ? { write_approval: options.write_approval } : {}),
      }),
    );
    counter += 1;
    const published = ok(
      await caller.call('edit_automation', {
        action: 'publish',
        flow_version_id: drafted.flow_version_id,
        name: `${String(planJson.name)} ${counter}`,
        trigger: options.trigger ?? WEEKLY,
        ...(options.scope ? { scope: options.scope } : {}),
        ...(options.notify ? { notify: options.notify } : {}),
        ...(options.cooldown_s !== undefined ? { cooldown_s: options.cooldown_s } : {}),
        ...(options.enabled !== undefined ? { enabled: options.enabled } : {}),
      }),
    );
    return {
      automation_id: published.automation_id as string,
      session_id: published.session_id as string,
      flow_version_id: drafted.flow_version_id as string,
    } satisfies Published;
  }

  async function run(caller: ToolCaller, automation: Published, dryRun?: boolean): Promise<string> {
    const result = ok(
      await caller.call('edit_automation', {
        action: 'run',
        automation_id: automation.automation_id,
        ...(dryRun !== undefined ? { dry_run: dryRun } : {}),
      }),
    );
    assert.equal(result.action, 'run');
    assert.equal(typeof result.run_id, 'string');
    return result.run_id as string;
  }

  async function readRun(caller: ToolCaller, automation: Published, runId: string): Promise<RunInfo> {
    const read = ok(
      await caller.call('read_automation', { automation_id: automation.automation_id, run_id: runId }),
    );
    assert.ok(read.run, `run ${runId} is readable`);
    return read.run as RunInfo;
  }

  /** Runs a published automation now and returns the run as read_automation shows it. */
  async function runToEnd(caller: ToolCaller, automation: Published, dryRun?: boolean) {
    const runId = await run(caller, automation, dryRun);
    await engine().drain();
    return readRun(caller, automation, runId);
  }

  /** Pauses (false) or enables (true) an automation through edit_automation. */
  async function setEnabled(caller: ToolCaller, automation: Published, enabled: boolean) {
    return ok(
      await caller.call('edit_automation', {
        action: 'set_enabled',
        automation_id: automation.automation_id,
        enabled,
      }),
    );
  }

  const nodeOf = (r: RunInfo, id: string): NodeInfo => {
    const node = r.nodes.find((n) => n.node_id === id);
    assert.ok(node, `node ${id} in ${JSON.stringify(r.nodes)}`);
    return node;
  };

  const statuses = (r: RunInfo) => Object.fromEntries(r.nodes.map((n) => [n.node_id, n.status]));

  /** Every node's stored output, by node key. */
  async function outputs(runId: string): Promise<Record<string, Json>> {
    const rows = await database()
      .selectFrom('run_nodes')
      .select(['node_key', 'output_json'])
      .where('run_id', '=', runId)
      .execute();
    return Object.fromEntries(
      rows.map((r) => [r.node_key, r.output_json === null ? {} : (JSON.parse(r.output_json) as Json)]),
    );
  }

  /** The stored node rows of a run (every map item's body nodes included). */
  async function nodeRows(runId: string) {
    return database().selectFrom('run_nodes').selectAll().where('run_id', '=', runId).execute();
  }

  /** Moves every wait of a run (delays, approvals) and its job into the past. */
  async function makeDue(runId: string): Promise<void> {
    const past = Date.now() - 1;
    await database()
      .updateTable('run_nodes')
      .set({ wait_until: past })
      .where('run_id', '=', runId)
      .where('status', '=', 'waiting')
      .execute();
    await database().updateTable('jobs').set({ available_at: past }).where('run_id', '=', runId).execute();
  }

  async function runRow(runId: string) {
    return database().selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
  }

  async function jobRow(runId: string) {
    return database().selectFrom('jobs').selectAll().where('run_id', '=', runId).executeTakeFirst();
  }

  async function automationRow(id: string) {
    return database().selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  async function runsOf(automationId: string) {
    return database()
      .selectFrom('runs')
      .selectAll()
      .where('automation_id', '=', automationId)
      .orderBy('id')
      .execute();
  }

  async function sessionMessages(session: string, actor: Actor = ada()) {
    return (await harness().services.automations.session(actor, session)).messages;
  }

  async function pendingCard(session: string, actor: Actor = ada()) {
    const card = (await sessionMessages(session, actor))
      .map((m) => m.card)
      .find((c) => c?.type === 'approval' && c.status === 'pending');
    assert.ok(card, 'an approval card is waiting in the session');
    return card as { approval_id: string; run_id: string; node_id: string; message: string };
  }

  return {
    publish,
    run,
    readRun,
    runToEnd,
    setEnabled,
    nodeOf,
    statuses,
    outputs,
    nodeRows,
    makeDue,
    runRow,
    jobRow,
    automationRow,
    runsOf,
    sessionMessages,
    pendingCard,
  };
}

// ── one database, several processes ───────────────────────────────────────────────────────

/**
 * One database on a file (SQLite) or in its own schema (PostgreSQL) that several service
 * instances open, as `tandem serve`, `tandem mcp` and `tandem worker` do. `h` is a harness over
 * the first instance with the test fixture loaded; `open()` opens another instance.
 */
export async function sharedDatabase(db: TestDatabase) {
  const dir = db.name === 'sqlite' ? mkdtempSync(join(tmpdir(), 'tandem-shared-')) : undefined;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const opened: Services[] = [];
  const open = async (options: ServiceOptions = {}) => {
    const services =
      dir === undefined
        ? await openServices({ ...options, databaseUrl: PG_URL, pgSchema: schema, poolSize: 10 })
        : await openServices({ ...options, sqlitePath: join(dir, 'tandem.sqlite') });
    opened.push(services);
    return services;
  };
  const services = await open();
  const { workspaces: ids } = await importFixture(services.deps, testFixture);
  const callers: ToolCaller[] = [];
  const actor = (email: string): Actor => {
    for (const ws of Object.values(ids)) {
      const personId = ws.users[email];
      if (personId) return { personId, workspaceId: ws.id, scopes: new Set(SCOPES) };
    }
    throw new Error(`no test person ${email}`);
  };
  const h: Harness = {
    services,
    ids,
    actor,
    async as(email) {
      const caller = await connect(services, actor(email));
      callers.push(caller);
      return caller;
    },
    async close() {
      await Promise.all(callers.map((c) => c.close()));
      for (const s of opened.reverse()) await s.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      else await dropPgSchema(PG_URL, schema);
    },
  };
  return { h, open };
}
