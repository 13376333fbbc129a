import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Scope } from '../src/domains/workspace/actor.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { RunningServer } from '../src/server.ts';
import { comment, repliesBy, threadOf } from './support/agents.ts';
import { capability, chain, lit, plan, postMessage, ref, approval } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';
import { startModelServer, textReply, type ModelServer } from './support/model-server.ts';
import { startOnFreePorts } from './support/raw-http.ts';

/** A plan the Builder would store if it were let. */
function digest(documentId: string) {
  const nodes = [
    capability('read', 'documents.read_document', { document_id: lit(documentId) }),
    approval('ok'),
    postMessage('post', ref('read', 'markdown')),
  ];
  return plan('Digest', nodes, chain('read', 'ok', 'post'));
}

for (const db of DATABASES) {
  describe(`an agent acts with no more scope than the mention's credential (${db.name})`, () => {
    let model: ModelServer;
    let h: Harness;
    let engine: Engine;
    let server: RunningServer;
    let dataDir: string;
    let roadmap: string;

    before(async () => {
      model = await startModelServer();
      h = await setup(db);
      roadmap = acme(h).artifacts.roadmap!;
      engine = createEngine(h.services, { leaseMs: 5000, model: { url: model.url, model: 'test-model' } });
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-agent-scopes-'));
      server = await startOnFreePorts(h.services, dataDir);
    });
    after(async () => {
      await engine.stop();
      await server.close();
      await h.close();
      await model.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    beforeEach(() => {
      model.reset();
      // Whatever the model is asked, it answers with a plan the Builder would store.
      model.fallback = () => textReply(JSON.stringify({ ask: 'A digest.', plan: digest(roadmap) }));
    });

    const draftsOf = async () => (await h.services.drafts.list(h.actor('ada@acme.test'))).drafts.length;
    const tokenFor = async (scopes: Scope[]) => {
      const ada = h.actor('ada@acme.test');
      return (await h.services.tokens.create(ada.personId, ada.workspaceId, scopes, 3_600_000)).token;
    };
    const reader = () => h.as('ada@acme.test');

    it('a documents-only token (no automations:write) cannot make @Builder store a draft', async () => {
      const before = await draftsOf();
      const ada = await h.as('ada@acme.test', ['documents:read', 'documents:write']);
      const asked = await comment(ada, roadmap, '@Builder post a digest of this every week');
      assert.deepEqual(asked.agents_requested, ['Builder']);
      await engine.drain();

      assert.equal(await draftsOf(), before, 'no draft was stored');
      assert.equal(model.requests.length, 0, 'the model was not even asked');
      const [reply] = repliesBy(await threadOf(await reader(), roadmap, asked.thread_id), 'Builder');
      assert.ok(reply, 'the Builder replied');
      assert.match(reply.body, /not allowed `automations:read`|not allowed `automations:write`/);
      const history = await h.services.activity.list(h.actor('ada@acme.test'));
      const done = history.find((r) => r.tool === 'agent_reply' && r.agent === 'Builder');
      assert.equal(done?.error_code, 'insufficient_scope');
      assert.ok(!history.some((r) => r.tool === 'draft_automation' && r.agent === 'Builder'));

      // The same person in the app (a session carries every scope) gets the draft.
      const inApp = await h.as('ada@acme.test');
      await comment(inApp, roadmap, '@Builder post a digest of this every week');
      await engine.drain();
      assert.equal(await draftsOf(), before + 1);
    });

    it('holds over the JSON API too, and for every agent: a token without documents:read has the assistant read nothing', async () => {
      const before = await draftsOf();
      // automations:read but not automations:write, mentioning through /api rather than /mcp.
      const token = await tokenFor(['documents:read', 'documents:write', 'automations:read']);
      const post = (body: string) =>
        fetch(`${server.url}/api/documents/${roadmap}/comments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ body_markdown: body }),
        });
      const res = await post('@Builder draft a weekly digest of this');
      assert.equal(res.status, 201, await res.clone().text());
      const { thread_id } = (await res.json()) as { thread_id: string };
      await engine.drain();
      assert.equal(await draftsOf(), before, 'no draft was stored');
      const [reply] = repliesBy(await threadOf(await reader(), roadmap, thread_id), 'Builder');
      assert.match(reply?.body ?? '', /not allowed `automations:write`/);

      // A write-only token: the assistant may not read the document for its answer.
      const writeOnly = await h.as('ada@acme.test', ['documents:write']);
      const asked = await comment(writeOnly, roadmap, '@Assistant summarise this roadmap');
      await engine.drain();
      assert.equal(model.requests.length, 0, 'nothing of the document went to the model');
      const [answer] = repliesBy(await threadOf(await reader(), roadmap, asked.thread_id), 'Assistant');
      assert.match(answer?.body ?? '', /not allowed `documents:read`/);
    });

    it('keeps the credential’s scopes with the request, so a worker that takes it up later holds the same', async () => {
      const before = await draftsOf();
      const ada = await h.as('ada@acme.test', ['documents:read', 'documents:write']);
      const asked = await comment(ada, roadmap, '@Builder draft something');
      const row = await h.services.deps.db
        .selectFrom('agent_requests')
        .select(['id', 'scopes'])
        .where('thread_id', '=', asked.thread_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.scopes, 'documents:read documents:write');
      // Another engine (another process, another worker) answers it.
      const other = createEngine(h.services, {
        leaseMs: 5000,
        model: { url: model.url, model: 'test-model' },
      });
      try {
        await other.drain();
      } finally {
        await other.stop();
      }
      assert.equal(await draftsOf(), before);
    });
  });
}
