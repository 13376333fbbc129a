import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as encoding from 'lib0/encoding';
import WebSocket from 'ws';
import { ANONYMOUS_LIMITS } from '../src/collab/anonymous.ts';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, connectEditor, openLive, until } from './support/collab.ts';

/** A raw socket on the live endpoint; resolves once open, rejects with the upgrade's refusal. */
function rawSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
}

/** A message framed as Hocuspocus frames its own (a document name, a sync type), of about `size` bytes. */
function framedMessage(size: number): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarString(encoder, 'doc_any');
  encoding.writeVarUint(encoder, 0);
  encoding.writeVarUint(encoder, 2);
  encoding.writeVarUint8Array(encoder, new Uint8Array(size));
  return encoding.toUint8Array(encoder);
}

for (const db of DATABASES) {
  describe(`sockets before authentication cost little on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    before(async () => {
      live = await openLive(db);
    });
    after(() => live.close());
    const anonymous = () => live.server.collab.anonymousCount();

    it('lets one person hold 20 documents open live at once, and opens another once one is closed', async () => {
      const ada = live.h.actor('ada@acme.test');
      const ids: string[] = [];
      for (let i = 0; i < 21; i++)
        ids.push(
          (
            await live
              .services()
              .documents.create(ada, { title: `Open ${i}`, scope: 'user', content_markdown: `Doc ${i}.\n` })
          ).document_id,
        );
      const token = await live.tokenFor('ada@acme.test');
      const open = ids.slice(0, 20).map((id) => connectEditor(live.url, id, token));
      try {
        await Promise.all(open.map((e) => e.ready));
        const past = connectEditor(live.url, ids[20]!, token);
        await assert.rejects(past.ready, /too many documents open live/);
        past.close();
        // One she has open already opens again.
        const again = connectEditor(live.url, ids[0]!, token);
        await again.ready;
        again.close();
        open[5]!.close();
        await until(async () => {
          const retry = connectEditor(live.url, ids[20]!, token);
          const opened = await retry.ready.then(
            () => true,
            () => false,
          );
          retry.close();
          return opened;
        }, 'the 21st document opens once one is closed');
      } finally {
        for (const e of open) e.close();
      }
      await until(() => anonymous() === 0, 'no socket left waiting');
    });

    it('caps the unauthenticated sockets of one address, and frees each slot when its socket closes', async () => {
      const open = await Promise.all(
        Array.from({ length: ANONYMOUS_LIMITS.perAddress }, () => rawSocket(live.url)),
      );
      assert.equal(anonymous(), ANONYMOUS_LIMITS.perAddress);
      await assert.rejects(rawSocket(live.url), /429/);
      const closed = open.map(closeOf);
      for (const ws of open) ws.close();
      await Promise.all(closed);
      await until(() => anonymous() === 0, 'every slot is free');
      const again = await rawSocket(live.url);
      again.close();
      await until(() => anonymous() === 0, 'its slot is free again');
    });

    it('closes a socket that does not authenticate within the time allowed', async () => {
      const ws = await rawSocket(live.url);
      const started = Date.now();
      const closed = await closeOf(ws);
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, /Authenticate within 5 seconds/);
      assert.ok(Date.now() - started < ANONYMOUS_LIMITS.authenticateMs + 2_000);
      await until(() => anonymous() === 0, 'its slot is free');
    });

    it('closes a socket that sends more than a few KB before authenticating', async () => {
      const ws = await rawSocket(live.url);
      const closed = closeOf(ws);
      for (let i = 0; i < 5; i++) ws.send(framedMessage(4_000));
      const { code, reason } = await closed;
      assert.equal(code, 1008);
      assert.equal(reason, 'Authenticate before sending more');
      // One message of a size only an authenticated editor may send, too.
      const big = await rawSocket(live.url);
      const bigClosed = closeOf(big);
      big.send(framedMessage(ANONYMOUS_LIMITS.preAuthBytes + 1));
      assert.equal((await bigClosed).reason, 'Authenticate before sending more');
      await until(() => anonymous() === 0, 'their slots are free');
    });

    it('lets an authenticated editor send far more than that', async () => {
      const ada = live.h.actor('ada@acme.test');
      const { document_id: id } = await live.services().documents.create(ada, {
        title: 'Long',
        scope: 'org',
        content_markdown: '# Long\n\nStart.\n',
      });
      const editor = live.editor(id, await live.tokenFor('ada@acme.test'));
      await editor.ready;
      assert.equal(anonymous(), 0);
      const paragraph = 'Long text typed in one go. '.repeat(1_500);
      blockTextIn(editor.doc, 'Start.').insert(0, paragraph);
      await until(
        async () => (await live.services().documents.store.currentMarkdown(id, null)).includes(paragraph),
        'the long edit lands',
      );
    });
  });
}
