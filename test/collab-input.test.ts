import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import * as Y from 'yjs';
import { blockArray } from '../src/domains/documents/model.ts';
import { log } from '../src/observability/log.ts';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, openLive, until, type Editor } from './support/collab.ts';

const DOC = '# Notes\n\nFirst.\n\nSecond.\n';

/** What the server logged meanwhile, line by line (its warnings and errors, as text). */
function captureLog() {
  const lines: string[] = [];
  const saved = { warn: log.warn, error: log.error };
  const text = (a: unknown) =>
    typeof a === 'string' ? a : a instanceof Error ? a.message : JSON.stringify(a);
  const keep = ((...args: unknown[]) => {
    lines.push(args.map(text).join(' '));
  }) as typeof log.warn;
  log.warn = keep;
  log.error = keep;
  return {
    lines,
    restore() {
      log.warn = saved.warn;
      log.error = saved.error;
    },
  };
}

/** A raw socket to the live endpoint that sends what a provider never would; resolves with its close code. */
function rawSocket(url: string, send: (ws: WebSocket) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => send(ws));
    ws.on('close', (code) => resolve(code));
    ws.on('error', () => undefined);
    setTimeout(() => reject(new Error('the server kept the socket open')), 5000).unref();
  });
}

// How a socket handles what it is sent does not depend on the database.
const db = DATABASES[0]!;

describe('the live socket refusing bad input', () => {
  let live: Awaited<ReturnType<typeof openLive>>;
  let log: ReturnType<typeof captureLog>;
  let id: string;
  let writer: Editor;
  let witness: Editor;

  before(async () => {
    live = await openLive(db);
  });
  after(() => live.close());
  beforeEach(async () => {
    const ada = live.h.actor('ada@acme.test');
    id = (
      await live.services().documents.create(ada, { title: 'Input', scope: 'org', content_markdown: DOC })
    ).document_id;
    writer = live.editor(id, await live.tokenFor('bob@acme.test'));
    witness = live.editor(id, await live.tokenFor('ada@acme.test'));
    await Promise.all([writer.ready, witness.ready]);
    log = captureLog();
  });
  afterEach(() => log.restore());

  const serverText = async () => live.services().documents.store.currentMarkdown(id, null);

  /** The document is as it was and still takes a person's edit from a well-behaved editor. */
  async function stillWorks(): Promise<void> {
    assert.equal(await serverText(), DOC);
    blockTextIn(witness.doc, 'Second.').insert(0, 'Still ');
    await until(async () => (await serverText()).includes('Still Second.'), 'a good edit lands');
  }

  for (const [what, bad] of [
    [
      'a block without an id',
      (doc: Y.Doc) => {
        const map = new Y.Map<unknown>();
        map.set('text', new Y.Text('No id.\n\n'));
        blockArray(doc).insert(1, [map]);
      },
    ],
    [
      "a block's text replaced",
      (doc: Y.Doc) => blockArray(doc).get(1).set('text', new Y.Text('Replaced.\n\n')),
    ],
    ["a block's text removed", (doc: Y.Doc) => blockArray(doc).get(1).delete('text')],
  ] as const) {
    it(`refuses ${what}, changing nothing, and says so once`, async () => {
      bad(writer.doc);
      bad(writer.doc);
      // The writer's later messages are handled after these.
      writer.provider.setAwarenessField('after', true);
      await until(
        () => [...witness.provider.awareness!.getStates().values()].some((s) => s.after === true),
        'the witness hears from the writer',
      );
      const refusals = log.lines.filter((l) => l.includes('refused'));
      assert.equal(refusals.length, 1, log.lines.join('\n'));
      assert.equal(writer.acknowledged(), false, 'the editor is not told it was stored');
      await stillWorks();
    });
  }

  it('closes a socket that sends bytes no provider sends, once logged', async () => {
    const code = await rawSocket(live.url, (ws) => {
      ws.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
      ws.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    });
    assert.notEqual(code, 1000);
    assert.equal(log.lines.length, 1, log.lines.join('\n'));
    await stillWorks();
  });

  it('closes a socket that sends a message larger than any document', async () => {
    const code = await rawSocket(live.url, (ws) => ws.send(Buffer.alloc(9 * 1024 * 1024, 1)));
    assert.equal(code, 1009);
    assert.equal(log.lines.length, 1, log.lines.join('\n'));
    await stillWorks();
  });

  it('closes a socket that floods the server with messages', async () => {
    const code = await rawSocket(live.url, (ws) => {
      for (let i = 0; i < 1000; i++) ws.send(Buffer.from([1, 120, 9]));
    });
    assert.equal(code, 1008);
    assert.equal(log.lines.filter((l) => l.includes('a second')).length, 1, log.lines.join('\n'));
    await stillWorks();
  });
});
