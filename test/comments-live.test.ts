import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { relayThreads } from '../src/collab/thread-relay.ts';
import type { RunningServer } from '../src/server.ts';
import type { Services } from '../src/services.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { instancesOn } from './support/instances.ts';
import { startOnFreePorts } from './support/raw-http.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Heard {
  event: string;
  data: string;
}

/** A server-sent stream read as it arrives: its events, whether it ended, its status. */
async function listen(url: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const heard: Heard[] = [];
  let ended = false;
  if (response.ok && response.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event) heard.push({ event, data: data ?? '' });
          }
        }
      } catch {
        // Aborted by the test.
      }
      ended = true;
    })();
  }
  return {
    status: response.status,
    text: response.ok ? '' : await response.text(),
    heard,
    ended: () => ended,
    close: () => controller.abort(),
    threads: () =>
      heard.filter((h) => h.event === 'thread').map((h) => JSON.parse(h.data) as Record<string, string>),
  };
}

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const db of DATABASES) {
  describe(`live comment threads (${db.name})`, () => {
    let shared: Awaited<ReturnType<typeof instancesOn>>;
    const prefix = `tandem-test-${randomBytes(4).toString('hex')}`;
    const dirs: string[] = [];
    const servers: RunningServer[] = [];
    let a: Services;
    let b: Services;
    let urlA: string;
    let urlB: string;

    async function instance(): Promise<[Services, string]> {
      const services = await shared.open();
      const relay = await relayThreads(services.deps.threads, { redisUrl: REDIS_URL, prefix });
      services.closeWith(relay.close);
      const dir = mkdtempSync(join(tmpdir(), 'tandem-threads-'));
      dirs.push(dir);
      const server = await startOnFreePorts(services, dir);
      servers.push(server);
      return [services, server.url];
    }

    before(async () => {
      shared = await instancesOn(db);
      [a, urlA] = await instance();
      [b, urlB] = await instance();
    });
    after(async () => {
      for (const s of servers) await s.close();
      await shared?.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    const token = async (email: string) => {
      const actor = shared.actor(email);
      return (await a.tokens.create(actor.personId, actor.workspaceId, ['documents:read'], 3_600_000)).token;
    };
    const stream = (base: string, id: string) => `${base}/api/documents/${id}/comments/stream`;

    it('tells people on another instance of every new thread, reply, resolve and reopen, by ids only', async () => {
      const roadmap = acme({ ids: shared.ids() } as never).artifacts.roadmap as string;
      const bob = await listen(stream(urlB, roadmap), await token('bob@acme.test'));
      assert.equal(bob.status, 200);
      await until(() => bob.heard.some((h) => h.event === 'ready'), 'the stream is ready');
      const ada = shared.actor('ada@acme.test');
      const made = await a.comments.add(ada, {
        document_id: roadmap,
        body_markdown: 'A secret remark',
        anchor_excerpt: 'Ship it.',
      });
      await b.comments.add(shared.actor('bob@acme.test'), {
        document_id: roadmap,
        body_markdown: 'Agreed',
        thread_id: made.thread_id,
      });
      await a.comments.resolve(ada, { document_id: roadmap, thread_id: made.thread_id, resolved: true });
      await a.comments.resolve(ada, { document_id: roadmap, thread_id: made.thread_id, resolved: false });
      await until(() => bob.threads().length === 4, 'four changes heard');
      // Changes made on two instances arrive in the order each reached this one.
      const order = ['created', 'replied', 'resolved', 'reopened'];
      const heard = bob.threads().sort((x, y) => order.indexOf(x.change!) - order.indexOf(y.change!));
      assert.deepEqual(heard, [
        { thread_id: made.thread_id, change: 'created' },
        { thread_id: made.thread_id, change: 'replied' },
        { thread_id: made.thread_id, change: 'resolved' },
        { thread_id: made.thread_id, change: 'reopened' },
      ]);
      assert.ok(!bob.heard.some((h) => h.data.includes('secret')), 'no comment text on the stream');
      bob.close();
      await until(() => b.deps.threads.listenerCount() === 0, 'a closed stream stops watching');
    });

    it('offers the mention picker the workspace’s agents, Assistant first, and its people, and no one else’s', async () => {
      const response = await fetch(`${urlA}/api/mentionables`, {
        headers: { authorization: `Bearer ${await token('bob@acme.test')}` },
      });
      assert.equal(response.status, 200);
      const offered = (await response.json()) as {
        people: { handle: string; name: string }[];
        agents: string[];
      };
      assert.deepEqual(offered.agents, ['Assistant', 'Builder']);
      const handles = offered.people.map((p) => p.handle);
      assert.ok(handles.includes('ada') && handles.includes('bob'), handles.join(', '));
      const others = await a.deps.db
        .selectFrom('people')
        .select('handle')
        .where('workspace_id', '!=', shared.actor('bob@acme.test').workspaceId)
        .execute();
      assert.ok(others.length > 0);
      for (const p of offered.people) {
        assert.ok(
          (await a.deps.db
            .selectFrom('people')
            .select('id')
            .where('workspace_id', '=', shared.actor('bob@acme.test').workspaceId)
            .where('handle', '=', p.handle)
            .executeTakeFirst()) !== undefined,
          `${p.handle} is of Bob's workspace`,
        );
      }
    });

    it('answers an artifact the person cannot open as not found, like a made-up one', async () => {
      const plan = acme({ ids: shared.ids() } as never).artifacts.plan as string;
      const dee = await token('dee@acme.test');
      const hidden = await listen(stream(urlA, plan), dee);
      const madeUp = await listen(stream(urlA, 'doc_made_up'), dee);
      assert.equal(hidden.status, 404);
      assert.equal(madeUp.status, 404);
      assert.equal(hidden.text, madeUp.text);
    });

    it('says nothing more to a person who can no longer open the artifact, and ends their stream', async () => {
      const plan = acme({ ids: shared.ids() } as never).artifacts.plan as string;
      const bobActor = shared.actor('bob@acme.test');
      const bob = await listen(stream(urlB, plan), await token('bob@acme.test'));
      assert.equal(bob.status, 200);
      await until(() => bob.heard.some((h) => h.event === 'ready'), 'the stream is ready');
      const ada = shared.actor('ada@acme.test');
      await a.comments.add(ada, { document_id: plan, body_markdown: 'Before' });
      await until(() => bob.threads().length === 1, 'the first change heard');
      // Bob's role is taken away (as sharing does), then Ada comments again.
      await a.deps.db
        .deleteFrom('artifact_roles')
        .where('artifact_id', '=', plan)
        .where('person_id', '=', bobActor.personId)
        .execute();
      const later = await a.comments.add(ada, { document_id: plan, body_markdown: 'After' });
      await until(() => bob.ended(), 'the stream ends');
      assert.equal(bob.threads().length, 1);
      assert.ok(!bob.heard.some((h) => h.data.includes(later.thread_id)));
      await until(() => b.deps.threads.listenerCount() === 0, 'the watches are gone');
    });
  });
}
