import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.ts';
import type { Scope } from '../src/domains/workspace/actor.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';

const READ: Scope[] = ['automations:read'];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const plan = {
  planVersion: 1,
  name: 'Notes <digest>',
  description: 'Posts a note.',
  nodes: [
    { id: 'ok', kind: 'approval', message: { kind: 'literal', value: 'Post <b>it</b>?' } },
    {
      id: 'post',
      kind: 'capability',
      capability: 'conversations.post_message',
      input: { text: { kind: 'literal', value: 'Hello' } },
    },
  ],
  edges: [{ from: 'ok', to: 'post' }],
};

for (const db of DATABASES) {
  describe(`automation pages and sessions over HTTP on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let dataDir: string;
    let automationId: string;
    let sessionId: string;

    const tokenFor = async (email: string, scopes: Scope[]) => {
      const actor = h.actor(email);
      return (await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, 3_600_000)).token;
    };
    const get = (path: string, token?: string) =>
      fetch(new URL(path, server.url), {
        redirect: 'manual',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });

    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-http-automations-'));
      const port = await freePort();
      server = await startServer(
        loadConfig({ TANDEM_DATA: dataDir, PORT: String(port), PAGES_PORT: String(await freePort()) }),
        h.services,
      );
      const ada = h.actor('ada@acme.test');
      const draft = await h.services.automations.draft(ada, { plan_json: plan, ask: 'Post <a> note' });
      const published = await h.services.automations.publish(ada, {
        flow_version_id: draft.flow_version_id,
        name: 'Notes <digest>',
        trigger: { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'UTC' },
      });
      automationId = published.automation_id;
      sessionId = published.session_id;
    });
    after(async () => {
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('serves the automation to its creator as JSON, with its trigger in words and its next runs', async () => {
      const res = await get(`/api/automations/${automationId}`, await tokenFor('ada@acme.test', READ));
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        name: string;
        ask: string;
        steps: string[];
        can_control: boolean;
        schedule: { text: string; next: { local: string }[] };
      };
      assert.equal(body.name, 'Notes <digest>', 'values are data; the app shows them as text');
      assert.equal(body.ask, 'Post <a> note');
      assert.match(body.steps.join('\n'), /Post a message to a conversation/);
      assert.equal(body.can_control, true);
      assert.equal(body.schedule.text, 'daily at 09:00 (UTC)');
      assert.equal(body.schedule.next.length, 5);
      assert.ok(body.schedule.next.every((f) => f.local.endsWith(' 09:00')));
    });

    it('sends a person without a session to sign in, and hides another person’s automation', async () => {
      const anonymous = await get(`/automations/${automationId}`);
      assert.equal(anonymous.status, 302);
      assert.equal(
        anonymous.headers.get('location'),
        `/login?next=${encodeURIComponent(`/automations/${automationId}`)}`,
      );
      const bob = await get(`/api/automations/${automationId}`, await tokenFor('bob@acme.test', READ));
      assert.equal(bob.status, 404);
      assert.deepEqual(await bob.json(), { error: 'not_found', message: 'Automation not found' });
      const made = await get('/api/automations/aut_nope', await tokenFor('bob@acme.test', READ));
      assert.deepEqual(await made.json(), { error: 'not_found', message: 'Automation not found' });
      const docsOnly = await get(
        `/api/automations/${automationId}`,
        await tokenFor('ada@acme.test', ['documents:read']),
      );
      assert.equal(docsOnly.status, 403);
    });

    it('serves the session as JSON to those who can open the automation', async () => {
      const res = await get(`/api/sessions/${sessionId}`, await tokenFor('ada@acme.test', READ));
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        automation_id: string;
        messages: { body: string; author?: string }[];
      };
      assert.equal(body.automation_id, automationId);
      assert.equal(body.messages.length, 1);
      assert.match(body.messages[0]!.body, /published “Notes <digest>” \(version 1\)/);
      assert.equal(body.messages[0]!.author, 'Ada Lovelace');

      const bob = await get(`/api/sessions/${sessionId}`, await tokenFor('bob@acme.test', READ));
      assert.equal(bob.status, 404);
      const outsider = await get(`/api/sessions/${sessionId}`, await tokenFor('eve@other.test', READ));
      assert.equal(outsider.status, 404);
      const unknown = await get('/api/sessions/cnv_nope', await tokenFor('ada@acme.test', READ));
      assert.equal(unknown.status, 404);
      const scopeless = await get(
        `/api/sessions/${sessionId}`,
        await tokenFor('ada@acme.test', ['documents:read']),
      );
      assert.equal(scopeless.status, 403);
    });

    it('records a version made through MCP as an agent’s for the person, and one made through /api as the person’s', async () => {
      const ada = h.actor('ada@acme.test');
      const token = await tokenFor('ada@acme.test', ['automations:read', 'automations:write']);
      const client = new Client({ name: 'http-automations-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
          authProvider: { token: async () => token },
        }),
      );
      const tool = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        return result.structuredContent as Record<string, unknown>;
      };
      let published: Record<string, unknown>;
      try {
        const drafted = await tool('draft_automation', { plan_json: plan, ask: 'Post a note for me' });
        published = await tool('edit_automation', {
          action: 'publish',
          flow_version_id: drafted.flow_version_id,
          name: 'Made by an agent',
          trigger: { kind: 'schedule', frequency: 'daily', hour: 7, minute: 0, timezone: 'UTC' },
        });
      } finally {
        await client.close();
      }
      const id = published.automation_id as string;

      const post = (path: string, body: unknown) =>
        fetch(new URL(path, server.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const drafted = await post(`/api/automations/${id}/drafts`, { plan_json: plan, ask: 'Post it myself' });
      assert.equal(drafted.status, 200, await drafted.clone().text());
      const { flow_version_id } = (await drafted.json()) as { flow_version_id: string };
      const republished = await post(`/api/automations/${id}/publish`, {
        flow_version_id,
        trigger: { kind: 'schedule', frequency: 'daily', hour: 8, minute: 0, timezone: 'UTC' },
      });
      assert.equal(republished.status, 200, await republished.clone().text());

      const { versions } = await h.services.automationViews.versions(ada, { automation_id: id });
      assert.deepEqual(
        versions.map((v) => [v.version, v.author, v.made_by, v.live]),
        [
          [2, 'Ada Lovelace', 'person', true],
          [1, 'Ada Lovelace', 'agent', false],
        ],
      );
    });
  });
}
