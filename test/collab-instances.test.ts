import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectInstances } from '../src/collab/instances.ts';
import { REFUSED } from '../src/collab/socket.ts';
import { collabTickets } from '../src/collab/tickets.ts';
import { liveDocumentHooks } from '../src/collab/live-document.ts';
import type { RunningServer } from '../src/server.ts';
import type { Services } from '../src/services.ts';
import { blockTextIn, connectEditor, until, type Editor } from './support/collab.ts';
import type { InstanceSpec } from './support/collab-instance.ts';
import { DATABASES } from './support/databases.ts';
import { instancesOn } from './support/instances.ts';
import { startOnFreePorts } from './support/raw-http.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DOC = '# Shared\n\nFirst.\n\nSecond.\n';
const postgres = DATABASES.find((d) => d.name === 'postgres');

interface Instance {
  services: Services;
  server: RunningServer;
  url: string;
}

/** A server instance in another process, killable; resolves once it listens. */
function spawnInstance(spec: InstanceSpec): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', join(import.meta.dirname, 'support', 'collab-instance.ts')],
    {
      env: { ...process.env, TANDEM_TEST_INSTANCE: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`the instance exited with ${code}`)));
  });
}

const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/collab`;

describe(
  'several instances on one PostgreSQL with Redis',
  { skip: !postgres && 'PostgreSQL is skipped' },
  () => {
    let shared: Awaited<ReturnType<typeof instancesOn>>;
    const prefix = `tandem-test-${randomBytes(4).toString('hex')}`;
    const dirs: string[] = [];
    const editors: Editor[] = [];
    let a: Instance;
    let b: Instance;

    async function instance(): Promise<Instance> {
      const services = await shared.open({ documents: { peerGraceMs: 400 } });
      await services.documents.store.extend(liveDocumentHooks);
      await connectInstances(services, { redisUrl: REDIS_URL, prefix });
      const dir = mkdtempSync(join(tmpdir(), 'tandem-instance-'));
      dirs.push(dir);
      const server = await startOnFreePorts(services, dir);
      return { services, server, url: wsUrl(server.url) };
    }

    function editor(url: string, id: string, token: string): Editor {
      const made = connectEditor(url, id, token);
      editors.push(made);
      return made;
    }

    before(async () => {
      shared = await instancesOn(postgres!);
      a = await instance();
      b = await instance();
    });
    after(async () => {
      for (const e of editors) e.close();
      for (const i of [a, b]) await i?.server.close();
      await shared?.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    const ada = () => shared.actor('ada@acme.test');
    const token = async (email: string) => {
      const actor = shared.actor(email);
      return (await a.services.tokens.create(actor.personId, actor.workspaceId, [...actor.scopes], 3_600_000))
        .token;
    };
    const create = async () =>
      (await a.services.documents.create(ada(), { title: 'Shared', scope: 'org', content_markdown: DOC }))
        .document_id;
    const versionRows = async (services: Services, id: string) =>
      (await services.documents.versions(ada(), { document_id: id })).versions;

    /** An editor with the reasons the server gave for closing its document's connection. */
    async function closable(url: string, id: string, tokenText: string) {
      const made = editor(url, id, tokenText);
      const closed: string[] = [];
      made.provider.on('close', ({ event }: { event: { reason: string } }) => closed.push(event.reason));
      await made.ready;
      return Object.assign(made, { closed });
    }

    it('closes a socket on one instance when its credential ends on another, at once', async () => {
      const id = await create();
      const bob = shared.actor('bob@acme.test');
      const heard: boolean[] = [];
      const stop = b.services.credentialEnds.on((remote) => heard.push(remote));
      // A token revoked on A; a browser session signed out on A; both sockets are on B.
      const made = await a.services.tokens.create(bob.personId, bob.workspaceId, [...bob.scopes], 3_600_000);
      const onB = await closable(b.url, id, made.token);
      const [member] = await a.services.accounts.memberships('bob@acme.test');
      const session = await a.services.sessions.create(member!);
      const { sessionId } = (await a.services.sessions.verify(session.secret))!;
      const { ticket } = await collabTickets(a.services.deps.db).issue(bob, id, {
        kind: 'session',
        credentialId: sessionId,
      });
      const browserOnB = await closable(b.url, id, ticket);
      await a.services.tokens.revoke(made.tokenId, bob.personId);
      await until(() => onB.closed.length > 0, 'the token’s socket on B is closed', 1000);
      assert.deepEqual(browserOnB.closed, []);
      await a.services.sessions.revoke(sessionId);
      await until(() => browserOnB.closed.length > 0, 'the session’s socket on B is closed', 1000);
      assert.deepEqual([onB.closed, browserOnB.closed], [[REFUSED.ended], [REFUSED.ended]]);
      assert.ok(heard.includes(true), 'B heard of it over Redis');
      stop();
      // What they type afterwards reaches neither instance.
      blockTextIn(onB.doc, 'First.').insert(0, 'Late ');
      blockTextIn(browserOnB.doc, 'Second.').insert(0, 'Late ');
      const witness = editor(a.url, id, await token('ada@acme.test'));
      await witness.ready;
      blockTextIn(witness.doc, 'Second.').insert('Second'.length, ' seen');
      await until(
        async () =>
          (await b.services.documents.read(ada(), { document_id: id })).markdown.includes('Second seen.'),
        'the witness’s later edit reaches B',
      );
      assert.equal(
        (await b.services.documents.read(ada(), { document_id: id })).markdown,
        DOC.replace('Second.', 'Second seen.'),
      );
    });

    it('brings people on different instances to the same text within a second', async () => {
      const id = await create();
      const onA = editor(a.url, id, await token('ada@acme.test'));
      const onB = editor(b.url, id, await token('bob@acme.test'));
      await Promise.all([onA.ready, onB.ready]);
      blockTextIn(onA.doc, 'First.').insert(0, 'Ada: ');
      blockTextIn(onB.doc, 'First.').insert('Ada: First'.length - 'Ada: '.length, ' (Bob)');
      await until(
        () => onA.text() === onB.text() && onA.text().includes('Ada: ') && onA.text().includes('(Bob)'),
        'the same text on both',
        1000,
      );
    });

    it('applies a sharing change made through one instance to connections on the other at once', async () => {
      const id = await create();
      const bob = shared.actor('bob@acme.test');
      const cy = shared.actor('cy@acme.test');
      // Only people added: Bob as an editor, Cy as an editor.
      await a.services.sharing.put(ada(), id, {
        scope: 'user',
        people: [
          { user_id: bob.personId, role: 'editor' },
          { user_id: cy.personId, role: 'editor' },
        ],
      });
      const bobOnB = editor(b.url, id, await token('bob@acme.test'));
      const cyOnB = editor(b.url, id, await token('cy@acme.test'));
      await Promise.all([bobOnB.ready, cyOnB.ready]);
      const told: string[] = [];
      bobOnB.provider.on('stateless', ({ payload }: { payload: string }) => told.push(payload));
      let cyClosed: string | undefined;
      cyOnB.provider.on('close', ({ event }: { event: { reason: string } }) => (cyClosed = event.reason));

      const started = Date.now();
      await a.services.sharing.put(ada(), id, {
        scope: 'user',
        people: [{ user_id: bob.personId, role: 'viewer' }],
      });
      await until(
        () => told.includes(JSON.stringify({ access: 'readonly' })) && cyClosed === REFUSED.notFound,
        'Bob is read-only and Cy disconnected on the other instance',
        2000,
      );
      assert.ok(Date.now() - started < 2000);
    });

    it('brings an agent’s write through either instance to people on both within a second', async () => {
      const id = await create();
      const onA = editor(a.url, id, await token('ada@acme.test'));
      const onB = editor(b.url, id, await token('bob@acme.test'));
      await Promise.all([onA.ready, onB.ready]);
      for (const [through, line] of [
        [a, 'Through A.\n'],
        [b, 'Through B.\n'],
      ] as const) {
        const started = Date.now();
        await through.services.documents.edit(ada(), {
          document_id: id,
          mode: 'append',
          content_markdown: line,
        });
        await until(() => onA.text().includes(line) && onB.text().includes(line), `both see ${line}`, 1000);
        assert.ok(Date.now() - started < 1000);
      }
      const markdown = (await b.services.documents.read(ada(), { document_id: id })).markdown;
      assert.equal(markdown, onA.text());
      assert.ok(markdown.endsWith('Through A.\nThrough B.\n'), markdown);
    });

    it('opens one connection with a ticket, on whichever instance it is used first', async () => {
      const id = await create();
      const bob = shared.actor('bob@acme.test');
      // Issued by A; used on B, then again on A and on B: refused as an invalid ticket is.
      const { ticket } = await collabTickets(a.services.deps.db).issue(bob, id);
      const onB = editor(b.url, id, ticket);
      await onB.ready;
      for (const url of [a.url, b.url])
        await assert.rejects(editor(url, id, ticket).ready, { message: REFUSED.credential });
      // One ticket raced on both instances opens one of them.
      const raced = (await collabTickets(b.services.deps.db).issue(bob, id)).ticket;
      const outcomes = await Promise.allSettled([
        editor(a.url, id, raced).ready,
        editor(b.url, id, raced).ready,
      ]);
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    });

    it('stores a person’s edit once, as one version, though both instances hold the document', async () => {
      const id = await create();
      const onA = editor(a.url, id, await token('bob@acme.test'));
      const onB = editor(b.url, id, await token('ada@acme.test'));
      await Promise.all([onA.ready, onB.ready]);
      const before = (await versionRows(a.services, id)).length;
      blockTextIn(onA.doc, 'Second.').insert(0, 'Once: ');
      await until(() => onB.text().includes('Once: Second.'), 'B has it');
      await until(async () => (await versionRows(b.services, id)).length > before, 'a version row', 4000);
      // Past the time another instance would take the edit over, had it not been stored.
      const settled = Date.now() + 800;
      await until(() => Date.now() > settled, 'the grace period passed', 2000);
      const rows = await versionRows(b.services, id);
      assert.equal(rows.length, before + 1, JSON.stringify(rows));
      assert.equal(rows[0]!.author_label, 'Bob Stone');
      const stored = await a.services.deps.db
        .selectFrom('artifacts')
        .select('content')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.content, '# Shared\n\nFirst.\n\nOnce: Second.\n');
    });

    it('lets a second instance read an edit the first holds and has not stored yet', async () => {
      const id = await create();
      const onA = editor(a.url, id, await token('bob@acme.test'));
      await onA.ready;
      blockTextIn(onA.doc, 'First.').insert(0, 'Unstored ');
      await until(
        async () => (await a.services.documents.store.currentMarkdown(id, null)).includes('Unstored'),
        'A has it',
      );
      // B has never loaded the document: it loads it, and takes in what A holds in memory.
      await b.services.documents.store.open(id);
      assert.ok((await b.services.documents.store.currentMarkdown(id, null)).includes('Unstored First.'));
    });

    it('loses no acknowledged edit when an instance is killed', async () => {
      const id = await create();
      const { child, url } = await spawnInstance({
        ...shared.location,
        redisUrl: REDIS_URL,
        prefix,
        documents: { peerGraceMs: 400 },
      } as InstanceSpec);
      try {
        const bobToken = await token('bob@acme.test');
        const onKilled = editor(wsUrl(url), id, bobToken);
        const watcher = editor(b.url, id, await token('ada@acme.test'));
        await Promise.all([onKilled.ready, watcher.ready]);
        blockTextIn(onKilled.doc, 'Second.').insert(0, 'Kept: ');
        await until(
          () => onKilled.acknowledged() && watcher.text().includes('Kept: Second.'),
          'acknowledged',
        );
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));

        // The surviving instance stores what the killed one had not.
        await until(
          async () => {
            const row = await b.services.deps.db
              .selectFrom('artifacts')
              .select('content')
              .where('id', '=', id)
              .executeTakeFirstOrThrow();
            return row.content?.includes('Kept: Second.') === true;
          },
          'the edit is stored',
          5000,
        );
        const fresh = await shared.open();
        await fresh.documents.store.open(id);
        const markdown = (await fresh.documents.read(ada(), { document_id: id })).markdown;
        assert.equal(markdown, '# Shared\n\nFirst.\n\nKept: Second.\n');
        assert.equal((await versionRows(fresh, id))[0]!.author_label, 'Bob Stone');

        // The editor reconnects through the surviving instance: nothing lost, nothing doubled.
        const back = editor(b.url, id, bobToken);
        await back.ready;
        assert.equal(back.text(), markdown);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    });
  },
);
