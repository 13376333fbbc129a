import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';

for (const db of DATABASES) {
  describe(`harness on ${db.name}`, () => {
    let h: Harness;
    before(async () => {
      h = await setup(db);
    });
    after(() => h.close());

    it('reads a fixture page through a real MCP client', async () => {
      const ada = await h.as('ada@acme.test');
      const r = await ada.call('read_page', { page_id: acme(h).artifacts.landing });
      assert.equal(r.isError, false);
      assert.equal(r.structured?.version, 1);
    });
  });
}
