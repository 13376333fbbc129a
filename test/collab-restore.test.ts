import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { leases } from '../src/domains/documents/lease.ts';
import { DATABASES } from './support/databases.ts';
import { openLive, until, type Editor } from './support/collab.ts';

const DOC = '# Plan\n\nIntro.\n\nStep one.\n\nStep two.\n';
const AGENT = '# Plan, rewritten\n\nEverything new.\n\nAnd more.\n';

type Json = Record<string, unknown>;

for (const db of DATABASES) {
  describe(`restoring a version while an agent writes, on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    let adaToken: string;
    let bobToken: string;

    before(async () => {
      live = await openLive(db);
      adaToken = await live.tokenFor('ada@acme.test');
      bobToken = await live.tokenFor('bob@acme.test');
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const read = async (id: string) => docs().read(ada(), { document_id: id });
    /** The server's live copy, without storing anything. */
    const serverText = async (id: string) => (await docs().store.currentMarkdown(id, null)) ?? '';
    const writers = (id: string) => leases(live.services().deps).writers(id);

    /** As the app does it: the JSON API, as Ada. */
    async function api(path: string, body: Json): Promise<{ status: number; body: Json }> {
      const response = await fetch(`${live.server.url}/api${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adaToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    }

    /** A document whose version named "Plan" holds DOC, and whose text has moved on since. */
    async function documentWithVersion(): Promise<{ id: string; versionId: string }> {
      const { document_id: id } = await docs().create(ada(), {
        title: 'Restored',
        scope: 'org',
        content_markdown: DOC,
      });
      const named = await api(`/documents/${id}/versions`, { label: 'Plan' });
      assert.equal(named.status, 201, JSON.stringify(named.body));
      await docs().edit(ada(), { document_id: id, mode: 'append', content_markdown: 'Later.\n' });
      return { id, versionId: named.body.version_id as string };
    }

    async function connected(id: string): Promise<Editor[]> {
      const editors = [live.editor(id, adaToken), live.editor(id, bobToken)];
      await Promise.all(editors.map((e) => e.ready));
      return editors;
    }

    async function converged(id: string, editors: Editor[]): Promise<string> {
      const stored = (await read(id)).markdown;
      await until(() => editors.every((e) => e.text() === stored), 'every editor shows the stored text');
      assert.equal(await serverText(id), stored);
      return stored;
    }

    it('waits for the agent write landing when it is asked for, then puts the version back whole', async () => {
      const { id, versionId } = await documentWithVersion();
      const editors = await connected(id);
      const { version } = await read(id);
      let restoring: Promise<{ status: number; body: Json }> | undefined;
      let settled = false;
      docs().hooks.beforeLanding = async () => {
        docs().hooks.beforeLanding = undefined;
        // The agent has resolved its target and is about to land: the restore is asked for now.
        restoring = api(`/documents/${id}/restore`, { version_id: versionId }).finally(
          () => (settled = true),
        );
        // It either lands now, or waits its turn behind this write.
        await until(() => settled || writers(id) > 1, 'the restore lands or waits its turn');
      };
      const wrote = (await docs().edit(ada(), {
        document_id: id,
        mode: 'replace_all',
        expected_version: version,
        content_markdown: AGENT,
      })) as { new_version: number };
      assert.ok(restoring, 'the restore was asked for during the write');
      const restored = await restoring;
      assert.equal(restored.status, 200, JSON.stringify(restored.body));

      const stored = await converged(id, editors);
      assert.ok([DOC, AGENT].includes(stored), `one whole text, not a mix:\n${stored}`);
      assert.equal(stored, DOC, 'the restore, asked for second, landed second');
      assert.ok((restored.body.new_version as number) > wrote.new_version);
      assert.equal(writers(id), 0, 'both let the lease go');
    });

    it('lets an agent write asked for while a restore waits go after it, each whole', async () => {
      const { id, versionId } = await documentWithVersion();
      const editors = await connected(id);
      // Another instance's writer holds the lease: the restore queues first, the agent's append next.
      const sql = live.services().deps.db;
      await sql
        .insertInto('doc_leases')
        .values({ artifact_id: id, holder: 'lease_elsewhere', expires_at: Date.now() + 60_000 })
        .execute();
      let settled = false;
      const restoring = api(`/documents/${id}/restore`, { version_id: versionId }).finally(
        () => (settled = true),
      );
      await until(() => settled || writers(id) === 1, 'the restore waits for the lease');
      assert.equal(settled, false, 'the restore waits while another writer holds the lease');
      const appending = docs().edit(ada(), {
        document_id: id,
        mode: 'append',
        content_markdown: 'Appended.\n',
      });
      await until(() => writers(id) === 2, 'the append queues behind the restore');
      assert.ok((await serverText(id)).endsWith('Later.\n'), 'nothing landed yet');

      await sql.deleteFrom('doc_leases').where('holder', '=', 'lease_elsewhere').execute();
      const [restored, appended] = await Promise.all([restoring, appending]);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      const { new_version: appendedVersion } = appended as { new_version: number };
      assert.ok(appendedVersion > (restored.body.new_version as number), 'the restore went first');
      assert.equal(await converged(id, editors), `${DOC}Appended.\n`);
    });
  });
}
