import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { comment, repliesBy, threadOf } from './support/agents.ts';
import { DATABASES } from './support/databases.ts';
import { errorReply, startModelServer, textReply, type ModelServer } from './support/model-server.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { waitFor } from './support/web-shots.ts';

/** The section alone, when screenshots are asked for (`TANDEM_SCREENSHOTS=dir`). */
async function shoot(part: Locator, name: string) {
  const dir = process.env.TANDEM_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await part.screenshot({ path: join(dir, `settings-model-${name}.png`) });
}

const KEY = 'sk-workspace-model-key-1234';

for (const db of DATABASES) {
  describe(`Settings: the assistant's model (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;
    let ada: BrowserContext;
    let model: ModelServer;

    before(async () => {
      model = await startModelServer();
      // No model in the server's environment: the workspace's own is the only one.
      app = await openWebApp(db, {}, undefined, { TANDEM_HTTP_ALLOW: new URL(model.url).host });
      ada = await app.signedIn('ada@acme.test');
    });
    after(async () => {
      await app?.close();
      await model?.close();
    });

    const noOverflow = (page: Page) =>
      page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

    it('an admin connects a model; the assistant answers through it at once, and the key shows only as set', async () => {
      const page = await open(ada, app.url('/settings'));
      const section = page.getByRole('region', { name: 'Assistant model' });
      await section.getByText('Not connected').waitFor();
      const form = section.getByRole('form', { name: 'Assistant model settings' });
      await form.getByLabel('Endpoint URL').fill(model.url);
      await form.getByLabel('Model (required)').fill('test-model');
      await form.getByLabel(/API key/).fill(KEY);
      await form.getByRole('button', { name: 'Save' }).click();
      await section.getByRole('status').filter({ hasText: 'The model was saved' }).waitFor();
      await section.getByText('Connected in this workspace').waitFor();
      await form.getByText('· set').waitFor();
      assert.equal(await form.getByLabel(/API key/).inputValue(), '', 'the key is not put back in the form');
      assert.doesNotMatch(await page.content(), new RegExp(KEY));
      // The API never gives the key back, only `set`.
      const shown = await page.evaluate(async () => (await fetch('/api/settings/model')).text());
      assert.doesNotMatch(shown, new RegExp(KEY));
      assert.equal((JSON.parse(shown) as { key: string }).key, 'set');
      assert.equal((JSON.parse(shown) as { source: string }).source, 'workspace');
      // Sealed at rest.
      const row = await app.h.services.deps.db
        .selectFrom('workspace_models')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.doesNotMatch(JSON.stringify(row), new RegExp(KEY));

      // Test connection: a passing answer, then a failing one, each in one sentence.
      model.replies.push(() => textReply('OK'));
      await form.getByRole('button', { name: 'Test connection' }).click();
      await section.getByRole('status').filter({ hasText: 'test-model at 127.0.0.1' }).waitFor();
      assert.equal(model.headers.at(-1)?.authorization, `Bearer ${KEY}`);
      await shoot(section, `connected-1280-${db.name}`);
      model.replies.push(() => errorReply(401, 'Incorrect API key provided'));
      await form.getByRole('button', { name: 'Test connection' }).click();
      const failed = section.getByRole('status').filter({ hasText: 'The test failed' });
      await failed.waitFor();
      assert.match(await failed.innerText(), /Incorrect API key/);
      assert.doesNotMatch(await failed.innerText(), new RegExp(KEY));

      // The assistant answers through the workspace's model, with no restart.
      model.replies.push(() => textReply('The roadmap asks the team to ship in May.'));
      const caller = await app.h.as('ada@acme.test');
      const roadmap = app.h.ids.Acme!.artifacts.roadmap!;
      const asked = await comment(caller, roadmap, '@Assistant what does this ask for?');
      let replies: { body: string }[] = [];
      await waitFor(async () => {
        replies = repliesBy(await threadOf(caller, roadmap, asked.thread_id), 'Assistant');
        return replies.length > 0;
      }, 'the assistant’s reply');
      assert.equal(replies[0]!.body, 'The roadmap asks the team to ship in May.');
      assert.equal(model.headers.at(-1)?.authorization, `Bearer ${KEY}`);

      // At 390 px the section fits.
      const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
      const narrow = await open(phone, app.url('/settings'));
      const small = narrow.getByRole('region', { name: 'Assistant model' });
      await small.getByText('Connected in this workspace').waitFor();
      await small.scrollIntoViewIfNeeded();
      assert.ok(await noOverflow(narrow), 'no horizontal overflow at 390 px');
      await shoot(small, `connected-390-${db.name}`);
      await narrow.close();
      await page.close();
    });

    it('a member sees their own sections, makes a token, sees no model section, and the API refuses them the model', async () => {
      const bob = await app.signedIn('bob@acme.test');
      const page = await open(bob, app.url('/settings'));
      // What the contract gives a member: their password, apps and tokens, nothing of the admins'.
      for (const name of ['Password', 'Connected apps', 'Access tokens'])
        await page.getByRole('region', { name }).waitFor();
      for (const name of ['People', 'Agents', 'Connectors', 'Assistant model'])
        assert.equal(await page.getByRole('region', { name }).count(), 0, `${name} is for admins`);
      const tokens = page.getByRole('region', { name: 'Access tokens' });
      await tokens.getByRole('button', { name: 'New token' }).click();
      const made = page.getByRole('form', { name: 'New token' });
      await made.getByLabel('Name').fill('Bob’s scripts');
      await made.getByRole('button', { name: 'Create token' }).click();
      await tokens.getByLabel('Your new token').waitFor();
      await tokens
        .getByRole('listitem')
        .filter({ hasText: 'Bob’s scripts' })
        .getByText('never used')
        .waitFor();
      const statuses = await page.evaluate(async (url) => {
        const put = await fetch('/api/settings/model', {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url, model: 'mine', key: 'sk-bob' }),
        });
        const get = await fetch('/api/settings/model');
        const test = await fetch('/api/settings/model/test', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        const del = await fetch('/api/settings/model', { method: 'DELETE' });
        return [get.status, put.status, test.status, del.status];
      }, model.url);
      assert.deepEqual(statuses, [403, 403, 403, 403]);
      const row = await app.h.services.deps.db
        .selectFrom('workspace_models')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(row.model, 'test-model', 'unchanged');
      await page.close();
    });

    it('refuses an inside address not on the allow list, and Disconnect asks, then the assistant is not set up', async () => {
      const page = await open(ada, app.url('/settings'));
      const section = page.getByRole('region', { name: 'Assistant model' });
      const form = section.getByRole('form', { name: 'Assistant model settings' });
      await section.getByText('Connected in this workspace').waitFor();
      await form.getByLabel('Endpoint URL').fill('http://10.1.2.3/v1');
      await form.getByRole('button', { name: 'Save' }).click();
      await section.getByText(/10\.1\.2\.3 is .*not on the allow list|not on the allow list/).waitFor();
      const row = await app.h.services.deps.db
        .selectFrom('workspace_models')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(row.url, model.url, 'nothing changed');

      await form.getByRole('button', { name: 'Disconnect' }).click();
      const dialog = page.getByRole('dialog', { name: 'Disconnect the assistant’s model?' });
      await dialog.getByRole('button', { name: 'Disconnect' }).click();
      await section.getByRole('status').filter({ hasText: 'not set up yet' }).waitFor();
      await section.getByText('Not connected').waitFor();
      const before = model.requests.length;
      const caller = await app.h.as('ada@acme.test');
      const roadmap = app.h.ids.Acme!.artifacts.roadmap!;
      const asked = await comment(caller, roadmap, '@Assistant are you there?');
      let replies: { body: string }[] = [];
      await waitFor(async () => {
        replies = repliesBy(await threadOf(caller, roadmap, asked.thread_id), 'Assistant');
        return replies.length > 0;
      }, 'the assistant’s reply');
      assert.equal(
        replies[0]!.body,
        "The assistant isn't set up in this workspace yet; an admin can connect a model in Settings.",
      );
      assert.equal(model.requests.length, before);
      await page.close();
    });
  });
}
