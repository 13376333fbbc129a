import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as Y from 'yjs';
import { blockArray } from '../src/domains/documents/model.ts';
import type { Services } from '../src/services.ts';
import { DATABASES } from './support/databases.ts';
import { editOn, instancesOn } from './support/instances.ts';

/** Appends `text` to the document's last block, as a person typing at its end. */
const typeAtEnd = (text: string) => (doc: Y.Doc) => {
  const blocks = blockArray(doc);
  const last = blocks.get(blocks.length - 1).get('text') as Y.Text;
  last.insert(last.length, text);
};

for (const db of DATABASES) {
  describe(`stored live edits on ${db.name}`, () => {
    let instances: Awaited<ReturnType<typeof instancesOn>>;
    before(async () => {
      instances = await instancesOn(db);
    });
    after(() => instances.close());

    const ada = () => instances.actor('ada@acme.test');
    const bob = () => instances.actor('bob@acme.test');

    async function newDocument(services: Services, content: string): Promise<string> {
      const made = await services.documents.create(ada(), {
        title: 'Shared',
        scope: 'org',
        content_markdown: content,
      });
      return made.document_id;
    }

    /** What `read_document` gives on an instance, with the document loaded from what is stored. */
    async function markdownOf(services: Services, id: string): Promise<string> {
      await services.documents.store.open(id);
      return (await services.documents.read(ada(), { document_id: id })).markdown;
    }

    it('keeps an edit another instance stored while this one stored its own and folded the log', async () => {
      const first = await instances.open();
      const second = await instances.open();
      const id = await newDocument(first, '# Notes\n');
      // The second instance stores enough edits that the first folds its log soon after loading.
      for (let i = 0; i < 45; i++) {
        await editOn(second, bob(), id, typeAtEnd(` b${i}`));
        await second.documents.store.flush(id);
      }
      await markdownOf(first, id);
      // Stored by the second instance after the first last looked.
      await editOn(second, bob(), id, typeAtEnd(' kept'));
      await second.documents.store.flush(id);
      // The first stores edits of its own until it folds its log into a snapshot.
      for (let i = 0; i < 5; i++) {
        await editOn(first, ada(), id, typeAtEnd(` a${i}`));
        await first.documents.store.flush(id);
      }

      const third = await instances.open();
      for (const services of [first, second, third]) {
        const markdown = await markdownOf(services, id);
        // The edit made after the first instance last looked is there once, with all the others.
        for (const word of [' b0', ' b44', ' kept', ' a0', ' a4']) {
          assert.equal(markdown.split(word).length, 2, `${JSON.stringify(word)} once in ${markdown}`);
        }
      }
    });

    it('stores a person’s edit whose first store failed, with the next store', async () => {
      const services = await instances.open();
      const id = await newDocument(services, '# Plan\n\nStep.\n');
      // A person's edit lands while an agent write is on its way, and the write's store fails.
      services.documents.hooks.beforeLanding = async () => {
        services.documents.hooks.beforeLanding = undefined;
        await editOn(services, bob(), id, (doc) => {
          const text = blockArray(doc).get(1).get('text') as Y.Text;
          text.insert('Step'.length, ' by Bob');
        });
      };
      await assert.rejects(
        services.documents.edit(
          ada(),
          { document_id: id, mode: 'append', content_markdown: 'More.\n' },
          {
            within: () => {
              throw new Error('the write’s own record could not be stored');
            },
          },
        ),
        /could not be stored/,
      );
      await services.documents.store.flush(id);

      const fresh = await instances.open();
      const markdown = await markdownOf(fresh, id);
      assert.ok(markdown.includes('Step by Bob.'), markdown);
    });
  });
}
