import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import {
  githubStandIn,
  slackStandIn,
  smtpStandIn,
  type ServiceStandIn,
  type SmtpStandIn,
} from './support/connector-stand-ins.ts';
import { DATABASES } from './support/databases.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { shoot } from './support/web-shots.ts';

const GITHUB_TOKEN = 'ghp_settings_test_token';
const SLACK_TOKEN = 'xoxb-settings-test';
const SMTP_PASSWORD = 'smtp-secret-pw';

for (const db of DATABASES) {
  describe(`Settings inside the app (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;
    let ada: BrowserContext;
    let github: ServiceStandIn;
    let slack: ServiceStandIn;
    let smtp: SmtpStandIn;

    before(async () => {
      github = await githubStandIn(GITHUB_TOKEN);
      slack = await slackStandIn(SLACK_TOKEN);
      smtp = await smtpStandIn('robot@acme.test', SMTP_PASSWORD);
      app = await openWebApp(db, {}, undefined, {
        TANDEM_HTTP_ALLOW: [github.host, slack.host, `127.0.0.1:${smtp.port}`].join(','),
      });
      ada = await app.signedIn('ada@acme.test');
    });
    after(async () => {
      await app?.close();
      await Promise.allSettled([github?.close(), slack?.close(), smtp?.close()]);
    });

    const noOverflow = (page: Page) =>
      page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

    it('is a page of the app, with its menu, every section, and no overflow at 390 px', async () => {
      const page = await open(ada, app.url('/'));
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.waitForURL('**/settings');
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      assert.equal(await page.title(), 'Settings · Tandem');
      for (const name of ['Password', 'Connected apps', 'Access tokens', 'People', 'Agents', 'Connectors']) {
        await page.getByRole('region', { name }).waitFor();
      }
      const people = page.getByRole('region', { name: 'People' });
      await people.getByText('Bob Stone').waitFor();
      await page.getByRole('region', { name: 'Agents' }).getByText('@Builder').waitFor();
      // The menu is the app's: Home is one click away.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).waitFor();
      await shoot(page, 'settings', `admin-${db.name}`);
      const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
      const narrow = await open(phone, app.url('/settings'));
      await narrow
        .getByRole('region', { name: 'Connectors' })
        .getByRole('heading', { name: /GitHub/ })
        .waitFor();
      assert.ok(await noOverflow(narrow), 'no horizontal overflow at 390 px');
      await shoot(narrow, 'settings', `admin-phone-${db.name}`);
      await narrow.close();

      // Someone who is not an admin sees their own sections only, and the admin API refuses them.
      const bob = await app.signedIn('bob@acme.test');
      const theirs = await open(bob, app.url('/settings'));
      await theirs.getByRole('region', { name: 'Access tokens' }).waitFor();
      assert.equal(await theirs.getByRole('region', { name: 'Connectors' }).count(), 0);
      assert.equal(await theirs.getByRole('region', { name: 'People' }).count(), 0);
      const refused = await theirs.evaluate(async () => (await fetch('/api/settings/connectors')).status);
      assert.equal(refused, 403);
      await theirs.close();
      await page.close();
    });

    it('makes a named token shown once, says when it was last used, and asks before revoking it', async () => {
      const page = await open(ada, app.url('/settings'));
      const tokens = page.getByRole('region', { name: 'Access tokens' });
      await tokens.getByRole('button', { name: 'New token' }).click();
      const form = page.getByRole('form', { name: 'New token' });
      await form.getByLabel('Name').fill('Laptop scripts');
      await form.getByRole('checkbox', { name: /See your automations/ }).check();
      await form.getByLabel('Expires after').selectOption({ label: '7 days' });
      await form.getByRole('button', { name: 'Create token' }).click();
      const shown = tokens.getByLabel('Your new token');
      await shown.waitFor();
      const token = await shown.inputValue();
      assert.match(token, /^tdm_/);
      const row = tokens.getByRole('listitem').filter({ hasText: 'Laptop scripts' });
      await row.getByText('never used').waitFor();
      assert.match(await row.innerText(), /documents:read, automations:read/);
      await shoot(page, 'settings', `token-made-${db.name}`);

      // Used once: the list says so.
      const used = await fetch(app.url('/api/me'), { headers: { authorization: `Bearer ${token}` } });
      assert.equal(used.status, 200);
      await page.reload();
      await row.getByText(/last used/).waitFor();
      assert.equal(await tokens.getByLabel('Your new token').count(), 0, 'the token is shown once');

      // Revoke asks first; Cancel keeps it.
      await row.getByRole('button', { name: 'Revoke' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke Laptop scripts?' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(
        (await fetch(app.url('/api/me'), { headers: { authorization: `Bearer ${token}` } })).status,
        200,
      );
      await row.getByRole('button', { name: 'Revoke' }).click();
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await tokens.getByRole('status').filter({ hasText: 'Laptop scripts was revoked' }).waitFor();
      assert.equal(await tokens.getByRole('listitem').filter({ hasText: 'Laptop scripts' }).count(), 0);
      assert.equal(
        (await fetch(app.url('/api/me'), { headers: { authorization: `Bearer ${token}` } })).status,
        401,
      );

      // A bad name is one sentence, and nothing is made.
      await tokens.getByRole('button', { name: 'New token' }).click();
      await form.getByLabel('Name').fill('   ');
      await form.getByRole('button', { name: 'Create token' }).click();
      await form.getByRole('alert').filter({ hasText: 'name is required' }).waitFor();
      await page.close();
    });

    /** Fills a connector's fields, saves, tests it and returns the sentence it answered. */
    async function saveAndTest(page: Page, heading: RegExp, fields: Record<string, string>) {
      const connectors = page.getByRole('region', { name: 'Connectors' });
      const card = connectors
        .getByRole('article')
        .filter({ has: page.getByRole('heading', { name: heading }) });
      for (const [name, value] of Object.entries(fields)) {
        await card.getByLabel(new RegExp(`^${name}\\b`)).fill(value);
      }
      await card.getByRole('button', { name: 'Save' }).click();
      await card.getByRole('status').filter({ hasText: 'settings were saved' }).waitFor();
      await card.getByRole('button', { name: 'Test connection' }).click();
      const answer = card.getByRole('status').filter({ hasNotText: 'settings were saved' });
      await answer.waitFor();
      return { card, answer: await answer.innerText() };
    }

    it('tests GitHub, Slack and SMTP connections against the services, passing and failing, secrets write-only', async () => {
      const page = await open(ada, app.url('/settings'));
      let got = await saveAndTest(page, /^GitHub/, { api_url: github.url(), token: GITHUB_TOKEN });
      assert.equal(got.answer, 'GitHub answered: the token signs in as tandem-bot.');
      // The secret never comes back: the field is empty and says `set`.
      assert.equal(await got.card.getByLabel(/^token/).inputValue(), '');
      assert.match(await got.card.innerText(), /token \(required\)\s*· set/);
      const listed = await page.evaluate(async () =>
        JSON.stringify(await (await fetch('/api/settings/connectors')).json()),
      );
      assert.ok(!listed.includes(GITHUB_TOKEN), 'the API never returns a secret');
      got = await saveAndTest(page, /^GitHub/, { token: 'wrong-token' });
      assert.match(got.answer, /^The test failed: .*Bad credentials/);
      assert.ok(!got.answer.includes('wrong-token'));

      got = await saveAndTest(page, /^Slack/, { api_url: slack.url('/api/'), bot_token: SLACK_TOKEN });
      assert.equal(got.answer, 'Slack answered: the bot token signs in as tandem in Acme.');
      got = await saveAndTest(page, /^Slack/, { bot_token: 'xoxb-wrong' });
      assert.match(got.answer, /^The test failed: .*invalid_auth/);

      got = await saveAndTest(page, /^Email/, {
        smtp_url: `smtp://127.0.0.1:${smtp.port}`,
        from: 'Robot <robot@acme.test>',
        password: SMTP_PASSWORD,
      });
      assert.equal(got.answer, 'The SMTP server 127.0.0.1 accepted the login robot@acme.test.');
      assert.equal(smtp.mails.length, 0, 'a test sends nothing');
      got = await saveAndTest(page, /^Email/, { password: 'wrong' });
      assert.match(got.answer, /^The test failed: /);
      assert.ok(!got.answer.includes('wrong'), got.answer);
      await shoot(page, 'settings', `connectors-${db.name}`);

      // Disconnect asks first, then the connector reads as not connected.
      const card = got.card;
      await card.getByRole('button', { name: 'Disconnect' }).click();
      const dialog = page.getByRole('dialog', { name: 'Disconnect Email?' });
      await dialog.getByRole('button', { name: 'Disconnect' }).click();
      await card.getByText('Not connected').waitFor();
      await page.close();
    });
  });
}
