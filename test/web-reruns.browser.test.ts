import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { StepError } from '../src/errors.ts';
import {
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  STAND_IN_ISSUE,
  transform,
} from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Europe/Berlin' };
const SHOTS = process.env.TANDEM_SCREENSHOTS;

for (const db of DATABASES) {
  describe(
    `retrying and replaying a run from the automation page (${db.name})`,
    { skip: SKIP_BROWSER },
    () => {
      let app: WebApp;
      let ada: BrowserContext;
      /** Whether the stand-in issue tracker answers reads; it is down until a test brings it up. */
      let trackerUp = false;
      let counter = 0;

      before(async () => {
        app = await openWebApp(db, {
          connectorCalls: {
            'github.get_issue': async () => {
              if (!trackerUp) throw new StepError('the tracker is down', { retryable: true });
              return STAND_IN_ISSUE;
            },
          },
        });
        ada = await app.signedIn('ada@acme.test');
      });
      after(async () => {
        await app?.close();
      });

      /** Posts to the session (a write), then checks an issue (down at first), then words it. */
      async function failedRun() {
        trackerUp = false;
        const actor = app.h.actor('ada@acme.test');
        const name = `Filed ${++counter}`;
        const draft = await app.h.services.automations.draft(actor, {
          plan_json: plan(
            'Post then check',
            [
              postMessage('post', `Posted by ${name}`),
              capability('check', 'github.get_issue', { repo: lit('acme/app'), number: lit(7) }),
              transform('note', 'template', { t: ref('check', 'title') }, { template: 'Checked {{t}}' }),
            ],
            chain('post', 'check', 'note'),
          ),
          ask: 'Post, then check the issue.',
          write_approval: 'automatic',
        });
        const published = await app.h.services.automations.publish(actor, {
          flow_version_id: draft.flow_version_id,
          name,
          trigger: DAILY,
          scope: 'workspace',
        });
        const started = await app.h.services.automations.run(actor, {
          automation_id: published.automation_id,
        });
        return { ...published, name, runId: started.run_id };
      }

      const posts = async (sessionId: string, name: string) =>
        (await app.h.services.automations.session(app.h.actor('ada@acme.test'), sessionId)).messages.filter(
          (m) => m.body === `Posted by ${name}`,
        ).length;

      const runPanel = (page: Page) => page.getByRole('region', { name: /^Run run_/ });
      const step = (page: Page, id: string) =>
        page
          .getByRole('table', { name: 'Steps of this run' })
          .getByRole('row')
          .filter({ has: page.getByRole('rowheader', { name: id }) });

      async function shoot(page: Page, name: string) {
        if (!SHOTS) return;
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, `${name}-${db.name}.png`), fullPage: true });
      }

      it('retries from the failed step, saying what runs and that no write happens again', async () => {
        const a = await failedRun();
        const page = await open(ada, app.url(`/automations/${a.automation_id}?run=${a.runId}`));
        await runPanel(page).getByText('Failed', { exact: true }).first().waitFor();
        // What the failed step was given is shown with it.
        await step(page, 'check').getByText('Input', { exact: true }).click();
        assert.match(await step(page, 'check').innerText(), /"repo": "acme\/app",\s+"number": 7/);

        const again = page.getByRole('region', { name: 'Run it again' });
        const retry = again.getByRole('button', { name: 'Retry from the failed step' });
        const replay = again.getByRole('button', { name: 'Replay with the same input' });
        await retry.waitFor();
        assert.equal(
          await page.locator(`#${await retry.getAttribute('aria-describedby')}`).innerText(),
          'Runs version 1 again, from the failed step. Steps that run: check, note. No write happens again.',
        );
        assert.equal(
          await page.locator(`#${await replay.getAttribute('aria-describedby')}`).innerText(),
          'Runs version 1, the live one, with this run’s input. Writes that happen again: post (conversations.post_message).',
        );
        await shoot(page, 'rerun-failed');

        trackerUp = true;
        await retry.click();
        // The panel follows the new run, which names the run it repeats.
        await page.waitForURL((url) => !url.search.includes(a.runId));
        const panel = runPanel(page);
        await panel.getByText(/repeats/).waitFor();
        await step(page, 'note').getByText('Succeeded', { exact: true }).waitFor();
        assert.match(await panel.innerText(), /Succeeded · Retry/);
        assert.equal(await posts(a.session_id, a.name), 1, 'the post was not made again');

        // A run that succeeded can be replayed (every write again), not retried.
        const offered = page.getByRole('region', { name: 'Run it again' });
        await offered.getByText('Only a failed run can be retried; this one succeeded').waitFor();
        assert.equal(
          await offered.getByRole('button', { name: 'Retry from the failed step' }).isDisabled(),
          true,
        );
        await shoot(page, 'rerun-retried');
        await offered.getByRole('button', { name: 'Replay with the same input' }).click();
        await panel.getByText(/Succeeded · Replay/).waitFor();
        assert.equal(await posts(a.session_id, a.name), 2);
        await page.close();
      });

      it('offers nothing to someone who may not run the automation', async () => {
        const a = await failedRun();
        const bob = await app.signedIn('bob@acme.test', { width: 390, height: 844 });
        const page = await open(bob, app.url(`/automations/${a.automation_id}?run=${a.runId}`));
        await runPanel(page).getByText('Failed', { exact: true }).first().waitFor();
        assert.equal(await page.getByRole('region', { name: 'Run it again' }).count(), 0);
        await shoot(page, 'rerun-viewer-phone');
        await page.close();
      });
    },
  );
}
