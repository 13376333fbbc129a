import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { subflowRefusal } from '../src/domains/automations/subflows.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type CallResult, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople, fixtureArtifact, personId, type People } from './support/people.ts';
import { ok } from './support/results.ts';

type Json = Record<string, unknown>;
interface PlanError {
  rule: string;
  path: (string | number)[];
  node_id?: string;
  message: string;
}

const lit = (value: unknown) => ({ kind: 'literal', value });
const trig = (path: string) => ({ kind: 'trigger', path });
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 2, hour: 6, minute: 0, timezone: 'UTC' };

const planOf = (name: string, nodes: Json[], edges: Json[] = []): Json => ({
  planVersion: 1,
  name,
  description: `${name}, built by the hardening tests.`,
  nodes,
  edges,
});
const reads = (name: string) =>
  planOf(name, [{ id: 'list', kind: 'capability', capability: 'documents.list_documents', input: {} }]);
const runs = (name: string, automationId: string) =>
  planOf(name, [{ id: 'sub', kind: 'subflow', automation_id: automationId }]);

/** The errors of a refused draft or publish, after checking it stored nothing and said so. */
function failed(r: CallResult): PlanError[] {
  assert.equal(r.isError, true, `expected a failed plan, got: ${r.text}`);
  assert.match(r.text, /^Tool failed: the plan has \d+ problems?; nothing was stored\./);
  assert.equal(r.structured?.kind, 'failed');
  return r.structured?.errors as PlanError[];
}

/** The one error of a rule, with its path, node id and a message matching `says`. */
function expectError(
  errors: PlanError[],
  rule: string,
  path: (string | number)[],
  says: RegExp,
  nodeId = 'sub',
) {
  const found = errors.filter((e) => e.rule === rule);
  assert.equal(found.length, 1, `one ${rule} error in ${JSON.stringify(errors)}`);
  assert.deepEqual(found[0]?.path, path);
  assert.equal(found[0]?.node_id, nodeId);
  assert.match(found[0]?.message ?? '', says);
}

/**
 * On Postgres, runs `work` while the messages table is locked, so a publish cannot post its session
 * notice (its last step before committing) until `waiters` sessions are blocked; then lets them
 * go. Two publishes thus both do their checks before either commits, unless one waits for the other.
 */
async function whileNoticesHeld<T>(h: Harness, waiters: number, work: () => Promise<T>): Promise<T> {
  if (h.services.deps.dialect !== 'postgres') return work();
  const trx = await h.services.deps.db.startTransaction().execute();
  let running: Promise<T> | undefined;
  try {
    await sql`lock table messages in exclusive mode`.execute(trx);
    running = work();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      await sql`select pg_stat_clear_snapshot()`.execute(trx);
      const { rows } = await sql<{ n: number }>`
        with recursive blocked(pid) as (
          select pid from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))
          union
          select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid))
        )
        select count(*)::int as n from blocked`.execute(trx);
      if ((rows[0]?.n ?? 0) >= waiters) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await trx.commit().execute();
  }
  return running;
}

for (const db of DATABASES) {
  describe(`subflow and approver hardening on ${db.name}`, () => {
    let h: Harness;
    let p: People;
    let counter = 0;

    before(async () => {
      h = await setup(db);
      p = await connectPeople(h);
    });
    after(async () => h.close());

    const draft = (caller: ToolCaller, plan: Json, extra: Json = {}) =>
      caller.call('draft_automation', { plan_json: plan, ask: `Do ${String(plan.name)}.`, ...extra });
    const publishDraft = (caller: ToolCaller, flowVersionId: unknown, extra: Json = {}) =>
      caller.call('edit_automation', {
        action: 'publish',
        flow_version_id: flowVersionId,
        trigger: WEEKLY,
        ...extra,
      });

    /** Drafts and publishes a new automation; returns its id. */
    async function create(caller: ToolCaller, plan: Json, extra: { draft?: Json; publish?: Json } = {}) {
      const drafted = ok(await draft(caller, plan, extra.draft));
      counter += 1;
      const published = ok(
        await publishDraft(caller, drafted.flow_version_id, {
          name: `${String(plan.name)} ${counter}`,
          ...extra.publish,
        }),
      );
      return published.automation_id as string;
    }

    const liveVersion = async (caller: ToolCaller, id: string) =>
      ok(await caller.call('read_automation', { automation_id: id })).version as number;
    const setAdmin = (email: string, admin: boolean) =>
      h.services.deps.db
        .updateTable('people')
        .set({ admin: admin ? 1 : 0 })
        .where('id', '=', personId(h, email))
        .execute();

    /** A workspace automation of Ada's that appends its trigger's text to her private plan. */
    async function adminAppender(): Promise<string> {
      return create(
        p.ada,
        planOf('Append to the private plan', [
          {
            id: 'append',
            kind: 'capability',
            capability: 'documents.append_to_document',
            input: { document_id: lit(fixtureArtifact(h, 'plan')), content_markdown: trig('text') },
          },
        ]),
        { draft: { write_approval: 'automatic' }, publish: { scope: 'workspace' } },
      );
    }

    describe('subflow cycles across automations', () => {
      it('refuses a draft whose subflow runs this automation back, naming the chain, and stores nothing', async () => {
        const a = await create(p.ada, reads('Reader A'));
        const b = await create(p.ada, runs('Runs A', a));
        const c = await create(p.ada, runs('Runs B', b));
        const versions = async () =>
          (await h.services.deps.db.selectFrom('flow_versions').select('id').execute()).length;
        const before = await versions();

        expectError(
          failed(await draft(p.ada, runs('A runs B', b), { automation_id: a })),
          'subflow/cycle',
          ['nodes', 0, 'automation_id'],
          new RegExp(`automation ${b} runs this automation again .*\\(${b} → this automation\\).*from ${b}`),
        );
        expectError(
          failed(await draft(p.ada, runs('A runs C', c), { automation_id: a })),
          'subflow/cycle',
          ['nodes', 0, 'automation_id'],
          new RegExp(`\\(${c} → ${b} → this automation\\)`),
        );
        assert.equal(await versions(), before);
        // Calling them from a new automation closes no cycle.
        ok(await draft(p.ada, runs('New caller of C', c)));
      });

      it('refuses publishing the version that closes a cycle with what was published since it was drafted', async () => {
        const a = await create(p.ada, reads('Reader A2'));
        const b = await create(p.ada, reads('Reader B2'));
        const aRunsB = ok(await draft(p.ada, runs('A2 runs B2', b), { automation_id: a }));
        const bRunsA = ok(await draft(p.ada, runs('B2 runs A2', a), { automation_id: b }));

        ok(await publishDraft(p.ada, aRunsB.flow_version_id, { automation_id: a }));
        expectError(
          failed(await publishDraft(p.ada, bRunsA.flow_version_id, { automation_id: b })),
          'subflow/cycle',
          ['nodes', 0, 'automation_id'],
          new RegExp(`automation ${a} runs this automation again .*\\(${a} → this automation\\)`),
        );
        assert.equal(await liveVersion(p.ada, b), 1);
      });

      it('lets only one of two concurrent publishes that together close a cycle succeed', async () => {
        const a = await create(p.ada, reads('Reader A3'));
        const b = await create(p.ada, reads('Reader B3'));
        const aRunsB = ok(await draft(p.ada, runs('A3 runs B3', b), { automation_id: a }));
        const bRunsA = ok(await draft(p.ada, runs('B3 runs A3', a), { automation_id: b }));

        const results = await whileNoticesHeld(h, 2, () =>
          Promise.all([
            publishDraft(p.ada, aRunsB.flow_version_id, { automation_id: a }),
            publishDraft(p.ada, bRunsA.flow_version_id, { automation_id: b }),
          ]),
        );
        const succeeded = results.filter((r) => !r.isError);
        assert.equal(succeeded.length, 1, results.map((r) => r.text).join('\n'));
        const refusal = results.find((r) => r.isError) as CallResult;
        assert.deepEqual(
          failed(refusal).map((e) => e.rule),
          ['subflow/cycle'],
        );
        assert.equal((await liveVersion(p.ada, a)) + (await liveVersion(p.ada, b)), 3);
      });
    });

    describe('subflows run only what the acting person may run', () => {
      it('refuses a member’s draft running an admin’s workspace automation, saying who may run it', async () => {
        const appender = await adminAppender();
        const r = await draft(
          p.bob,
          planOf('Write into Ada’s plan', [
            { id: 'sub', kind: 'subflow', automation_id: appender, input: { text: lit('Bob was here') } },
          ]),
          { write_approval: 'automatic' },
        );
        expectError(
          failed(r),
          'subflow/forbidden',
          ['nodes', 0, 'automation_id'],
          new RegExp(`${appender} can be run only by workspace admins.*use an automation you can run`),
        );
        // Its admin may.
        ok(await draft(p.ada, runs('Ada runs her appender', appender), { write_approval: 'automatic' }));
      });

      it('refuses an admin’s draft running a member’s personal automation', async () => {
        const bobs = await create(p.bob, reads('Bob’s census'));
        expectError(
          failed(await draft(p.ada, runs('Ada runs Bob’s census', bobs))),
          'subflow/forbidden',
          ['nodes', 0, 'automation_id'],
          new RegExp(`${bobs} can be run only by its creator`),
        );
      });

      it('refuses publishing once the acting person lost the right, and marks an automation already published as degraded', async () => {
        const appender = await adminAppender();
        const plan = runs('Bob runs the appender', appender);
        await setAdmin('bob@acme.test', true);
        let drafted: Json;
        let published: string;
        try {
          drafted = ok(await draft(p.bob, plan, { write_approval: 'automatic' }));
          published = await create(p.bob, plan, { draft: { write_approval: 'automatic' } });
        } finally {
          await setAdmin('bob@acme.test', false);
        }
        expectError(
          failed(await publishDraft(p.bob, drafted.flow_version_id, { name: 'Too late' })),
          'subflow/forbidden',
          ['nodes', 0, 'automation_id'],
          /can be run only by workspace admins/,
        );
        const read = ok(await p.bob.call('read_automation', { automation_id: published }));
        assert.equal(read.degraded_reason, 'subflow_unavailable');
      });
    });

    describe('approvers', () => {
      const asking = (approvers: unknown) =>
        planOf('Ask someone', [{ id: 'ok', kind: 'approval', message: lit('Go?'), approvers }]);

      it('refuses each named approver who is not a person of the workspace, naming them', async () => {
        const errors = failed(
          await draft(p.ada, asking(['eve@other.test', 'bob@acme.test', 'nobody@acme.test'])),
        );
        assert.deepEqual(
          errors.map((e) => e.rule),
          ['approval/unknown-approver', 'approval/unknown-approver'],
        );
        expectError(
          errors.filter((e) => e.path[3] === 0),
          'approval/unknown-approver',
          ['nodes', 0, 'approvers', 0],
          /eve@other\.test is not a person of this workspace.*by their e-mail address, or use "creator" or "admins"/,
          'ok',
        );
        expectError(
          errors.filter((e) => e.path[3] === 2),
          'approval/unknown-approver',
          ['nodes', 0, 'approvers', 2],
          /nobody@acme\.test/,
          'ok',
        );
      });

      it('accepts people of the workspace whatever the case of their address', async () => {
        ok(await draft(p.ada, asking(['BOB@acme.test', 'cy@acme.test'])));
      });

      it('refuses publishing when a named approver is no longer a person of the workspace', async () => {
        const drafted = ok(await draft(p.ada, asking(['dee@acme.test'])));
        const dee = personId(h, 'dee@acme.test');
        const people = h.services.deps.db.updateTable('people').where('id', '=', dee);
        await people.set({ email: 'dee.gone@acme.test' }).execute();
        try {
          expectError(
            failed(await publishDraft(p.ada, drafted.flow_version_id, { name: 'Ask Dee' })),
            'approval/unknown-approver',
            ['nodes', 0, 'approvers', 0],
            /dee@acme\.test is not a person of this workspace/,
            'ok',
          );
        } finally {
          await people.set({ email: 'dee@acme.test' }).execute();
        }
      });
    });

    describe('subflowRefusal, for the run engine', () => {
      const parentOf = (automationId: string, email = 'ada@acme.test') => ({
        workspaceId: acme(h).id,
        automationId,
        actingId: personId(h, email),
      });

      it('allows a subflow the acting person may run, also inside a transaction', async () => {
        const child = await create(p.ada, reads('Allowed child'));
        const parent = await create(p.ada, runs('Allowed parent', child));
        assert.equal(await subflowRefusal(h.services.deps.db, parentOf(parent), child), null);
        const inside = await h.services.deps.db
          .transaction()
          .execute((trx) => subflowRefusal(trx, parentOf(parent), child));
        assert.equal(inside, null);
      });

      it('refuses an automation that is not in the workspace', async () => {
        const parent = await create(p.ada, reads('Lonely parent'));
        const elsewhere = await create(await h.as('eve@other.test'), reads('Eve’s reader'));
        for (const id of ['aut_made_up', elsewhere]) {
          assert.equal(
            await subflowRefusal(h.services.deps.db, parentOf(parent), id),
            `automation ${id} does not exist in this workspace, so it cannot run as a subflow`,
          );
        }
      });

      it('refuses what the acting person may not run directly', async () => {
        const appender = await adminAppender();
        const adasOwn = await create(p.ada, reads('Ada’s own'));
        const bobsParent = await create(p.bob, reads('Bob’s parent'));
        const adaParent = await create(p.ada, reads('Ada’s parent'));
        const bobs = await create(p.bob, reads('Bob’s own'));
        assert.match(
          (await subflowRefusal(h.services.deps.db, parentOf(bobsParent, 'bob@acme.test'), appender)) ?? '',
          new RegExp(
            `^automation ${appender} can be run only by workspace admins, .*acting person may not run it`,
          ),
        );
        assert.match(
          (await subflowRefusal(h.services.deps.db, parentOf(bobsParent, 'bob@acme.test'), adasOwn)) ?? '',
          /can be run only by its creator/,
        );
        assert.match(
          (await subflowRefusal(h.services.deps.db, parentOf(adaParent), bobs)) ?? '',
          /can be run only by its creator/,
        );
      });

      it('refuses a subflow that would run its parent again, also one stored before cycles were refused', async () => {
        const a = await create(p.ada, reads('Old A'));
        const b = await create(p.ada, runs('Old B runs A', a));
        // A's live version was made to run B before publishing refused that.
        const row = await h.services.deps.db
          .selectFrom('automations')
          .innerJoin('flow_versions', 'flow_versions.id', 'automations.live_version_id')
          .select(['flow_versions.id', 'flow_versions.summary_json'])
          .where('automations.id', '=', a)
          .executeTakeFirstOrThrow();
        const summary = { ...(JSON.parse(row.summary_json) as Json), subflows: [b] };
        await h.services.deps.db
          .updateTable('flow_versions')
          .set({ summary_json: JSON.stringify(summary) })
          .where('id', '=', row.id)
          .execute();

        assert.equal(
          await subflowRefusal(h.services.deps.db, parentOf(a), b),
          `automation ${b} runs this automation again through its subflows (${b} → this automation), so each run would start another without end`,
        );
        assert.match(
          (await subflowRefusal(h.services.deps.db, parentOf(b), a)) ?? '',
          new RegExp(`\\(${a} → this automation\\)`),
        );
        assert.equal(
          await subflowRefusal(h.services.deps.db, parentOf(a), a),
          'an automation cannot run itself as a subflow',
        );
      });
    });
  });
}
