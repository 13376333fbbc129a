import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { notify } from '../src/domains/activity/notify.ts';
import { StepError } from '../src/errors.ts';
import { approval, capability, chain, lit, plan, postMessage } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { mainText, open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Europe/Berlin' };
const SHOTS = process.env.TANDEM_SCREENSHOTS;

for (const db of DATABASES) {
  describe(
    `automation notifications link to the automation and run (${db.name})`,
    { skip: SKIP_BROWSER },
    () => {
      let app: WebApp;
      let ada: BrowserContext;
      let counter = 0;

      before(async () => {
        app = await openWebApp(db, {
          connectorCalls: {
            'github.get_issue': async () => {
              throw new StepError('the tracker is down', { retryable: false });
            },
          },
        });
        ada = await app.signedIn('ada@acme.test');
      });
      after(async () => {
        await app?.close();
      });

      async function shoot(page: Page, name: string) {
        if (!SHOTS) return;
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, `${name}-${db.name}.png`), fullPage: true });
      }

      const waitFor = async (check: () => Promise<boolean>) => {
        const until = Date.now() + 15_000;
        while (!(await check())) {
          if (Date.now() > until) throw new Error('timed out waiting for the run engine');
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      };

      /** A run of a new automation of `email`'s that failed, with its notice as `finishRun` writes it. */
      async function failedRun(email = 'ada@acme.test') {
        const actor = app.h.actor(email);
        const name = `Issue check ${++counter}`;
        const draft = await app.h.services.automations.draft(actor, {
          plan_json: plan('Check the issue', [
            capability('check', 'github.get_issue', { repo: lit('acme/app'), number: lit(7) }),
          ]),
          ask: 'Check the issue.',
        });
        const published = await app.h.services.automations.publish(actor, {
          flow_version_id: draft.flow_version_id,
          name,
          trigger: DAILY,
          // The engine's own notice is the one below, written with the ids it will pass.
        });
        const { run_id: runId } = await app.h.services.automations.run(actor, {
          automation_id: published.automation_id,
        });
        await waitFor(async () => {
          const read = await app.h.services.automations.read(actor, {
            automation_id: published.automation_id,
            include_runs: true,
          });
          return read.runs?.find((r) => r.run_id === runId)?.status === 'failed';
        });
        await waitFor(async () =>
          (await app.h.services.notifications.list(actor)).some((n) => n.run_id === runId),
        );
        const notice = (await app.h.services.notifications.list(actor)).find((n) => n.run_id === runId);
        assert.ok(notice, 'the engine wrote the notice with the run');
        assert.equal(notice.automation_id, published.automation_id);
        const body = notice.body;
        // A sentence a person reads: the automation by name and what went wrong, no ids.
        assert.equal(body, `“${name}” failed: check: the tracker is down`);
        return { automationId: published.automation_id, runId, name, body };
      }

      it('opens a failed run from its notification, on Notifications and on Home', async () => {
        const failed = await failedRun();
        // Home shows the unread notice as a link to the run.
        const home = await open(ada, app.url('/'));
        const unread = home.getByRole('region', { name: 'Unread notifications' });
        const link = unread.getByRole('link', { name: failed.body });
        assert.equal(
          await link.getAttribute('href'),
          `/automations/${failed.automationId}?run=${failed.runId}`,
        );
        await shoot(home, 'home-notifications');

        const page = await open(ada, app.url('/notifications'));
        const card = page.getByRole('listitem').filter({ hasText: failed.body });
        const toRun = card.getByRole('link', { name: 'Open the run' });
        assert.equal(
          await toRun.getAttribute('href'),
          `/automations/${failed.automationId}?run=${failed.runId}`,
        );
        assert.equal(
          await card.getByRole('link', { name: 'Open the automation' }).getAttribute('href'),
          `/automations/${failed.automationId}`,
        );
        await shoot(page, 'notifications');
        await toRun.click();
        await page.waitForURL(`**/automations/${failed.automationId}?run=${failed.runId}`);
        const panel = page.getByRole('region', { name: `Run ${failed.runId}` });
        await panel.getByText('Failed', { exact: true }).first().waitFor();
        assert.match(await panel.innerText(), /the tracker is down/);
        assert.equal(await page.title(), `${failed.name} · Automations · Tandem`);

        // Opening it read it: Home, once loaded, no longer lists it as unread.
        const again = await open(ada, app.url('/'));
        const stillUnread = again.getByRole('region', { name: 'Unread notifications' });
        await stillUnread.getByText('Loading notifications…').waitFor({ state: 'detached' });
        assert.equal(await stillUnread.getByRole('link', { name: failed.body }).count(), 0);
        await again.close();
        await link.click();
        await home.getByRole('region', { name: `Run ${failed.runId}` }).waitFor();
        await page.close();
        await home.close();
        if (SHOTS) {
          const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
          for (const [path, name] of [
            ['/notifications', 'notifications-phone'],
            ['/', 'home-notifications-phone'],
          ] as const) {
            const narrow = await open(phone, app.url(path));
            // Opened above, it is read: Home no longer lists it.
            if (path === '/notifications') await narrow.getByText(failed.body).first().waitFor();
            await shoot(narrow, name);
            await narrow.close();
          }
        }
      });

      it('links an approval’s notice, which the engine writes, to the waiting run', async () => {
        const actor = app.h.actor('ada@acme.test');
        const name = `Guarded ${++counter}`;
        const draft = await app.h.services.automations.draft(actor, {
          plan_json: plan(
            'Guarded post',
            [approval('ok', { message: lit('Post it?') }), postMessage('post', 'Posted.')],
            chain('ok', 'post'),
          ),
          ask: 'Post once I approve it.',
        });
        const published = await app.h.services.automations.publish(actor, {
          flow_version_id: draft.flow_version_id,
          name,
          trigger: DAILY,
        });
        const { run_id: runId } = await app.h.services.automations.run(actor, {
          automation_id: published.automation_id,
        });
        await waitFor(async () =>
          (await app.h.services.notifications.list(actor)).some((n) =>
            n.body.startsWith(`“${name}” is waiting for your approval`),
          ),
        );
        const page = await open(ada, app.url('/notifications'));
        const card = page.getByRole('listitem').filter({ hasText: `“${name}” is waiting for your approval` });
        await card.getByRole('link', { name: 'Open the run' }).click();
        await page.waitForURL(`**/automations/${published.automation_id}?run=${runId}`);
        await page.getByRole('region', { name: `Run ${runId}` }).waitFor();
        await page.close();
      });

      it('leads someone who can no longer open the automation to the not-found page, which names nothing', async () => {
        // Bob's personal automation failed; Dee (no admin) was told of it but cannot open it.
        const failed = await failedRun('bob@acme.test');
        const dee = app.h.actor('dee@acme.test');
        await notify(app.h.services.deps.db, {
          workspaceId: dee.workspaceId,
          personId: dee.personId,
          kind: 'automation',
          body: 'A run failed.',
          automationId: failed.automationId,
          runId: failed.runId,
        });
        const context = await app.signedIn('dee@acme.test');
        const page = await open(context, app.url('/notifications'));
        await page
          .getByRole('listitem')
          .filter({ hasText: 'A run failed.' })
          .getByRole('link', { name: 'Open the run' })
          .click();
        await page.getByRole('heading', { level: 1, name: 'Automation not found' }).waitFor();
        const text = await mainText(page);
        assert.ok(!text.includes(failed.name) && !text.includes(failed.runId), text);
        assert.equal(await page.title(), 'Automation not found · Tandem');
        await page.close();
      });
    },
  );
}
