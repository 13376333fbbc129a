import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { mcpCall } from './support/oauth.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { shoot } from './support/web-shots.ts';

for (const db of DATABASES) {
  describe(`Activity in names (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;

    before(async () => {
      app = await openWebApp(db);
    });
    after(async () => {
      await app?.close();
    });

    it('names what each call touched and the token it came through, filters by it, and hides what is no longer open', async () => {
      const bob = app.h.actor('bob@acme.test');
      const ids = acme(app.h).artifacts;
      const laptop = await app.h.services.tokens.create(
        bob.personId,
        bob.workspaceId,
        ['documents:read'],
        3_600_000,
        'Laptop scripts',
      );
      const ci = await app.h.services.tokens.create(
        bob.personId,
        bob.workspaceId,
        ['documents:read'],
        3_600_000,
        'CI bot',
      );
      const read = async (token: string, documentId: string) => {
        const answer = await mcpCall(app.url('/').replace(/\/$/, ''), token, 'tools/call', {
          name: 'read_document',
          arguments: { document_id: documentId },
        });
        assert.equal(answer.status, 200, answer.text);
      };
      await read(laptop.token, ids.roadmap as string);
      await read(ci.token, ids.plan as string);
      // Bob could open the private plan when he read it; he no longer can.
      await app.h.services.deps.db
        .deleteFrom('artifact_roles')
        .where('artifact_id', '=', ids.plan as string)
        .where('person_id', '=', bob.personId)
        .execute();

      const context = await app.signedIn('bob@acme.test');
      const page = await open(context, app.url('/activity'));
      const rows = page.getByRole('table').getByRole('row');
      const roadmapRow = rows.filter({ hasText: 'via token “Laptop scripts”' });
      await roadmapRow.waitFor();
      assert.match(await roadmapRow.innerText(), /read document/);
      assert.equal(
        await roadmapRow.getByRole('link', { name: 'Roadmap' }).getAttribute('href'),
        `/documents/${ids.roadmap}`,
      );
      const planRow = rows.filter({ hasText: 'via token “CI bot”' });
      assert.match(await planRow.innerText(), /a document you can’t open/);
      const text = await page.locator('main').innerText();
      assert.ok(!text.includes('Private plan') && !text.includes(ids.plan as string), 'nothing of it shows');
      assert.ok(!/\b(doc|tok|aut)_[a-z0-9]{10,}/.test(text), `no bare ids: ${text}`);
      await shoot(page, 'activity', `${db.name}`);

      // The filter by app shows one token's calls only.
      await page.getByLabel('App').selectOption({ label: 'token “CI bot”' });
      await page.waitForURL(/via=token/);
      await rows.filter({ hasText: 'via token “CI bot”' }).waitFor();
      await rows.filter({ hasText: 'Laptop scripts' }).first().waitFor({ state: 'detached' });
      assert.equal(await rows.filter({ hasText: 'Laptop scripts' }).count(), 0);

      const phone = await app.signedIn('bob@acme.test', { width: 390, height: 844 });
      const narrow = await open(phone, app.url('/activity'));
      await narrow.getByText('via token “Laptop scripts”').waitFor();
      assert.ok(await narrow.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
      await shoot(narrow, 'activity', `phone-${db.name}`);
      await narrow.close();
      await page.close();
    });
  });
}
