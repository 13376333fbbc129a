import type { Selectable, Transaction } from 'kysely';
import { DomainError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Capability } from '../domains/automations/catalogue.ts';
import {
  DEFAULT_APPROVAL_TIMEOUT_S,
  MAX_MAP_ITEMS,
  type Binding,
  type Edge,
  type FlowPlan,
  type PlanNode,
} from '../domains/automations/plan.ts';
import { nextFireAt } from '../domains/automations/triggers.ts';
import { origin, type IncomingEvent } from '../domains/automations/events.ts';
import { queueRun, TERMINAL_RUN, wake } from '../domains/automations/runs.ts';
import { postToSession, updateCard } from '../domains/automations/session.ts';
import { topologicalOrder } from '../domains/automations/validate.ts';
import type { DomainEvent } from '../domains/deps.ts';
import { SCOPES, type Actor } from '../domains/workspace/actor.ts';
import type { Db } from '../domains/workspace/access.ts';
import type { AutomationTable, Database, RunNodeTable, RunTable } from '../storage/schema.ts';
import type { Services } from '../services.ts';
import { atMostOnce, BUILTIN_IMPLS, type CallContext } from './capabilities.ts';
import { callModel, type ModelConfig } from './model.ts';
import { compare, StepError, transform, valueAt } from './values.ts';

type RunRow = Selectable<RunTable>;
type NodeRow = Selectable<RunNodeTable>;
type AutomationRow = Selectable<AutomationTable>;

export interface EngineOptions {
  /** Hosts the http capabilities may reach. */
  httpAllow?: readonly string[];
  model?: ModelConfig | undefined;
  /** How long a worker holds a run it advances before another may take it over. */
  leaseMs?: number;
  /** How often idle workers look for due work. */
  pollMs?: number;
  /** Parallel runs per worker. */
  concurrency?: number;
  /** Outside connector calls, by capability key (tests and plugins provide them). */
  connectorCalls?: Record<
    string,
    (input: Record<string, unknown>, ctx: CallContext) => Promise<Record<string, unknown>>
  >;
}

const DONE_NODE = new Set(['succeeded', 'failed', 'skipped', 'simulated']);

/** A node to work on now, found by walking the plan against the stored node states. */
type Task =
  | { type: 'skip'; key: string; node: PlanNode }
  | { type: 'start'; key: string; node: PlanNode; scope: Scope; row: NodeRow | undefined }
  | { type: 'check'; key: string; node: PlanNode; scope: Scope; row: NodeRow }
  | {
      type: 'map-finish';
      key: string;
      node: Extract<PlanNode, { kind: 'map' }>;
      results: unknown[];
      failed?: string;
    };

interface Scope {
  /** Outputs of finished nodes this one may refer to, by node id. */
  outputs: Map<string, unknown>;
  trigger: unknown;
}

interface Walk {
  tasks: Task[];
  /** The earliest time a waiting node needs looking at again. */
  wakeAt: number | null;
  failed: { nodeId: string; error: string } | undefined;
  done: boolean;
  /** Ready writes held back because the automation is paused. */
  held: number;
}

function parse<T>(json: string | null): T | undefined {
  return json === null ? undefined : (JSON.parse(json) as T);
}

function isWrite(node: PlanNode, capability: (key: string) => Capability | undefined): boolean {
  if (node.kind === 'capability') return capability(node.capability)?.kind === 'write';
  return node.kind === 'notify' || node.kind === 'subflow';
}

export function createEngine(services: Services, options: EngineOptions = {}) {
  const { db } = services.deps;
  const workerId = newId('wrk');
  const leaseMs = options.leaseMs ?? 60_000;
  const pollMs = options.pollMs ?? 500;
  const concurrency = options.concurrency ?? 4;
  const capabilities = new Map(
    services.automations.plugins.flatMap((p) => p.capabilities).map((c) => [c.key, c]),
  );
  const capabilityOf = (key: string) => capabilities.get(key);

  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  const active = new Set<Promise<void>>();
  const abort = new AbortController();

  // ── reading a run's state ─────────────────────────────────────────────────────────────────

  function walk(plan: FlowPlan, rows: Map<string, NodeRow>, run: RunRow, paused: boolean, now: number): Walk {
    const result: Walk = { tasks: [], wakeAt: null, failed: undefined, done: true, held: 0 };
    const soonest = (at: number) => {
      result.wakeAt = result.wakeAt === null ? at : Math.min(result.wakeAt, at);
    };

    const live = (edge: Edge, prefix: string, byId: Map<string, PlanNode>): boolean => {
      const row = rows.get(prefix + edge.from);
      if (!row) return false;
      if (row.status === 'succeeded' || row.status === 'simulated') {
        if (byId.get(edge.from)?.kind === 'branch') {
          return (parse<{ value: boolean }>(row.output_json)?.value ?? false) === edge.when;
        }
        return true;
      }
      // A delay a dry run passed over is skipped but lets its successors run.
      return row.status === 'skipped' && row.output_json !== null;
    };

    const graph = (nodes: PlanNode[], edges: Edge[], prefix: string, scope: Scope): boolean => {
      const byId = new Map(nodes.map((n) => [n.id, n]));
      let complete = true;
      for (const id of topologicalOrder(
        nodes.map((n) => n.id),
        edges,
      )) {
        const node = byId.get(id) as PlanNode;
        const key = prefix + id;
        const row = rows.get(key);
        const status = row?.status ?? 'pending';
        if (status === 'failed') {
          result.failed ??= { nodeId: key, error: row?.error ?? 'failed' };
          continue;
        }
        if (DONE_NODE.has(status)) {
          if (status !== 'skipped' || row?.output_json)
            scope.outputs.set(id, parse(row?.output_json ?? null));
          continue;
        }
        complete = false;
        const incoming = edges.filter((e) => e.to === id);
        if (incoming.some((e) => !DONE_NODE.has(rows.get(prefix + e.from)?.status ?? 'pending'))) continue;
        if (incoming.length > 0 && !incoming.some((e) => live(e, prefix, byId))) {
          result.tasks.push({ type: 'skip', key, node });
          continue;
        }
        const nodeScope: Scope = { outputs: new Map(scope.outputs), trigger: scope.trigger };
        if (node.kind === 'map' && status === 'running' && row) {
          const items = parse<{ items: unknown[] }>(row.output_json)?.items ?? [];
          const limit = node.concurrency ?? 1;
          let activeItems = 0;
          let allDone = true;
          const results: unknown[] = [];
          let failed: string | undefined;
          for (const [index, item] of items.entries()) {
            const itemPrefix = `${key}[${index}].`;
            const started = node.body.nodes.some((n) => rows.has(itemPrefix + n.id));
            if (!started && activeItems >= limit) {
              allDone = false;
              continue;
            }
            const itemScope: Scope = { outputs: new Map(nodeScope.outputs), trigger: { item, index } };
            const itemFailedBefore = result.failed;
            const itemDone = graph(node.body.nodes, node.body.edges ?? [], itemPrefix, itemScope);
            if (result.failed && result.failed !== itemFailedBefore) {
              failed ??= `item ${index}: ${result.failed.error}`;
              result.failed = itemFailedBefore;
            }
            if (!itemDone) {
              allDone = false;
              activeItems += 1;
            }
            results.push(itemScope.outputs.get(node.result) ?? null);
          }
          if (failed) result.tasks.push({ type: 'map-finish', key, node, results, failed });
          else if (allDone) result.tasks.push({ type: 'map-finish', key, node, results });
          continue;
        }
        if (status === 'waiting' && row) {
          if (row.wait_until !== null && row.wait_until > now) soonest(row.wait_until);
          result.tasks.push({ type: 'check', key, node, scope: nodeScope, row });
          continue;
        }
        if (row?.wait_until && row.wait_until > now) {
          soonest(row.wait_until);
          continue;
        }
        if (paused && !run.dry_run && isWrite(node, capabilityOf)) {
          result.held += 1;
          continue;
        }
        result.tasks.push({ type: 'start', key, node, scope: nodeScope, row });
      }
      return complete;
    };

    result.done = graph(plan.nodes, plan.edges ?? [], '', {
      outputs: new Map(),
      trigger: parse(run.trigger_json),
    });
    return result;
  }

  function resolve(binding: Binding, scope: Scope): unknown {
    if (binding.kind === 'literal') return binding.value;
    if (binding.kind === 'trigger') return valueAt(scope.trigger, binding.path);
    return valueAt(scope.outputs.get(binding.node), binding.path);
  }

  function resolveInputs(input: Record<string, Binding> | undefined, scope: Scope): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, b] of Object.entries(input ?? {})) {
      const value = resolve(b, scope);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }

  // ── storing node states ───────────────────────────────────────────────────────────────────

  async function setNode(
    on: Db,
    runId: string,
    key: string,
    nodeId: string,
    patch: Partial<Omit<NodeRow, 'run_id' | 'node_key' | 'node_id'>>,
  ): Promise<void> {
    const base = {
      status: 'pending',
      attempt: 0,
      error: null,
      wait_until: null,
      started_at: null,
      finished_at: null,
      output_json: null,
    };
    await on
      .insertInto('run_nodes')
      .values({ run_id: runId, node_key: key, node_id: nodeId, ...base, ...patch })
      .onConflict((oc) => oc.columns(['run_id', 'node_key']).doUpdateSet(patch))
      .execute();
  }

  const finish = (
    on: Db,
    run: RunRow,
    key: string,
    node: PlanNode,
    status: string,
    output?: unknown,
    error?: string,
  ) =>
    setNode(on, run.id, key, node.id, {
      status,
      finished_at: Date.now(),
      wait_until: null,
      error: error ?? null,
      output_json: output === undefined ? null : JSON.stringify(output),
    });

  // ── doing one node's work ─────────────────────────────────────────────────────────────────

  interface RunContext {
    run: RunRow;
    automation: AutomationRow;
    actor: Actor;
  }

  const postSession = (on: Db, ctx: RunContext, body: string, card?: Record<string, unknown>) =>
    postToSession(on, ctx.automation.session_id, null, body, card);

  async function notifyPerson(on: Db, ctx: RunContext, personId: string, body: string): Promise<string> {
    const id = newId('ntf');
    await on
      .insertInto('notifications')
      .values({
        id,
        workspace_id: ctx.run.workspace_id,
        person_id: personId,
        kind: 'automation',
        actor_id: null,
        artifact_id: null,
        thread_id: null,
        body,
        read: 0,
        created_at: Date.now(),
      })
      .execute();
    return id;
  }

  async function effectOf(key: string) {
    return db.selectFrom('run_effects').selectAll().where('key', '=', key).executeTakeFirst();
  }

  async function callCapability(
    ctx: RunContext,
    key: string,
    node: Extract<PlanNode, { kind: 'capability' }>,
    input: Record<string, unknown>,
  ) {
    const cap = capabilityOf(node.capability);
    if (!cap) throw new StepError(`${node.capability} is no longer a capability`);
    const catalogue = await services.automations.catalogueFor(ctx.actor);
    if (!catalogue.namespaceOf(node.capability)?.connected) {
      throw new StepError(
        `${node.capability} needs the ${node.capability.split('.')[0]} connector, which is not connected for the person this automation acts as`,
      );
    }
    const parsed = cap.input.safeParse(input);
    if (!parsed.success) {
      throw new StepError(
        `${node.capability} input: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'} ${i.message}`).join('; ')}`,
      );
    }
    if (ctx.run.dry_run && cap.kind === 'write') {
      return {
        status: 'simulated' as const,
        output: { simulated: true, would_call: node.capability, with: parsed.data },
      };
    }
    const effectKey = `${ctx.run.id}:${key}`;
    if (cap.kind === 'write') {
      const effect = await effectOf(effectKey);
      if (effect?.state === 'done')
        return { status: 'succeeded' as const, output: parse(effect.result_json) };
      if (effect?.state === 'started') {
        throw new StepError(
          `outcome unknown: the call to ${node.capability} was interrupted; check the other side before running this again`,
          { retryable: false },
        );
      }
    }
    const within = async (trx: Transaction<Database>, result: unknown) => {
      await trx
        .insertInto('run_effects')
        .values({
          key: effectKey,
          run_id: ctx.run.id,
          state: 'done',
          created_at: Date.now(),
          result_json: JSON.stringify(result),
        })
        .execute();
    };
    const callContext: CallContext = {
      services,
      actor: ctx.actor,
      sessionId: ctx.automation.session_id,
      within,
      httpAllow: options.httpAllow ?? [],
      signal: abort.signal,
    };
    const impl = BUILTIN_IMPLS[node.capability] ?? options.connectorCalls?.[node.capability];
    if (!impl)
      throw new StepError(
        `${node.capability} cannot be called: its connector has no API endpoint configured here`,
      );
    const once = cap.kind === 'write' && atMostOnce(node.capability);
    if (once) {
      await db
        .insertInto('run_effects')
        .values({
          key: effectKey,
          run_id: ctx.run.id,
          state: 'started',
          created_at: Date.now(),
          result_json: null,
        })
        .execute();
    }
    const output = await origin.run({ automationId: ctx.automation.id, depth: depthOf(ctx.run) + 1 }, () =>
      impl(parsed.data, callContext),
    );
    if (once) {
      await db
        .updateTable('run_effects')
        .set({ state: 'done', result_json: JSON.stringify(output) })
        .where('key', '=', effectKey)
        .execute();
    }
    return { status: 'succeeded' as const, output };
  }

  function depthOf(run: RunRow): number {
    const payload = parse<{ depth?: number }>(run.trigger_json);
    return typeof payload?.depth === 'number' ? payload.depth : 0;
  }

  async function start(ctx: RunContext, task: Extract<Task, { type: 'start' }>): Promise<void> {
    const { run } = ctx;
    const { key, node, scope } = task;
    const attempt = (task.row?.attempt ?? 0) + 1;
    await setNode(db, run.id, key, node.id, {
      status: 'running',
      attempt,
      started_at: Date.now(),
      wait_until: null,
    });
    try {
      switch (node.kind) {
        case 'transform': {
          const output = transform(node, resolveInputs(node.input, scope), new Date());
          await finish(db, run, key, node, 'succeeded', output);
          return;
        }
        case 'branch': {
          const c = node.condition;
          const value = compare(
            c.op,
            resolve(c.left, scope),
            'right' in c ? resolve(c.right, scope) : undefined,
          );
          await finish(db, run, key, node, 'succeeded', { value });
          return;
        }
        case 'capability': {
          const result = await callCapability(ctx, key, node, resolveInputs(node.input, scope));
          await finish(db, run, key, node, result.status, result.output);
          return;
        }
        case 'agent': {
          const output = await callModel(options.model, {
            instructions: String(resolve(node.instructions, scope) ?? ''),
            input: resolveInputs(node.input, scope),
            outputSchema: node.output_schema,
            tools: (node.tools ?? [])
              .map((k) => capabilityOf(k))
              .filter((c): c is Capability => c !== undefined),
            // A tool call is a read capability call like any other: connected, checked, as the creator.
            callTool: async (capability, input) =>
              (
                await callCapability(
                  ctx,
                  key,
                  { kind: 'capability', id: node.id, capability: capability.key },
                  input,
                )
              ).output as Record<string, unknown>,
            signal: abort.signal,
          });
          await finish(db, run, key, node, 'succeeded', output);
          return;
        }
        case 'notify': {
          const message = String(resolve(node.message, scope) ?? '');
          if (run.dry_run) {
            await finish(db, run, key, node, 'simulated', {
              simulated: true,
              would_notify: node.to ?? 'session',
              message,
            });
            return;
          }
          const effectKey = `${run.id}:${key}`;
          const effect = await effectOf(effectKey);
          if (effect?.state === 'done') {
            await finish(db, run, key, node, 'succeeded', parse(effect.result_json));
            return;
          }
          await db.transaction().execute(async (trx) => {
            const messageId =
              node.to === 'creator'
                ? await notifyPerson(
                    trx,
                    ctx,
                    ctx.automation.created_by,
                    `${ctx.automation.name}: ${message}`,
                  )
                : await postSession(trx, ctx, message);
            const output = { message_id: messageId };
            await trx
              .insertInto('run_effects')
              .values({
                key: effectKey,
                run_id: run.id,
                state: 'done',
                created_at: Date.now(),
                result_json: JSON.stringify(output),
              })
              .execute();
            await finish(trx, run, key, node, 'succeeded', output);
          });
          return;
        }
        case 'delay': {
          let until: number;
          if ('seconds' in node) until = Date.now() + node.seconds * 1000;
          else {
            const value = resolve(node.until, scope);
            until = typeof value === 'string' ? Date.parse(value) : Number.NaN;
            if (Number.isNaN(until))
              throw new StepError(`until must be an ISO-8601 instant (got ${JSON.stringify(value)})`);
          }
          if (run.dry_run) {
            await finish(db, run, key, node, 'skipped', {
              resumed_at: new Date().toISOString(),
              skipped_in_dry_run: true,
            });
            return;
          }
          await setNode(db, run.id, key, node.id, { status: 'waiting', wait_until: until });
          return;
        }
        case 'approval': {
          const message = String(resolve(node.message, scope) ?? '');
          if (run.dry_run) {
            await finish(db, run, key, node, 'simulated', {
              approved: true,
              by: 'dry run',
              at: new Date().toISOString(),
            });
            return;
          }
          const expires = Date.now() + (node.timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000;
          await db.transaction().execute(async (trx) => {
            const existing = await trx
              .selectFrom('approvals')
              .select('id')
              .where('run_id', '=', run.id)
              .where('node_key', '=', key)
              .executeTakeFirst();
            if (!existing) {
              const approvalId = newId('apr');
              const card = {
                type: 'approval',
                approval_id: approvalId,
                run_id: run.id,
                node_id: node.id,
                status: 'pending',
                message,
              };
              const messageId = await postSession(trx, ctx, `Approval needed: ${message}`, card);
              await trx
                .insertInto('approvals')
                .values({
                  id: approvalId,
                  workspace_id: run.workspace_id,
                  run_id: run.id,
                  node_key: key,
                  node_id: node.id,
                  automation_id: ctx.automation.id,
                  session_id: ctx.automation.session_id,
                  message_id: messageId,
                  message,
                  approvers_json: JSON.stringify(node.approvers ?? 'creator'),
                  status: 'pending',
                  decided_by: null,
                  decided_at: null,
                  note: null,
                  expires_at: expires,
                  created_at: Date.now(),
                })
                .execute();
              // Whoever may decide hears of it, wherever they are.
              const approvers = node.approvers ?? 'creator';
              let people: string[];
              if (approvers === 'creator') people = [ctx.automation.created_by];
              else {
                let q = trx.selectFrom('people').select('id').where('workspace_id', '=', run.workspace_id);
                q = approvers === 'admins' ? q.where('admin', '=', 1) : q.where('email', 'in', approvers);
                people = (await q.execute()).map((p) => p.id);
              }
              for (const personId of people) {
                await notifyPerson(
                  trx,
                  ctx,
                  personId,
                  `${ctx.automation.name} asks for approval: ${message} (approval ${approvalId}; decide with POST /api/approvals/${approvalId} or tandem approve ${approvalId})`,
                );
              }
            }
            await setNode(trx, run.id, key, node.id, { status: 'waiting', wait_until: expires });
          });
          return;
        }
        case 'subflow': {
          await db.transaction().execute(async (trx) => {
            const child = await trx
              .selectFrom('automations')
              .selectAll()
              .where('id', '=', node.automation_id)
              .where('workspace_id', '=', run.workspace_id)
              .executeTakeFirst();
            const existing = await trx
              .selectFrom('runs')
              .select('id')
              .where('parent_run_id', '=', run.id)
              .where('parent_node_key', '=', key)
              .executeTakeFirst();
            if (!child) throw new StepError(`automation ${node.automation_id} is not available as a subflow`);
            if (!existing) {
              await queueRun(trx, {
                automation: child,
                versionId: child.live_version_id,
                cause: 'subflow',
                dryRun: run.dry_run === 1,
                payload: resolveInputs(node.input, scope),
                parent: { runId: run.id, nodeKey: key },
              });
            }
            await setNode(trx, run.id, key, node.id, { status: 'waiting', wait_until: null });
          });
          return;
        }
        case 'map': {
          const items = resolve(node.items, scope);
          if (!Array.isArray(items))
            throw new StepError(`items must be an array (got ${items === null ? 'null' : typeof items})`);
          if (items.length > MAX_MAP_ITEMS)
            throw new StepError(`items has ${items.length} entries; a map takes at most ${MAX_MAP_ITEMS}`);
          await setNode(db, run.id, key, node.id, {
            status: 'running',
            output_json: JSON.stringify({ items }),
          });
          return;
        }
      }
    } catch (error) {
      const message =
        error instanceof StepError || error instanceof DomainError
          ? error.message
          : `unexpected error: ${(error as Error).message}`;
      if (!(error instanceof StepError) && !(error instanceof DomainError))
        console.error(`run ${run.id} node ${key} failed`, error);
      const retry = node.kind === 'capability' ? node.retry : undefined;
      const outcomeUnknown = message.startsWith('outcome unknown');
      if (retry && attempt < retry.max_attempts && !outcomeUnknown) {
        const backoff = (retry.backoff_s ?? 1) * 1000 * 2 ** (attempt - 1);
        await setNode(db, run.id, key, node.id, {
          status: 'pending',
          error: message,
          wait_until: Date.now() + backoff,
        });
        return;
      }
      await finish(db, run, key, node, 'failed', undefined, message);
    }
  }

  async function check(ctx: RunContext, task: Extract<Task, { type: 'check' }>): Promise<void> {
    const { run } = ctx;
    const { key, node, row } = task;
    const now = Date.now();
    if (node.kind === 'delay') {
      if (row.wait_until !== null && row.wait_until <= now)
        await finish(db, run, key, node, 'succeeded', { resumed_at: new Date(now).toISOString() });
      return;
    }
    if (node.kind === 'subflow') {
      const child = await db
        .selectFrom('runs')
        .selectAll()
        .where('parent_run_id', '=', run.id)
        .where('parent_node_key', '=', key)
        .executeTakeFirst();
      if (!child || !TERMINAL_RUN.has(child.status)) return;
      if (child.status === 'succeeded')
        await finish(db, run, key, node, 'succeeded', parse(child.output_json) ?? {});
      else
        await finish(
          db,
          run,
          key,
          node,
          'failed',
          undefined,
          `subflow run ${child.id} ${child.status}${child.error ? `: ${child.error}` : ''}`,
        );
      return;
    }
    if (node.kind === 'approval') {
      if (row.wait_until === null || row.wait_until > now) return;
      await db.transaction().execute(async (trx) => {
        const approval = await trx
          .selectFrom('approvals')
          .selectAll()
          .where('run_id', '=', run.id)
          .where('node_key', '=', key)
          .executeTakeFirst();
        if (!approval || approval.status !== 'pending') return;
        await trx
          .updateTable('approvals')
          .set({ status: 'timed_out', decided_at: now })
          .where('id', '=', approval.id)
          .where('status', '=', 'pending')
          .execute();
        await updateCard(trx, approval.message_id, { status: 'timed_out' });
        if (node.on_timeout === 'skip') {
          await finish(trx, run, key, node, 'skipped');
          await postSession(
            trx,
            ctx,
            `No decision on “${approval.message}” in time; the steps it guards were skipped.`,
          );
        } else {
          await finish(trx, run, key, node, 'failed', undefined, 'the approval timed out');
        }
      });
    }
  }

  // ── advancing a run ───────────────────────────────────────────────────────────────────────

  async function finishRun(
    run: RunRow,
    automation: AutomationRow,
    status: 'succeeded' | 'failed' | 'cancelled',
    plan: FlowPlan,
    rows: Map<string, NodeRow>,
    error?: string,
  ) {
    const sinks = plan.nodes.filter((n) => !(plan.edges ?? []).some((e) => e.from === n.id));
    const output: Record<string, unknown> = {};
    for (const n of sinks) {
      const row = rows.get(n.id);
      if (row && (row.status === 'succeeded' || row.status === 'simulated'))
        output[n.id] = parse(row.output_json);
    }
    const now = Date.now();
    await db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('runs')
        .set({
          status,
          finished_at: now,
          updated_at: now,
          error: error ?? null,
          output_json: JSON.stringify(output),
        })
        .where('id', '=', run.id)
        .where('status', 'not in', [...TERMINAL_RUN])
        .executeTakeFirst();
      await trx.deleteFrom('jobs').where('run_id', '=', run.id).execute();
      if (Number(updated.numUpdatedRows) === 0) return;
      // Waiting steps of a run that ended no longer wait.
      await trx
        .updateTable('approvals')
        .set({ status: 'cancelled' })
        .where('run_id', '=', run.id)
        .where('status', '=', 'pending')
        .execute();
      if (run.parent_run_id) await wake(trx, run.parent_run_id);
      if (run.dry_run) return;
      await trx
        .updateTable('automations')
        .set({
          consecutive_failures:
            status === 'failed'
              ? automation.consecutive_failures + 1
              : status === 'succeeded'
                ? 0
                : automation.consecutive_failures,
        })
        .where('id', '=', automation.id)
        .execute();
      const ctx: RunContext = { run, automation, actor: actorFor(run) };
      if (status === 'failed')
        await postSession(trx, ctx, `Run ${run.id} failed: ${error ?? 'unknown error'}`);
      const tell =
        automation.notify === 'everyRun' || (automation.notify === 'problems' && status === 'failed');
      if (tell)
        await notifyPerson(
          trx,
          ctx,
          automation.created_by,
          `${automation.name}: run ${run.id} ${status}${error ? ` — ${error}` : ''}`,
        );
    });
  }

  function actorFor(run: RunRow): Actor {
    return { personId: run.acting_id, workspaceId: run.workspace_id, scopes: new Set(SCOPES) };
  }

  /** Works on one run until nothing more can happen now; returns when it waits or ends. */
  async function advance(runId: string): Promise<void> {
    for (let round = 0; round < 10_000; round++) {
      const run = await db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
      if (!run || TERMINAL_RUN.has(run.status)) {
        await db.deleteFrom('jobs').where('run_id', '=', runId).execute();
        return;
      }
      const automation = await db
        .selectFrom('automations')
        .selectAll()
        .where('id', '=', run.automation_id)
        .executeTakeFirstOrThrow();
      const version = await db
        .selectFrom('flow_versions')
        .select(['plan_json'])
        .where('id', '=', run.flow_version_id)
        .executeTakeFirstOrThrow();
      const plan = JSON.parse(version.plan_json) as FlowPlan;
      const paused = automation.enabled === 0 && run.dry_run === 0;
      if (paused && run.status === 'queued') {
        // Queued runs of a paused automation do not start; enabling it wakes them.
        await db.deleteFrom('jobs').where('run_id', '=', runId).execute();
        return;
      }
      if (run.status === 'queued') {
        await db
          .updateTable('runs')
          .set({ status: 'running', started_at: Date.now(), updated_at: Date.now() })
          .where('id', '=', runId)
          .where('status', '=', 'queued')
          .execute();
        run.status = 'running';
      }
      const rows = new Map(
        (await db.selectFrom('run_nodes').selectAll().where('run_id', '=', runId).execute()).map((r) => [
          r.node_key,
          r,
        ]),
      );
      const state = walk(plan, rows, run, paused, Date.now());
      const rejected = [...rows.values()].find(
        (r) => r.status === 'failed' && r.error?.startsWith('rejected'),
      );
      if (rejected) {
        await finishRun(run, automation, 'cancelled', plan, rows, rejected.error ?? 'rejected');
        return;
      }
      if (state.failed) {
        await finishRun(
          run,
          automation,
          'failed',
          plan,
          rows,
          `${state.failed.nodeId}: ${state.failed.error}`,
        );
        return;
      }
      if (state.done) {
        await finishRun(run, automation, 'succeeded', plan, rows);
        return;
      }
      const ctx: RunContext = { run, automation, actor: actorFor(run) };
      const work = state.tasks.filter(
        (t) =>
          t.type !== 'check' ||
          t.row.wait_until === null ||
          t.row.wait_until <= Date.now() ||
          t.node.kind === 'subflow',
      );
      const before = JSON.stringify([...rows.values()].map((r) => [r.node_key, r.status, r.attempt]));
      await Promise.all(
        work.map(async (task) => {
          if (task.type === 'skip') await finish(db, run, task.key, task.node, 'skipped');
          else if (task.type === 'start') await start(ctx, task);
          else if (task.type === 'check') await check(ctx, task);
          else if (task.failed) await finish(db, run, task.key, task.node, 'failed', undefined, task.failed);
          else await finish(db, run, task.key, task.node, 'succeeded', { results: task.results });
        }),
      );
      const after = await db
        .selectFrom('run_nodes')
        .select(['node_key', 'status', 'attempt'])
        .where('run_id', '=', runId)
        .execute();
      const progressed = JSON.stringify(after.map((r) => [r.node_key, r.status, r.attempt])) !== before;
      if (progressed) continue;
      // Nothing more to do now: wait for a time, a decision, a child run or the automation to be enabled.
      const waitingStatus = 'waiting';
      await db
        .updateTable('runs')
        .set({ status: waitingStatus, updated_at: Date.now() })
        .where('id', '=', runId)
        .where('status', 'in', ['running', 'waiting'])
        .execute();
      if (state.held > 0 && state.wakeAt === null) {
        await db.deleteFrom('jobs').where('run_id', '=', runId).execute();
        return;
      }
      const at = state.wakeAt ?? Date.now() + 3_600_000;
      await db
        .updateTable('jobs')
        .set({ available_at: at, locked_by: null, locked_until: null })
        .where('run_id', '=', runId)
        .execute();
      return;
    }
  }

  // ── claiming work ─────────────────────────────────────────────────────────────────────────

  async function claim(): Promise<string[]> {
    const now = Date.now();
    const due = await db
      .selectFrom('jobs')
      .select('run_id')
      .where('available_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('available_at')
      .limit(concurrency)
      .execute();
    const mine: string[] = [];
    for (const { run_id } of due) {
      const claimed = await db
        .updateTable('jobs')
        .set({ locked_by: workerId, locked_until: now + leaseMs })
        .where('run_id', '=', run_id)
        .where('available_at', '<=', now)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1) mine.push(run_id);
    }
    return mine;
  }

  async function work(runId: string): Promise<void> {
    const heartbeat = setInterval(
      () => {
        void db
          .updateTable('jobs')
          .set({ locked_until: Date.now() + leaseMs })
          .where('run_id', '=', runId)
          .where('locked_by', '=', workerId)
          .execute()
          .catch(() => {});
      },
      Math.max(250, Math.floor(leaseMs / 3)),
    );
    try {
      await advance(runId);
    } catch (error) {
      console.error(`run ${runId} could not advance`, error);
      await db
        .updateTable('jobs')
        .set({ available_at: Date.now() + 5_000, locked_by: null, locked_until: null })
        .where('run_id', '=', runId)
        .execute()
        .catch(() => {});
    } finally {
      clearInterval(heartbeat);
    }
  }

  // ── schedules and events ─────────────────────────────────────────────────────────────────

  async function fireSchedules(): Promise<number> {
    const now = Date.now();
    const due = await db
      .selectFrom('automations')
      .selectAll()
      .where('enabled', '=', 1)
      .where('trigger_kind', '=', 'schedule')
      .where('next_fire_at', '<=', now)
      .orderBy('next_fire_at')
      .limit(100)
      .execute();
    let fired = 0;
    for (const automation of due) {
      const trigger = JSON.parse(automation.trigger_json) as Parameters<typeof nextFireAt>[0];
      const scheduledFor = automation.next_fire_at as number;
      // After downtime every missed instant collapses into this one run; the next is after now.
      const next = nextFireAt(trigger, new Date(now));
      await db.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable('automations')
          .set({ next_fire_at: next?.getTime() ?? null, last_fired_at: now })
          .where('id', '=', automation.id)
          .where('enabled', '=', 1)
          .where('next_fire_at', '=', scheduledFor)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) !== 1) return;
        await queueRun(trx, {
          automation,
          versionId: automation.live_version_id,
          cause: 'schedule',
          dryRun: false,
          payload: {
            scheduled_for: new Date(scheduledFor).toISOString(),
            fired_at: new Date(now).toISOString(),
            timezone: trigger.kind === 'schedule' ? trigger.timezone : 'UTC',
          },
        });
        fired += 1;
      });
    }
    return fired;
  }

  const receiveEvent = (workspaceId: string, event: IncomingEvent) =>
    services.automations.receiveEvent(workspaceId, event);

  function onDomainEvent(event: DomainEvent): void {
    void receiveEvent(event.workspaceId, {
      provider: 'workspace',
      event: event.type,
      data: { ...event.data, actor_id: event.actorId },
    }).catch((error: unknown) => console.error('could not start automations for an event', error));
  }

  // ── the loop ──────────────────────────────────────────────────────────────────────────────

  let ticking = false;
  async function tick(): Promise<void> {
    if (ticking || stopped) return;
    ticking = true;
    try {
      await fireSchedules();
      while (!stopped && active.size < concurrency) {
        const claimed = await claim();
        if (claimed.length === 0) break;
        for (const runId of claimed) {
          const p = work(runId).finally(() => {
            active.delete(p);
            kick();
          });
          active.add(p);
        }
      }
    } catch (error) {
      if (!stopped) console.error('the run engine could not look for work', error);
    } finally {
      ticking = false;
    }
  }

  let kicked = false;
  function kick(): void {
    if (stopped || kicked) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      void tick();
    });
  }

  let unsubscribe: (() => void) | undefined;

  return {
    workerId,
    start() {
      if (!stopped) return;
      stopped = false;
      const offEvents = services.onEvent(onDomainEvent);
      const offQueued = services.automations.onQueued(kick);
      unsubscribe = () => {
        offEvents();
        offQueued();
      };
      timer = setInterval(() => void tick(), pollMs);
      kick();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      unsubscribe?.();
      abort.abort();
      await Promise.allSettled([...active]);
    },
    kick,
    advance,
    fireSchedules,
    receiveEvent,
    /** Runs everything due now, in this process, until nothing is left (tests and the CLI use it). */
    async drain(limitMs = 10_000): Promise<void> {
      const until = Date.now() + limitMs;
      while (Date.now() < until) {
        await fireSchedules();
        const claimed = await claim();
        if (claimed.length === 0 && active.size === 0) return;
        await Promise.all(claimed.map((id) => work(id)));
        if (claimed.length === 0) await Promise.allSettled([...active]);
      }
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;
