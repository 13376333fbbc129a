import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { Actor, Scope } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { openServices, type Services } from '../src/services.ts';
import { DATABASES } from './support/databases.ts';
import { testFixture } from './support/fixture.ts';
import { setup, type Harness } from './support/harness.ts';

type Json = Record<string, unknown>;

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

const WRITE: Scope[] = ['automations:read', 'automations:write'];
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' };

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

/** An approval guarding a message to the automation's session. */
function guardedPlan(name: string, text: string, approval: Json = {}): Json {
  return {
    planVersion: 1,
    name,
    description: `${name}.`,
    nodes: [
      { id: 'ok', kind: 'approval', message: { kind: 'literal', value: `Post “${text}”?` }, ...approval },
      {
        id: 'post',
        kind: 'capability',
        capability: 'conversations.post_message',
        input: { text: { kind: 'literal', value: text } },
      },
    ],
    edges: [{ from: 'ok', to: 'post' }],
  };
}

let counter = 0;

/** Publishes a guarded automation as `actor`, runs it and lets the engine take it to its approval. */
async function waitingRun(
  services: Services,
  engine: Engine,
  actor: Actor,
  text: string,
  approval: Json = {},
): Promise<{ automationId: string; sessionId: string; runId: string; approvalId: string }> {
  counter += 1;
  const name = `Guarded ${counter}`;
  const drafted = await services.automations.draft(actor, {
    plan_json: guardedPlan(name, text, approval),
    ask: `Post ${text} after approval.`,
  });
  const published = await services.automations.publish(actor, {
    flow_version_id: drafted.flow_version_id,
    name,
    trigger: WEEKLY,
  });
  const started = await services.automations.run(actor, { automation_id: published.automation_id });
  await engine.drain();
  const db = services.deps.db;
  const run = await db
    .selectFrom('runs')
    .select('status')
    .where('id', '=', started.run_id)
    .executeTakeFirst();
  assert.equal(run?.status, 'waiting', 'the run waits on its approval');
  const pending = await db
    .selectFrom('approvals')
    .select(['id', 'status'])
    .where('run_id', '=', started.run_id)
    .executeTakeFirstOrThrow();
  assert.equal(pending.status, 'pending');
  return {
    automationId: published.automation_id,
    sessionId: published.session_id,
    runId: started.run_id,
    approvalId: pending.id,
  };
}

async function runStatus(services: Services, runId: string) {
  return services.deps.db
    .selectFrom('runs')
    .select(['status', 'error'])
    .where('id', '=', runId)
    .executeTakeFirstOrThrow();
}

async function sessionTexts(services: Services, sessionId: string): Promise<string[]> {
  const rows = await services.deps.db
    .selectFrom('messages')
    .select('body')
    .where('conversation_id', '=', sessionId)
    .execute();
  return rows.map((r) => r.body);
}

for (const db of DATABASES) {
  describe(`POST /api/approvals/{id} on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let engine: Engine;
    let dataDir: string;

    const tokenFor = async (email: string, scopes: Scope[] = WRITE) => {
      const actor = h.actor(email);
      return (await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, 3_600_000)).token;
    };

    const decide = (approvalId: string, body: unknown, token?: string) =>
      fetch(new URL(`/api/approvals/${approvalId}`, server.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });

    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-approvals-http-'));
      server = await startServer(
        loadConfig({
          TANDEM_DATA: dataDir,
          PORT: String(await freePort()),
          PAGES_PORT: String(await freePort()),
        }),
        h.services,
      );
      engine = createEngine(h.services, { leaseMs: 5000 });
    });

    after(async () => {
      await engine?.stop();
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('approves as the creator; the run then finishes', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'approved over HTTP');
      const res = await decide(
        w.approvalId,
        { decision: 'approve', note: 'looks good' },
        await tokenFor('ada@acme.test'),
      );
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.equal(body.status, 'approved');
      assert.equal(body.approval_id, w.approvalId);
      assert.equal(body.run_id, w.runId);
      assert.equal(body.decided_by, 'ada@acme.test');
      assert.equal(body.note, 'looks good');
      assert.equal(typeof body.decided_at, 'string');

      await engine.drain();
      assert.equal((await runStatus(h.services, w.runId)).status, 'succeeded');
      assert.ok(
        (await sessionTexts(h.services, w.sessionId)).includes('approved over HTTP'),
        'the guarded message was posted',
      );
      const outputs = await h.services.deps.db
        .selectFrom('run_nodes')
        .select('output_json')
        .where('run_id', '=', w.runId)
        .where('node_key', '=', 'ok')
        .executeTakeFirstOrThrow();
      const ok = JSON.parse(outputs.output_json ?? '{}') as Json;
      assert.equal(ok.approved, true);
      assert.equal(ok.by, 'ada@acme.test');
      assert.equal(ok.note, 'looks good');
    });

    it('answers 409 when the approval is decided a second time', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'decided twice');
      const token = await tokenFor('ada@acme.test');
      assert.equal((await decide(w.approvalId, { decision: 'approve' }, token)).status, 200);
      const again = await decide(w.approvalId, { decision: 'reject' }, token);
      assert.equal(again.status, 409);
      const body = (await again.json()) as { error: string; message: string };
      assert.equal(body.error, 'already_decided');
      assert.match(body.message, /already approved/);
      await engine.drain();
      assert.equal((await runStatus(h.services, w.runId)).status, 'succeeded', 'the first decision holds');
    });

    it('rejects as the creator; the run ends cancelled', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'rejected over HTTP');
      const res = await decide(
        w.approvalId,
        { decision: 'reject', note: 'not now' },
        await tokenFor('ada@acme.test'),
      );
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as Json).status, 'rejected');
      await engine.drain();
      const run = await runStatus(h.services, w.runId);
      assert.equal(run.status, 'cancelled');
      assert.match(run.error ?? '', /rejected by Ada Lovelace: not now/);
      assert.ok(!(await sessionTexts(h.services, w.sessionId)).includes('rejected over HTTP'));
    });

    it('answers 403 with a clear message to someone who may see but not decide it', async () => {
      // An admin can open Bob's personal automation, but only Bob decides its approvals.
      const bobs = await waitingRun(h.services, engine, h.actor('bob@acme.test'), 'Bob’s post');
      const asAdmin = await decide(bobs.approvalId, { decision: 'approve' }, await tokenFor('ada@acme.test'));
      assert.equal(asAdmin.status, 403);
      const body = (await asAdmin.json()) as { error: string; message: string };
      assert.equal(body.error, 'forbidden');
      assert.equal(body.message, 'Only the automation’s creator can decide this approval');

      // Approvers named by e-mail: the creator is not one of them.
      const named = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'Cy decides', {
        approvers: ['cy@acme.test'],
      });
      const asCreator = await decide(
        named.approvalId,
        { decision: 'approve' },
        await tokenFor('ada@acme.test'),
      );
      assert.equal(asCreator.status, 403);
      assert.equal(
        ((await asCreator.json()) as { message: string }).message,
        'Only cy@acme.test can decide this approval',
      );
      const asCy = await decide(named.approvalId, { decision: 'approve' }, await tokenFor('cy@acme.test'));
      assert.equal(asCy.status, 200, 'a named approver may decide without access to the automation');
      assert.equal(((await asCy.json()) as Json).decided_by, 'cy@acme.test');

      const pending = await h.services.deps.db
        .selectFrom('approvals')
        .select('status')
        .where('id', '=', bobs.approvalId)
        .executeTakeFirstOrThrow();
      assert.equal(pending.status, 'pending', 'a refused decision changes nothing');
      await engine.drain();
      assert.equal((await runStatus(h.services, bobs.runId)).status, 'waiting');
      assert.equal((await runStatus(h.services, named.runId)).status, 'succeeded');
    });

    it('hides an approval from people who cannot see it, and answers 404 for an unknown id', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'hidden');
      for (const email of ['dee@acme.test', 'eve@other.test']) {
        const res = await decide(w.approvalId, { decision: 'approve' }, await tokenFor(email));
        assert.equal(res.status, 404, email);
        assert.equal(((await res.json()) as { error: string }).error, 'not_found');
      }
      const unknown = await decide('apr_unknown', { decision: 'approve' }, await tokenFor('ada@acme.test'));
      assert.equal(unknown.status, 404);
      const body = (await unknown.json()) as { error: string; message: string };
      assert.equal(body.error, 'not_found');
      assert.equal(body.message, 'Approval not found');
    });

    it('needs a token with automations:write', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'scoped');
      const readOnly = await decide(
        w.approvalId,
        { decision: 'approve' },
        await tokenFor('ada@acme.test', ['automations:read', 'documents:read', 'documents:write']),
      );
      assert.equal(readOnly.status, 403);
      const body = (await readOnly.json()) as { error: string; message: string };
      assert.equal(body.error, 'insufficient_scope');
      assert.match(body.message, /automations:write/);
      const anonymous = await decide(w.approvalId, { decision: 'approve' });
      assert.equal(anonymous.status, 401);
      const pending = await h.services.deps.db
        .selectFrom('approvals')
        .select('status')
        .where('id', '=', w.approvalId)
        .executeTakeFirstOrThrow();
      assert.equal(pending.status, 'pending');
    });

    it('answers 400 to a malformed body', async () => {
      const w = await waitingRun(h.services, engine, h.actor('ada@acme.test'), 'malformed');
      const token = await tokenFor('ada@acme.test');
      for (const body of [
        '{"decision": "approve"',
        'approve',
        {},
        { decision: 'maybe' },
        { decision: 'APPROVE' },
        { decision: 'approve', note: 42 },
        { decision: 'approve', note: 'x'.repeat(2001) },
      ]) {
        const res = await decide(w.approvalId, body, token);
        assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
        const answer = (await res.json()) as { error: string; message: string };
        assert.equal(answer.error, 'invalid_argument');
        assert.ok(answer.message.length > 0);
      }
      const pending = await h.services.deps.db
        .selectFrom('approvals')
        .select('status')
        .where('id', '=', w.approvalId)
        .executeTakeFirstOrThrow();
      assert.equal(pending.status, 'pending', 'nothing was decided');
    });
  });
}

// ── the command line ──────────────────────────────────────────────────────────────────────────

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Each command starts a fresh Node; a shared compile cache keeps the short runs quick.
const compileCache = mkdtempSync(join(tmpdir(), 'tandem-approve-cache-'));

function tandem(args: string[], dataDir: string): Promise<CliRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TANDEM_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|PUBLIC_URL$|PAGES_ORIGIN$|LOG_LEVEL$)/.test(key))
      continue;
    env[key] = value;
  }
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...env, NODE_COMPILE_CACHE: compileCache, TANDEM_DATA: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('tandem approve', () => {
  let dataDir: string;
  let sqlitePath: string;
  let rejectable: { runId: string; approvalId: string; sessionId: string };
  let forCy: { runId: string; approvalId: string };

  /** Opens the data directory's database in this process for `fn`, then closes it again. */
  async function withServices<T>(fn: (services: Services, engine: Engine) => Promise<T>): Promise<T> {
    const services = await openServices({ sqlitePath });
    const engine = createEngine(services, { leaseMs: 5000 });
    try {
      return await fn(services, engine);
    } finally {
      await engine.stop();
      await services.close();
    }
  }

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tandem-approve-cli-'));
    sqlitePath = join(dataDir, 'tandem.sqlite');
    await withServices(async (services, engine) => {
      const { workspaces } = await importFixture(services.deps, testFixture);
      const acme = workspaces.Acme!;
      const ada: Actor = {
        personId: acme.users['ada@acme.test']!,
        workspaceId: acme.id,
        scopes: new Set(WRITE),
      };
      rejectable = await waitingRun(services, engine, ada, 'posted from the CLI test');
      forCy = await waitingRun(services, engine, ada, 'for Cy', { approvers: ['cy@acme.test'] });
    });
  });

  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(compileCache, { recursive: true, force: true });
  });

  it('rejects with a note, prints the decision, and the run ends cancelled', async () => {
    const result = await tandem(
      ['approve', rejectable.approvalId, '--user', 'ada@acme.test', '--reject', '--note', 'no'],
      dataDir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.equal(result.stdout.trim(), `rejected ${rejectable.approvalId} (run ${rejectable.runId})`);

    await withServices(async (services, engine) => {
      const approval = await services.deps.db
        .selectFrom('approvals')
        .select(['status', 'note'])
        .where('id', '=', rejectable.approvalId)
        .executeTakeFirstOrThrow();
      assert.equal(approval.status, 'rejected');
      assert.equal(approval.note, 'no');
      await engine.drain();
      const run = await runStatus(services, rejectable.runId);
      assert.equal(run.status, 'cancelled');
      assert.match(run.error ?? '', /rejected by Ada Lovelace: no/);
      assert.ok(!(await sessionTexts(services, rejectable.sessionId)).includes('posted from the CLI test'));
    });
  });

  it('refuses, with one clear line and a non-zero exit, a person who may not decide', async () => {
    const result = await tandem(['approve', forCy.approvalId, '--user', 'ada@acme.test'], dataDir);
    assert.notEqual(result.code, 0);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.equal(result.stderr.trim(), 'tandem approve: Only cy@acme.test can decide this approval');

    const hidden = await tandem(['approve', forCy.approvalId, '--user', 'dee@acme.test'], dataDir);
    assert.notEqual(hidden.code, 0);
    assert.equal(hidden.stderr.trim(), 'tandem approve: Approval not found');

    const stranger = await tandem(['approve', forCy.approvalId, '--user', 'nobody@acme.test'], dataDir);
    assert.notEqual(stranger.code, 0);
    assert.equal(stranger.stderr.trim().split('\n').length, 1, stranger.stderr);
    assert.match(stranger.stderr, /^tandem approve: .*nobody@acme\.test/);

    await withServices(async (services) => {
      const approval = await services.deps.db
        .selectFrom('approvals')
        .select('status')
        .where('id', '=', forCy.approvalId)
        .executeTakeFirstOrThrow();
      assert.equal(approval.status, 'pending');
    });
  });

  it('refuses a second decision with a non-zero exit', async () => {
    const result = await tandem(['approve', rejectable.approvalId, '--user', 'ada@acme.test'], dataDir);
    assert.notEqual(result.code, 0);
    assert.equal(result.stderr.trim(), 'tandem approve: This approval is already rejected');
  });

  it('exits 2 on bad usage', async () => {
    const noUser = await tandem(['approve', forCy.approvalId], dataDir);
    assert.equal(noUser.code, 2);
    assert.equal(noUser.stderr.trim(), 'tandem approve: --user EMAIL is required');
    const noId = await tandem(['approve', '--user', 'cy@acme.test'], dataDir);
    assert.equal(noId.code, 2);
    assert.match(noId.stderr, /^tandem approve: approve needs an approval id/);
    const unknownFlag = await tandem(
      ['approve', forCy.approvalId, '--user', 'cy@acme.test', '--yes'],
      dataDir,
    );
    assert.equal(unknownFlag.code, 2);
    assert.equal(unknownFlag.stderr.trim().split('\n').length, 1, unknownFlag.stderr);
  });

  it('approves as the named approver', async () => {
    const result = await tandem(['approve', forCy.approvalId, '--user', 'cy@acme.test'], dataDir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), `approved ${forCy.approvalId} (run ${forCy.runId})`);
    await withServices(async (services, engine) => {
      await engine.drain();
      assert.equal((await runStatus(services, forCy.runId)).status, 'succeeded');
    });
  });
});
