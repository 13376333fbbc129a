import type { Selectable } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { AutomationTable, FlowVersionTable } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import type { Db } from '../workspace/access.ts';
import type { Actor } from '../workspace/actor.ts';
import { personName } from '../workspace/artifacts.ts';
import { allPlugins, loadCatalogue, type Catalogue, type ConnectorPlugin } from './catalogue.ts';
import { describeCapabilities, type DescribeArgs } from './describe.ts';
import type { PathPart } from './issues.ts';
import type { FlowPlan, PlanNode, ScheduleFields, Trigger, WriteApproval } from './plan.ts';
import { summarise, type PlanSummary } from './steps.ts';
import { checkTrigger, nextFireAt } from './triggers.ts';
import { startEventRuns, type IncomingEvent } from './events.ts';
import { iso, latestRuns, queueRun, runDetail, wake } from './runs.ts';
import { postToSession, updateCard } from './session.ts';
import { subflowTargets, validatePlan, type PlanError, type SubflowTarget } from './validate.ts';

export interface AutomationOptions {
  /** Base of the `url` fields (the web app). */
  publicUrl?: string;
  /** Whether an OpenAI-compatible model is configured for agent nodes. */
  modelConfigured?: boolean;
  plugins?: ConnectorPlugin[];
}

type AutomationRow = Selectable<AutomationTable>;
type VersionRow = Selectable<FlowVersionTable>;

export type Scope = 'personal' | 'workspace';
export type Notify = 'off' | 'problems' | 'everyRun';
export type DegradedReason =
  | 'connector_disconnected'
  | 'personal_connector_unavailable'
  | 'subflow_unavailable'
  | 'model_unavailable'
  | 'repeated_failures';

/** Stored with each version: what the plan does, plus whether it writes through its subflows. */
export interface StoredSummary extends PlanSummary {
  writes_transitively: boolean;
}

export const REPEATED_FAILURES = 5;
const MAX_COOLDOWN_S = 30 * 24 * 3600;

const automationNotFound = () => new DomainError('not_found', 'Automation not found');
const draftNotFound = () =>
  new DomainError('not_found', 'Draft not found: pass a flow_version_id returned by draft_automation');

function failedPlan(errors: PlanError[]): DomainError {
  const lines = errors.map((e, i) => {
    const at = e.path.join('.');
    return `${i + 1}. [${e.rule}] ${at && !e.message.startsWith(at) ? `${at}: ` : ''}${e.message}`;
  });
  return new DomainError(
    'invalid_plan',
    `the plan has ${errors.length} problem${errors.length === 1 ? '' : 's'}; nothing was stored.\n${lines.join('\n')}`,
    { data: { kind: 'failed', errors } },
  );
}

function optionalString(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} must be at most ${max} characters`);
  return value;
}

function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${field} must be true or false`);
  return value;
}

/** A short line saying when an automation runs. */
export function triggerText(trigger: Trigger): string {
  const t = trigger as ScheduleFields | Exclude<Trigger, { kind: 'schedule' }>;
  if (t.kind === 'schedule') {
    const time = `${String(t.hour ?? 0).padStart(2, '0')}:${String(t.minute ?? 0).padStart(2, '0')}`;
    const day = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][
      t.weekday ?? 1
    ];
    const when =
      t.frequency === 'hourly'
        ? `hourly at minute ${t.minute ?? 0}`
        : t.frequency === 'daily'
          ? `daily at ${time}`
          : t.frequency === 'weekdays'
            ? `on weekdays at ${time}`
            : `every ${day} at ${time}`;
    return `${when} (${t.timezone})`;
  }
  if (t.kind === 'connector_event') return `on ${t.provider} ${t.event}`;
  const actions = t.actions?.length ? ` (${t.actions.join(', ')})` : '';
  return `on GitHub ${t.event}${actions} in ${t.repo}`;
}

function* planNodes(nodes: PlanNode[], base: PathPart[]): Generator<[PlanNode, PathPart[]]> {
  for (const [i, n] of nodes.entries()) {
    const path = [...base, 'nodes', i];
    yield [n, path];
    if (n.kind === 'map') yield* planNodes(n.body.nodes, [...path, 'body']);
  }
}

export function automationsService(deps: Deps, options: AutomationOptions = {}) {
  const { db } = deps;
  const plugins = allPlugins(options);
  const publicUrl = (options.publicUrl ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const urlOf = (id: string) => `${publicUrl}/automations/${id}`;

  const catalogueFor = (actor: Pick<Actor, 'workspaceId' | 'personId'>, on: Db = db) =>
    loadCatalogue(on, actor.workspaceId, actor.personId, plugins);

  async function isAdmin(on: Db, actor: Actor): Promise<boolean> {
    const row = await on
      .selectFrom('people')
      .select('admin')
      .where('id', '=', actor.personId)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    return row?.admin === 1;
  }

  /**
   * An automation the actor can open: every workspace automation, their own personal ones, and,
   * for admins, everyone's (read-only unless they created it).
   */
  async function automationFor(on: Db, actor: Actor, id: unknown) {
    if (typeof id !== 'string' || id === '') throw automationNotFound();
    const row = await on
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!row) throw automationNotFound();
    const admin = await isAdmin(on, actor);
    if (row.scope === 'personal' && row.created_by !== actor.personId && !admin) throw automationNotFound();
    const canControl = row.scope === 'personal' ? row.created_by === actor.personId : admin;
    return { row, admin, canControl };
  }

  function requireControl(access: { row: AutomationRow; canControl: boolean }): void {
    if (access.canControl) return;
    throw new DomainError(
      'forbidden',
      access.row.scope === 'personal'
        ? 'Only its creator can change this automation'
        : 'Only workspace admins can change this automation',
    );
  }

  /** Live versions of the automations a plan's subflow nodes name, as the actor can open them. */
  async function subflowContext(on: Db, actor: Actor, raw: unknown): Promise<Map<string, SubflowTarget>> {
    const ids = subflowTargets(raw);
    const out = new Map<string, SubflowTarget>();
    for (const id of ids) {
      const access = await automationFor(on, actor, id).catch(() => undefined);
      if (!access) continue;
      const live = await on
        .selectFrom('flow_versions')
        .select('summary_json')
        .where('id', '=', access.row.live_version_id)
        .executeTakeFirst();
      if (!live) continue;
      const summary = JSON.parse(live.summary_json) as StoredSummary;
      out.set(id, { writes: summary.writes_transitively });
    }
    return out;
  }

  function storedSummary(
    plan: FlowPlan,
    catalogue: Catalogue,
    subflows: Map<string, SubflowTarget>,
  ): StoredSummary {
    const summary = summarise(plan, catalogue);
    return {
      ...summary,
      writes_transitively:
        summary.writes.length > 0 || summary.subflows.some((id) => subflows.get(id)?.writes),
    };
  }

  async function validateFor(
    on: Db,
    actor: Actor,
    raw: unknown,
    writeApproval: WriteApproval,
    automationId: string | undefined,
  ) {
    const catalogue = await catalogueFor(actor, on);
    const subflows = await subflowContext(on, actor, raw);
    const result = validatePlan(raw, { catalogue, writeApproval, subflows, automationId });
    return { result, catalogue, subflows };
  }

  /** Why an automation cannot run as published right now, if it cannot. */
  async function degradedReason(
    row: AutomationRow,
    summary: StoredSummary,
    trigger: Trigger,
  ): Promise<DegradedReason | undefined> {
    const acting = { workspaceId: row.workspace_id, personId: row.acting_id };
    const catalogue = await catalogueFor(acting);
    const providers = catalogue.eventProviders();
    for (const ns of summary.namespaces) {
      const state = catalogue.namespaces.get(ns);
      if (state?.connected) continue;
      const personal = catalogue.connectors.some((c) => c.namespace === ns && c.personal);
      return summary.personal_connectors.length > 0 && personal
        ? 'personal_connector_unavailable'
        : 'connector_disconnected';
    }
    if (trigger.kind === 'connector_event' && !providers.get(trigger.provider)?.connected) {
      return 'connector_disconnected';
    }
    if (trigger.kind === 'github_event' && !providers.get('github')?.connected)
      return 'connector_disconnected';
    if (summary.subflows.length) {
      const actor: Actor = { ...acting, scopes: new Set() };
      const available = await subflowContext(db, actor, {
        nodes: summary.subflows.map((id) => ({ kind: 'subflow', automation_id: id })),
      });
      if (summary.subflows.some((id) => !available.has(id))) return 'subflow_unavailable';
    }
    if (summary.uses_model && !options.modelConfigured) return 'model_unavailable';
    if (row.consecutive_failures >= REPEATED_FAILURES) return 'repeated_failures';
    return undefined;
  }

  async function liveVersion(on: Db, row: AutomationRow): Promise<VersionRow> {
    const version = await on
      .selectFrom('flow_versions')
      .selectAll()
      .where('id', '=', row.live_version_id)
      .executeTakeFirstOrThrow();
    return version;
  }

  const queuedListeners = new Set<() => void>();
  const queued = () => {
    for (const listener of queuedListeners) listener();
  };

  return {
    plugins,
    catalogueFor,

    /** Starts the automations of a workspace that an event matches; returns the runs queued. */
    async receiveEvent(workspaceId: string, event: IncomingEvent): Promise<string[]> {
      const started = await startEventRuns(db, workspaceId, event);
      if (started.length) queued();
      return started;
    },

    /** The shared secret of a workspace's connection to a provider, for verifying its webhooks. */
    async connectorSecret(workspaceId: string, provider: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('connectors')
        .select('secret')
        .where('workspace_id', '=', workspaceId)
        .where('provider', '=', provider)
        .where('connected', '=', 1)
        .where('personal', '=', 0)
        .where('secret', 'is not', null)
        .executeTakeFirst();
      return row?.secret ?? undefined;
    },

    /** Called after a transaction that queued or woke runs committed (the engine listens). */
    onQueued(listener: () => void): () => void {
      queuedListeners.add(listener);
      return () => queuedListeners.delete(listener);
    },

    async run(actor: Actor, args: { automation_id?: unknown; dry_run?: unknown }) {
      if (args.automation_id === undefined) throw invalid('automation_id is required for run');
      const dryRun = optionalBoolean(args.dry_run, 'dry_run') ?? false;
      const outcome = await db.transaction().execute(async (trx) => {
        const access = await automationFor(trx, actor, args.automation_id);
        requireControl(access);
        const row = access.row;
        if (!dryRun && row.enabled !== 1)
          throw new DomainError('paused', 'Enable the automation before running it');
        const runId = await queueRun(trx, {
          automation: row,
          versionId: row.live_version_id,
          cause: dryRun ? 'dry_run' : 'manual',
          dryRun,
          payload: { manual: true, by: await personName(trx, actor.personId) },
          requestedBy: actor.personId,
        });
        return { row, runId };
      });
      queued();
      return {
        action: 'run' as const,
        automation_id: outcome.row.id,
        dry_run: dryRun,
        run_id: outcome.runId,
        session_id: outcome.row.session_id,
        url: urlOf(outcome.row.id),
      };
    },

    /** A person's decision on an approval step; only the step's approvers may decide it. */
    async decideApproval(actor: Actor, approvalId: unknown, input: { decision?: unknown; note?: unknown }) {
      if (input.decision !== 'approve' && input.decision !== 'reject') {
        throw invalid('decision must be approve or reject');
      }
      const note = optionalString(input.note, 'note', 2000);
      const notFoundApproval = () => new DomainError('not_found', 'Approval not found');
      if (typeof approvalId !== 'string' || approvalId === '') throw notFoundApproval();
      const result = await db.transaction().execute(async (trx) => {
        const approval = await trx
          .selectFrom('approvals')
          .selectAll()
          .where('id', '=', approvalId)
          .where('workspace_id', '=', actor.workspaceId)
          .executeTakeFirst();
        if (!approval) throw notFoundApproval();
        const access = await automationFor(trx, actor, approval.automation_id).catch(() => undefined);
        const participant = await trx
          .selectFrom('conversation_participants')
          .select('person_id')
          .where('conversation_id', '=', approval.session_id)
          .where('person_id', '=', actor.personId)
          .executeTakeFirst();
        const automation = await trx
          .selectFrom('automations')
          .selectAll()
          .where('id', '=', approval.automation_id)
          .executeTakeFirstOrThrow();
        const approvers = JSON.parse(approval.approvers_json) as 'creator' | 'admins' | string[];
        const me = await trx
          .selectFrom('people')
          .select(['email', 'name', 'admin'])
          .where('id', '=', actor.personId)
          .executeTakeFirstOrThrow();
        // A person named as an approver may decide it even without access to the automation itself.
        const named =
          Array.isArray(approvers) &&
          approvers.some((email) => email.toLowerCase() === me.email.toLowerCase());
        if (!access && !participant && !named) throw notFoundApproval();
        const allowed =
          approvers === 'creator'
            ? automation.created_by === actor.personId
            : approvers === 'admins'
              ? me.admin === 1
              : approvers.some((email) => email.toLowerCase() === me.email.toLowerCase());
        if (!allowed) {
          const who =
            approvers === 'creator'
              ? 'the automation’s creator'
              : approvers === 'admins'
                ? 'a workspace admin'
                : approvers.join(' or ');
          throw new DomainError('forbidden', `Only ${who} can decide this approval`);
        }
        if (approval.status !== 'pending') {
          throw new DomainError(
            'already_decided',
            `This approval is already ${approval.status.replace('_', ' ')}`,
          );
        }
        const now = Date.now();
        const status = input.decision === 'approve' ? 'approved' : 'rejected';
        const moved = await trx
          .updateTable('approvals')
          .set({ status, decided_by: actor.personId, decided_at: now, note: note ?? null })
          .where('id', '=', approval.id)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) !== 1) {
          throw new DomainError('already_decided', 'This approval was decided a moment ago');
        }
        await updateCard(trx, approval.message_id, {
          status,
          decided_by: me.name,
          ...(note ? { note } : {}),
        });
        const at = new Date(now).toISOString();
        await trx
          .updateTable('run_nodes')
          .set(
            status === 'approved'
              ? {
                  status: 'succeeded',
                  finished_at: now,
                  wait_until: null,
                  output_json: JSON.stringify({
                    approved: true,
                    by: me.email,
                    at,
                    ...(note ? { note } : {}),
                  }),
                }
              : {
                  status: 'failed',
                  finished_at: now,
                  wait_until: null,
                  error: `rejected by ${me.name}${note ? `: ${note}` : ''}`,
                },
          )
          .where('run_id', '=', approval.run_id)
          .where('node_key', '=', approval.node_key)
          .execute();
        await postToSession(
          trx,
          approval.session_id,
          actor.personId,
          `${me.name} ${status} “${approval.message}”${note ? `: ${note}` : ''}.`,
        );
        await wake(trx, approval.run_id);
        return {
          approval_id: approval.id,
          run_id: approval.run_id,
          status,
          decided_by: me.email,
          decided_at: at,
        };
      });
      queued();
      return { ...result, ...(note ? { note } : {}) };
    },

    /**
     * An automation's session: where its runs, approvals and notices land. Readable by its
     * participants and by everyone who can open the automation.
     */
    async session(actor: Actor, sessionId: unknown) {
      if (typeof sessionId !== 'string' || sessionId === '')
        throw new DomainError('not_found', 'Session not found');
      const conversation = await db
        .selectFrom('conversations')
        .selectAll()
        .where('id', '=', sessionId)
        .where('workspace_id', '=', actor.workspaceId)
        .where('kind', '=', 'session')
        .executeTakeFirst();
      if (!conversation) throw new DomainError('not_found', 'Session not found');
      const owner = await db
        .selectFrom('automations')
        .select('id')
        .where('session_id', '=', sessionId)
        .executeTakeFirst();
      const access = owner ? await automationFor(db, actor, owner.id).catch(() => undefined) : undefined;
      if (!access) {
        const participant = await db
          .selectFrom('conversation_participants')
          .select('person_id')
          .where('conversation_id', '=', sessionId)
          .where('person_id', '=', actor.personId)
          .executeTakeFirst();
        if (!participant) throw new DomainError('not_found', 'Session not found');
      }
      const messages = await db
        .selectFrom('messages')
        .leftJoin('people', 'people.id', 'messages.author_id')
        .select([
          'messages.id',
          'messages.kind',
          'messages.body',
          'messages.card_json',
          'messages.created_at',
          'people.name as author',
        ])
        .where('messages.conversation_id', '=', sessionId)
        .orderBy('messages.created_at', 'desc')
        .orderBy('messages.id', 'desc')
        .limit(200)
        .execute();
      return {
        session_id: sessionId,
        title: conversation.title,
        ...(owner ? { automation_id: owner.id } : {}),
        messages: messages.reverse().map((m) => ({
          message_id: m.id,
          kind: m.kind,
          ...(m.author ? { author: m.author } : {}),
          body: m.body,
          ...(m.card_json ? { card: JSON.parse(m.card_json) as Record<string, unknown> } : {}),
          created_at: iso(m.created_at) as string,
        })),
      };
    },

    async describe(actor: Actor, args: DescribeArgs) {
      return describeCapabilities(await catalogueFor(actor), args);
    },

    async draft(
      actor: Actor,
      args: { plan_json?: unknown; ask?: unknown; write_approval?: unknown; automation_id?: unknown },
    ) {
      if (typeof args.ask !== 'string' || args.ask.trim() === '') {
        throw invalid('ask is required: the request the plan implements, in one sentence');
      }
      if (args.ask.length > 1000) throw invalid('ask must be at most 1000 characters: one sentence');
      const ask = args.ask.trim();
      const writeApproval: WriteApproval = (args.write_approval ?? 'required') as WriteApproval;
      if (writeApproval !== 'required' && writeApproval !== 'automatic') {
        throw invalid('write_approval must be required or automatic');
      }
      const automationId = args.automation_id;
      if (automationId !== undefined) requireControl(await automationFor(db, actor, automationId));
      const { result, catalogue, subflows } = await validateFor(
        db,
        actor,
        args.plan_json,
        writeApproval,
        automationId as string | undefined,
      );
      if (!result.ok) throw failedPlan(result.errors);
      const summary = storedSummary(result.plan, catalogue, subflows);
      const stored = await db.transaction().execute(async (trx) => {
        let flowId: string;
        if (automationId !== undefined) {
          const access = await automationFor(trx, actor, automationId);
          requireControl(access);
          flowId = access.row.flow_id;
          if (deps.dialect === 'postgres') {
            await trx.selectFrom('flows').select('id').where('id', '=', flowId).forUpdate().execute();
          }
        } else {
          flowId = newId('flw');
          await trx
            .insertInto('flows')
            .values({
              id: flowId,
              workspace_id: actor.workspaceId,
              created_by: actor.personId,
              automation_id: null,
              created_at: Date.now(),
            })
            .execute();
        }
        const last = await trx
          .selectFrom('flow_versions')
          .select((eb) => eb.fn.max('version').as('version'))
          .where('flow_id', '=', flowId)
          .executeTakeFirst();
        const version = Number(last?.version ?? 0) + 1;
        const id = newId('fv');
        await trx
          .insertInto('flow_versions')
          .values({
            id,
            flow_id: flowId,
            workspace_id: actor.workspaceId,
            version,
            created_by: actor.personId,
            ask,
            write_approval: writeApproval,
            created_at: Date.now(),
            summary_json: JSON.stringify(summary),
            plan_json: JSON.stringify(result.plan),
          })
          .execute();
        return { id, flowId, version };
      });
      return {
        kind: 'plan' as const,
        flow_version_id: stored.id,
        flow_id: stored.flowId,
        version: stored.version,
        ...(automationId !== undefined ? { automation_id: automationId as string } : {}),
        ask,
        steps: summary.steps,
        writes: summary.writes,
        namespaces: summary.namespaces,
        connectors: summary.connectors,
        personal_connectors: summary.personal_connectors,
        write_approval: writeApproval,
      };
    },

    async publish(
      actor: Actor,
      args: {
        automation_id?: unknown;
        flow_version_id?: unknown;
        trigger?: unknown;
        name?: unknown;
        description?: unknown;
        tags?: unknown;
        scope?: unknown;
        notify?: unknown;
        cooldown_s?: unknown;
        enabled?: unknown;
      },
    ) {
      if (typeof args.flow_version_id !== 'string' || args.flow_version_id === '') {
        throw invalid(
          'flow_version_id is required for publish: the draft from draft_automation, or the live version to change only its trigger',
        );
      }
      const name = optionalString(args.name, 'name', 200);
      if (name !== undefined && name.trim() === '') throw invalid('name must not be empty');
      const description = optionalString(args.description, 'description', 2000);
      let tags: string[] | undefined;
      if (args.tags !== undefined) {
        if (
          !Array.isArray(args.tags) ||
          args.tags.some((t) => typeof t !== 'string' || t.trim() === '' || t.length > 50)
        ) {
          throw invalid('tags must be a list of non-empty strings of at most 50 characters');
        }
        if (args.tags.length > 20) throw invalid('tags may list at most 20 tags');
        tags = [...new Set((args.tags as string[]).map((t) => t.trim()))];
      }
      if (args.scope !== undefined && args.scope !== 'personal' && args.scope !== 'workspace') {
        throw invalid('scope must be personal or workspace');
      }
      if (args.notify !== undefined && !['off', 'problems', 'everyRun'].includes(args.notify as string)) {
        throw invalid('notify must be off, problems or everyRun');
      }
      if (
        args.cooldown_s !== undefined &&
        (typeof args.cooldown_s !== 'number' ||
          !Number.isInteger(args.cooldown_s) ||
          args.cooldown_s < 0 ||
          args.cooldown_s > MAX_COOLDOWN_S)
      ) {
        throw invalid(`cooldown_s must be a whole number of seconds from 0 to ${MAX_COOLDOWN_S}`);
      }
      const enabledArg = optionalBoolean(args.enabled, 'enabled');
      const automationId = args.automation_id;

      const outcome = await db.transaction().execute(async (trx) => {
        const admin = await isAdmin(trx, actor);
        const access = automationId !== undefined ? await automationFor(trx, actor, automationId) : undefined;
        if (access) requireControl(access);
        const version = await trx
          .selectFrom('flow_versions')
          .selectAll()
          .where('id', '=', args.flow_version_id as string)
          .where('workspace_id', '=', actor.workspaceId)
          .executeTakeFirst();
        if (!version) throw draftNotFound();
        const flow = await trx
          .selectFrom('flows')
          .selectAll()
          .where('id', '=', version.flow_id)
          .$call((q) => (deps.dialect === 'postgres' ? q.forUpdate() : q))
          .executeTakeFirstOrThrow();
        if (access) {
          if (flow.id !== access.row.flow_id) {
            // A draft the caller cannot open is not found, whichever automation it is published into.
            const visible =
              flow.automation_id === null
                ? flow.created_by === actor.personId
                : (await automationFor(trx, actor, flow.automation_id).catch(() => undefined)) !== undefined;
            if (!visible) throw draftNotFound();
            throw new DomainError('forbidden', 'That draft is not a version of this automation');
          }
        } else {
          if (flow.created_by !== actor.personId && flow.automation_id === null) throw draftNotFound();
          if (flow.automation_id !== null) {
            const owner = await automationFor(trx, actor, flow.automation_id).catch(() => undefined);
            if (!owner) throw draftNotFound();
            throw invalid(
              `That draft is a version of automation ${flow.automation_id}; pass automation_id ${flow.automation_id} to publish it there`,
            );
          }
          if (name === undefined) throw invalid('name is required to publish a new automation');
        }

        const scope: Scope = access
          ? (access.row.scope as Scope)
          : ((args.scope as Scope | undefined) ?? 'personal');
        if (access && args.scope !== undefined && args.scope !== access.row.scope) {
          throw invalid(
            `scope stays ${access.row.scope} once published; publish the draft as a new automation to make it ${String(args.scope)}`,
          );
        }
        if (scope === 'workspace' && !admin) {
          throw new DomainError('forbidden', 'Only workspace admins can publish workspace automations');
        }
        // A personal automation acts as its creator; a workspace one as the admin publishing it.
        const actingId = scope === 'personal' ? (access?.row.created_by ?? actor.personId) : actor.personId;
        const acting: Actor = { ...actor, personId: actingId };

        const plan = JSON.parse(version.plan_json) as FlowPlan;
        const { result, catalogue } = await validateFor(
          trx,
          acting,
          plan,
          version.write_approval as WriteApproval,
          access?.row.id,
        );
        const { trigger, personalProvider } = checkTrigger(args.trigger, catalogue);
        const errors: PlanError[] = result.ok ? [] : [...result.errors];
        if (scope === 'workspace') {
          for (const [n, path] of planNodes(plan.nodes, [])) {
            const keys = n.kind === 'capability' ? [n.capability] : n.kind === 'agent' ? (n.tools ?? []) : [];
            for (const key of keys) {
              const ns = catalogue.namespaceOf(key);
              if (!ns?.personalOnly) continue;
              errors.push({
                rule: 'scope/personal-connector',
                path,
                node_id: n.id,
                message: `${key} uses your personal ${ns.plugin.name} connection, which a workspace automation cannot use; publish it as personal, or connect ${ns.plugin.name} for the whole workspace`,
              });
            }
          }
          if (personalProvider) {
            errors.push({
              rule: 'scope/personal-connector',
              path: [],
              message: `the trigger listens on your personal ${personalProvider} connection, which a workspace automation cannot use; publish it as personal, or connect ${personalProvider} for the whole workspace`,
            });
          }
        }
        if (errors.length) throw failedPlan(errors);

        const now = Date.now();
        const notify =
          (args.notify as Notify | undefined) ?? (access?.row.notify as Notify | undefined) ?? 'problems';
        const cooldown = (args.cooldown_s as number | undefined) ?? access?.row.cooldown_s ?? 0;
        const enabled = enabledArg ?? (access ? access.row.enabled === 1 : true);
        const next = enabled ? nextFireAt(trigger, new Date(now)) : null;
        const actorName = await personName(trx, actor.personId);
        if (access) {
          const row = access.row;
          await trx
            .updateTable('automations')
            .set({
              name: name ?? row.name,
              description: description ?? row.description,
              tags_json: tags ? JSON.stringify(tags) : row.tags_json,
              acting_id: actingId,
              live_version_id: version.id,
              trigger_kind: trigger.kind,
              trigger_json: JSON.stringify(trigger),
              notify,
              cooldown_s: cooldown,
              enabled: enabled ? 1 : 0,
              next_fire_at: next?.getTime() ?? null,
              updated_at: now,
            })
            .where('id', '=', row.id)
            .execute();
          const sameVersion = row.live_version_id === version.id;
          await postToSession(
            trx,
            row.session_id,
            actor.personId,
            sameVersion
              ? `${actorName} changed the trigger: it runs ${triggerText(trigger)}.`
              : `${actorName} published version ${version.version}; it runs ${triggerText(trigger)}.`,
          );
          return {
            id: row.id,
            name: name ?? row.name,
            version: version.version,
            enabled,
            sessionId: row.session_id,
            next,
          };
        }
        const id = newId('aut');
        const sessionId = newId('cnv');
        await trx
          .insertInto('conversations')
          .values({
            id: sessionId,
            workspace_id: actor.workspaceId,
            title: name as string,
            kind: 'session',
            archived: 0,
            created_at: now,
          })
          .execute();
        const participants = new Set([actor.personId]);
        if (scope === 'workspace') {
          const admins = await trx
            .selectFrom('people')
            .select('id')
            .where('workspace_id', '=', actor.workspaceId)
            .where('admin', '=', 1)
            .execute();
          for (const a of admins) participants.add(a.id);
        }
        await trx
          .insertInto('conversation_participants')
          .values([...participants].map((p) => ({ conversation_id: sessionId, person_id: p })))
          .execute();
        await trx
          .insertInto('automations')
          .values({
            id,
            workspace_id: actor.workspaceId,
            flow_id: flow.id,
            name: name as string,
            description: description ?? plan.description,
            tags_json: JSON.stringify(tags ?? []),
            scope,
            created_by: actor.personId,
            acting_id: actingId,
            live_version_id: version.id,
            trigger_kind: trigger.kind,
            trigger_json: JSON.stringify(trigger),
            notify,
            cooldown_s: cooldown,
            enabled: enabled ? 1 : 0,
            session_id: sessionId,
            next_fire_at: next?.getTime() ?? null,
            last_fired_at: null,
            consecutive_failures: 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await trx.updateTable('flows').set({ automation_id: id }).where('id', '=', flow.id).execute();
        await postToSession(
          trx,
          sessionId,
          actor.personId,
          `${actorName} published “${name as string}” (version ${version.version}); it runs ${triggerText(trigger)}${enabled ? '' : ', once enabled'}. Its runs, approvals and notices land here.`,
        );
        return { id, name: name as string, version: version.version, enabled, sessionId, next };
      });
      return {
        action: 'publish' as const,
        automation_id: outcome.id,
        name: outcome.name,
        version: outcome.version,
        enabled: outcome.enabled,
        session_id: outcome.sessionId,
        url: urlOf(outcome.id),
        ...(outcome.next ? { next_fire_at: outcome.next.toISOString() } : {}),
      };
    },

    async setEnabled(actor: Actor, args: { automation_id?: unknown; enabled?: unknown }) {
      if (args.automation_id === undefined) throw invalid('automation_id is required for set_enabled');
      if (typeof args.enabled !== 'boolean')
        throw invalid('enabled is required for set_enabled: true or false');
      const enabled = args.enabled;
      const outcome = await db.transaction().execute(async (trx) => {
        const access = await automationFor(trx, actor, args.automation_id);
        requireControl(access);
        const row = access.row;
        const trigger = JSON.parse(row.trigger_json) as Trigger;
        const wasEnabled = row.enabled === 1;
        // Enabling again keeps a still-valid next fire time; pausing clears it.
        const next = enabled
          ? wasEnabled && row.next_fire_at !== null
            ? new Date(row.next_fire_at)
            : nextFireAt(trigger, new Date())
          : null;
        if (wasEnabled !== enabled || (next?.getTime() ?? null) !== row.next_fire_at) {
          await trx
            .updateTable('automations')
            .set({ enabled: enabled ? 1 : 0, next_fire_at: next?.getTime() ?? null, updated_at: Date.now() })
            .where('id', '=', row.id)
            .execute();
        }
        if (enabled && !wasEnabled) {
          // Runs held by the pause (queued, or stopped before a write) go on.
          const held = await trx
            .selectFrom('runs')
            .select('id')
            .where('automation_id', '=', row.id)
            .where('status', 'in', ['queued', 'running', 'waiting'])
            .execute();
          for (const r of held) await wake(trx, r.id);
        }
        if (wasEnabled !== enabled) {
          const actorName = await personName(trx, actor.personId);
          await postToSession(
            trx,
            row.session_id,
            actor.personId,
            `${actorName} ${enabled ? 'enabled' : 'paused'} this automation.`,
          );
        }
        return { row, next };
      });
      if (enabled) queued();
      return {
        action: 'set_enabled' as const,
        automation_id: outcome.row.id,
        name: outcome.row.name,
        enabled,
        ...(outcome.next ? { next_fire_at: outcome.next.toISOString() } : {}),
        session_id: outcome.row.session_id,
        url: urlOf(outcome.row.id),
      };
    },

    async list(actor: Actor, args: { limit?: unknown }) {
      let limit = 50;
      if (args.limit !== undefined) {
        if (typeof args.limit !== 'number' || !Number.isFinite(args.limit))
          throw invalid('limit must be a number from 1 to 200');
        limit = Math.min(200, Math.max(1, Math.floor(args.limit)));
      }
      const admin = await isAdmin(db, actor);
      let query = db
        .selectFrom('automations')
        .innerJoin('flow_versions', 'flow_versions.id', 'automations.live_version_id')
        .selectAll('automations')
        .select(['flow_versions.version as live_version', 'flow_versions.summary_json'])
        .where('automations.workspace_id', '=', actor.workspaceId);
      if (!admin) {
        query = query.where((eb) =>
          eb.or([
            eb('automations.scope', '=', 'workspace'),
            eb('automations.created_by', '=', actor.personId),
          ]),
        );
      }
      const rows = await query
        .orderBy('automations.created_at', 'desc')
        .orderBy('automations.id', 'desc')
        .limit(limit + 1)
        .execute();
      const shown = rows.slice(0, limit);
      const automations = [];
      for (const row of shown) {
        const summary = JSON.parse(row.summary_json) as StoredSummary;
        const trigger = JSON.parse(row.trigger_json) as Trigger;
        const degraded = await degradedReason(row, summary, trigger);
        automations.push({
          automation_id: row.id,
          name: row.name,
          enabled: row.enabled === 1,
          ...(degraded ? { degraded_reason: degraded } : {}),
          trigger,
          scope: row.scope as Scope,
          can_control: row.scope === 'personal' ? row.created_by === actor.personId : admin,
          version: row.live_version,
          step_count: summary.steps.length,
          namespaces: summary.namespaces,
          session_id: row.session_id,
          ...(row.next_fire_at !== null ? { next_fire_at: iso(row.next_fire_at) } : {}),
          ...(row.last_fired_at !== null ? { last_fired_at: iso(row.last_fired_at) } : {}),
          consecutive_failures: row.consecutive_failures,
          created_at: iso(row.created_at) as string,
          url: urlOf(row.id),
        });
      }
      return { automations, truncated: rows.length > limit };
    },

    async read(
      actor: Actor,
      args: { automation_id?: unknown; include_plan?: unknown; include_runs?: unknown; run_id?: unknown },
    ) {
      const includePlan = optionalBoolean(args.include_plan, 'include_plan') ?? false;
      const includeRuns = optionalBoolean(args.include_runs, 'include_runs') ?? false;
      if (args.run_id !== undefined && typeof args.run_id !== 'string')
        throw invalid('run_id must be a string');
      const access = await automationFor(db, actor, args.automation_id);
      const row = access.row;
      const version = await liveVersion(db, row);
      const summary = JSON.parse(version.summary_json) as StoredSummary;
      const trigger = JSON.parse(row.trigger_json) as Trigger;
      const degraded = await degradedReason(row, summary, trigger);
      return {
        automation_id: row.id,
        name: row.name,
        description: row.description,
        tags: JSON.parse(row.tags_json) as string[],
        ask: version.ask,
        steps: summary.steps,
        writes: summary.writes,
        namespaces: summary.namespaces,
        connectors: summary.connectors,
        personal_connectors: summary.personal_connectors,
        trigger,
        scope: row.scope as Scope,
        enabled: row.enabled === 1,
        ...(degraded ? { degraded_reason: degraded } : {}),
        can_control: access.canControl,
        created_by: await personName(db, row.created_by),
        version: version.version,
        flow_version_id: version.id,
        write_approval: version.write_approval as WriteApproval,
        notify: row.notify as Notify,
        cooldown_s: row.cooldown_s,
        session_id: row.session_id,
        url: urlOf(row.id),
        ...(row.next_fire_at !== null ? { next_fire_at: iso(row.next_fire_at) } : {}),
        ...(row.last_fired_at !== null ? { last_fired_at: iso(row.last_fired_at) } : {}),
        consecutive_failures: row.consecutive_failures,
        created_at: iso(row.created_at) as string,
        ...(includePlan ? { plan_json: JSON.parse(version.plan_json) as FlowPlan } : {}),
        ...(includeRuns ? await latestRuns(db, row.id) : {}),
        ...(args.run_id !== undefined ? { run: await runDetail(db, row.id, args.run_id as string) } : {}),
      };
    },
  };
}

export type AutomationsService = ReturnType<typeof automationsService>;
