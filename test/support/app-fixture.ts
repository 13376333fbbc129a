import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scope } from '../../src/domains/workspace/actor.ts';
import { createEngine, type Engine } from '../../src/engine/engine.ts';
import type { RunningServer } from '../../src/server.ts';
import { DATABASES } from './databases.ts';
import { setup, type Harness } from './harness.ts';
import { rawRequest, startOnFreePorts, type RawRequest, type RawResponse } from './raw-http.ts';

type Json = Record<string, unknown>;

const ALL: Scope[] = ['automations:read', 'automations:write', 'documents:read', 'documents:write'];
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' };

/** An approval guarding a message to the automation's session. */
const guardedPlan = (name: string): Json => ({
  planVersion: 1,
  name,
  description: `${name}.`,
  nodes: [
    { id: 'ok', kind: 'approval', message: { kind: 'literal', value: 'Post it?' } },
    {
      id: 'post',
      kind: 'capability',
      capability: 'conversations.post_message',
      input: { text: { kind: 'literal', value: name } },
    },
  ],
  edges: [{ from: 'ok', to: 'post' }],
});

export interface AppFixture {
  h: Harness;
  server: RunningServer;
  engine: Engine;
  /** The app's own origin (PUBLIC_URL's). */
  appOrigin: string;
  tokenFor(email: string, scopes?: Scope[]): Promise<string>;
  /** A browser session of that person (in their first workspace), as its Cookie header. */
  sessionCookie(email: string): Promise<string>;
  /** Gives the person the test password (PASSWORD) to sign in with. */
  withPassword(email: string): Promise<void>;
  send(path: string, options?: RawRequest): Promise<RawResponse>;
  get(path: string, headers?: Record<string, string>): Promise<RawResponse>;
  /** A run of a new guarded automation of Ada's, waiting on its approval; returns the approval id. */
  pendingApproval(): Promise<string>;
  approvalStatus(id: string): Promise<string>;
  /** The automations pendingApproval published, oldest first. */
  automationIds: string[];
  close(): Promise<void>;
}

/** The password `withPassword` gives a person. */
export const PASSWORD = 'correct horse battery';

export const sessionCookie = (secret: string) => `tandem_session=${secret}`;

/**
 * The real server over the test fixture on SQLite, with an engine to take runs to their approvals.
 * The HTTP layer does not depend on the database, so one database covers it.
 */
export async function openAppFixture(): Promise<AppFixture> {
  const h = await setup(DATABASES[0]!);
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-app-'));
  const server = await startOnFreePorts(h.services, dataDir);
  const engine = createEngine(h.services, { leaseMs: 5000 });
  const automationIds: string[] = [];
  const send = (path: string, options: RawRequest = {}) => rawRequest(new URL(path, server.url), options);
  return {
    h,
    server,
    engine,
    appOrigin: new URL(server.url).origin,
    automationIds,
    async tokenFor(email, scopes = ALL) {
      const actor = h.actor(email);
      return (await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, 3_600_000)).token;
    },
    async sessionCookie(email) {
      const [member] = await h.services.accounts.memberships(email);
      if (!member) throw new Error(`no test person ${email}`);
      return sessionCookie((await h.services.sessions.create(member)).secret);
    },
    withPassword: (email) => h.services.accounts.setPassword(email, PASSWORD),
    send,
    get: (path, headers = {}) => send(path, { method: 'GET', headers }),
    async pendingApproval() {
      const ada = h.actor('ada@acme.test');
      const name = `Guarded ${automationIds.length + 1}`;
      const drafted = await h.services.automations.draft(ada, { plan_json: guardedPlan(name), ask: name });
      const published = await h.services.automations.publish(ada, {
        flow_version_id: drafted.flow_version_id,
        name,
        trigger: WEEKLY,
      });
      automationIds.push(published.automation_id);
      const started = await h.services.automations.run(ada, { automation_id: published.automation_id });
      await engine.drain();
      const row = await h.services.deps.db
        .selectFrom('approvals')
        .select('id')
        .where('run_id', '=', started.run_id)
        .executeTakeFirstOrThrow();
      return row.id;
    },
    async approvalStatus(id) {
      const row = await h.services.deps.db
        .selectFrom('approvals')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.status;
    },
    async close() {
      await engine.stop();
      await server.close();
      await h.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
