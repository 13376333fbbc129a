import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { approval, capability, lit, plan, ref, transform } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { shoot, waitFor } from './support/web-shots.ts';

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Europe/Berlin' };

for (const db of DATABASES) {
  describe(
    `approval cards say what approving writes, and decide anywhere (${db.name})`,
    { skip: SKIP_BROWSER },
    () => {
      let app: WebApp;
      let ada: BrowserContext;
      let counter = 0;

      before(async () => {
        app = await openWebApp(db);
        ada = await app.signedIn('ada@acme.test');
      });
      after(async () => {
        await app?.close();
      });

      const roadmap = () => acme(app.h).artifacts.roadmap as string;
      const privatePlan = () => acme(app.h).artifacts.plan as string;

      /**
       * A run of a new automation of Ada's waiting on its approval: `compose` fills a template, the
       * approval guards appending that text to a document, then `later` (a pure step after the
       * approval) fills another template from it that a message in the session carries, and `count`
       * one from the append's own output that another message carries. Returns the ids, the
       * approval and the appended text.
       */
      async function waitingRun(options: { document?: string; approvers?: string[] } = {}) {
        const actor = app.h.actor('ada@acme.test');
        const n = ++counter;
        const name = `Digest ${n}`;
        const text = `Digest line ${n}-${Date.now()}`;
        const draft = await app.h.services.automations.draft(actor, {
          plan_json: plan(
            name,
            [
              transform(
                'compose',
                'template',
                { n: lit(n) },
                { template: `Digest line {{n}}-${text.split('-')[1]}` },
              ),
              approval('ok', {
                message: lit(`Append digest ${n}?`),
                ...(options.approvers ? { approvers: options.approvers } : {}),
              }),
              capability(
                'append',
                'documents.append_to_document',
                { document_id: lit(options.document ?? roadmap()), content_markdown: ref('compose', 'text') },
                { title: 'Append the digest' },
              ),
              transform(
                'later',
                'template',
                { line: ref('compose', 'text') },
                { template: 'Appended “{{line}}”.' },
              ),
              capability('tell', 'conversations.post_message', { text: ref('later', 'text') }),
              transform(
                'count',
                'template',
                { chars: ref('append', 'written_chars') },
                { template: 'It added {{chars}} characters.' },
              ),
              capability('report', 'conversations.post_message', { text: ref('count', 'text') }),
            ],
            [
              { from: 'compose', to: 'ok' },
              { from: 'ok', to: 'append' },
              { from: 'append', to: 'later' },
              { from: 'later', to: 'tell' },
              { from: 'append', to: 'count' },
              { from: 'count', to: 'report' },
            ],
          ),
          ask: 'Append the digest once I approve it.',
        });
        const published = await app.h.services.automations.publish(actor, {
          flow_version_id: draft.flow_version_id,
          name,
          trigger: DAILY,
        });
        const { run_id: runId } = await app.h.services.automations.run(actor, {
          automation_id: published.automation_id,
        });
        let approvalId = '';
        await waitFor(async () => {
          const row = await app.h.services.deps.db
            .selectFrom('approvals')
            .select('id')
            .where('run_id', '=', runId)
            .executeTakeFirst();
          approvalId = row?.id ?? '';
          return approvalId !== '';
        });
        const session = await app.h.services.deps.db
          .selectFrom('automations')
          .select('session_id')
          .where('id', '=', published.automation_id)
          .executeTakeFirstOrThrow();
        return {
          name,
          text,
          runId,
          approvalId,
          automationId: published.automation_id,
          sessionId: session.session_id,
        };
      }

      type Waiting = Awaited<ReturnType<typeof waitingRun>>;

      /** The run ends and the document holds the digest exactly once. */
      async function landedOnce(w: Waiting, document = roadmap()) {
        const actor = app.h.actor('ada@acme.test');
        await waitFor(async () => {
          const read = await app.h.services.automations.read(actor, {
            automation_id: w.automationId,
            include_runs: true,
          });
          const status = read.runs?.find((r) => r.run_id === w.runId)?.status;
          return status === 'succeeded';
        });
        const doc = await app.h.services.documents.read(actor, { document_id: document });
        const markdown = doc.markdown;
        assert.equal(markdown.split(w.text).length - 1, 1, `the digest landed once: ${markdown}`);
      }

      const card = (page: Page, w: Waiting): Locator => page.locator(`#approval-${w.approvalId}`);

      it('shows the writes it guards, with the text an earlier step made and what is known only later', async () => {
        const w = await waitingRun();
        const page = await open(ada, app.url(`/sessions/${w.sessionId}#approval-${w.approvalId}`));
        const here = card(page, w);
        await here.getByRole('heading', { name: `Append digest ${counter}?` }).waitFor();
        // The link's card is the one focused.
        await waitFor(
          async () => (await page.evaluate(() => document.activeElement?.id)) === `approval-${w.approvalId}`,
        );
        const writes = here.getByRole('list', { name: 'Writes after approval' });
        const items = writes.locator(':scope > li');
        assert.equal(await items.count(), 3);
        const append = items.nth(0);
        assert.match(await append.innerText(), /Append to “Roadmap”/);
        assert.match(await append.innerText(), /Text to be added/);
        // The template's output, resolved from the step before the approval.
        assert.equal((await append.locator('pre').innerText()).trim(), w.text);
        // A pure step after the approval, worked out now with the engine's code: its text shows.
        const tell = items.nth(1);
        assert.match(await tell.innerText(), /Post a message in this automation’s session/);
        assert.equal((await tell.locator('pre').innerText()).trim(), `Appended “${w.text}”.`);
        assert.doesNotMatch(await tell.innerText(), /known only after the approval/);
        // One that needs the write's own output is named, with why.
        const report = items.nth(2);
        assert.match(
          await report.innerText(),
          /text is known only after the approval: it comes from step count, which needs the output of “Append the digest”, which runs after the approval/,
        );
        await shoot(page, 'approvals', `card-${db.name}`);
        const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
        const narrow = await open(phone, app.url(`/sessions/${w.sessionId}#approval-${w.approvalId}`));
        await card(narrow, w).getByRole('list', { name: 'Writes after approval' }).waitFor();
        assert.ok(
          await narrow.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          'no horizontal overflow at 390 px',
        );
        await shoot(narrow, 'approvals', `card-phone-${db.name}`);
        await narrow.close();
        // Decided from the session: the write lands once.
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Ada Lovelace').waitFor();
        await landedOnce(w);
        await page.close();
      });

      it('is decided on Home, under Waiting for you, and the write lands once', async () => {
        const w = await waitingRun();
        const home = await open(ada, app.url('/'));
        const waiting = home.getByRole('region', { name: 'Waiting for you' });
        const here = waiting.locator(`#approval-${w.approvalId}`);
        await here.getByRole('list', { name: 'Writes after approval' }).waitFor();
        await shoot(home, 'approvals', `home-${db.name}`);
        const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
        const narrow = await open(phone, app.url('/'));
        await card(narrow, w).waitFor();
        assert.ok(await narrow.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
        await shoot(narrow, 'approvals', `home-phone-${db.name}`);
        await narrow.close();
        await here.getByLabel('Note').fill('Looks right');
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Ada Lovelace').waitFor();
        assert.match(await here.innerText(), /“Looks right”/);
        await landedOnce(w);
        await home.close();
      });

      it('is decided on the run’s page, and the write lands once', async () => {
        const w = await waitingRun();
        const page = await open(ada, app.url(`/automations/${w.automationId}?run=${w.runId}`));
        const run = page.getByRole('region', { name: `Run ${w.runId}` });
        const here = run.locator(`#approval-${w.approvalId}`);
        await here.getByRole('list', { name: 'Writes after approval' }).waitFor();
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Ada Lovelace').waitFor();
        await landedOnce(w);
        await page.close();
      });

      it('is decided in Notifications, whose notice is a sentence, read once opened, counted in the menu', async () => {
        const w = await waitingRun();
        const page = await open(ada, app.url('/notifications'));
        const notice = page
          .getByRole('listitem')
          .filter({ hasText: `“${w.name}” is waiting for your approval` });
        const body = await notice.locator('.pre-line').innerText();
        assert.equal(body, `“${w.name}” is waiting for your approval: Append digest ${counter}?`);
        assert.doesNotMatch(body, /apr_|run_|\/api\/|tandem /);
        // The menu's link says how many are unread.
        const unread = await app.h.services.notifications.unread(app.h.actor('ada@acme.test'));
        assert.ok(unread > 0);
        await page.getByRole('link', { name: `Notifications, ${unread} unread` }).waitFor();
        await shoot(page, 'approvals', `notifications-${db.name}`);
        const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
        const narrow = await open(phone, app.url('/notifications'));
        await narrow.getByRole('list', { name: 'Writes after approval' }).first().waitFor();
        assert.ok(await narrow.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
        await shoot(narrow, 'approvals', `notifications-phone-${db.name}`);
        await narrow.close();

        // Another page (Home, which does not follow) shows the same card; this one decides first.
        const session = await open(ada, app.url('/'));
        const stale = card(session, w);
        await stale.getByRole('button', { name: 'Approve' }).waitFor();
        const here = notice.locator(`#approval-${w.approvalId}`);
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Ada Lovelace').waitFor();
        await landedOnce(w);
        // The one who comes second is told, and sees who decided.
        await stale.getByRole('button', { name: 'Reject' }).click();
        await stale.getByText('Approved by Ada Lovelace').waitFor();
        await stale.getByRole('alert').waitFor();
        await landedOnce(w);
        // Deciding it read the notice: the count went down.
        await page
          .getByRole('link', {
            name: unread - 1 > 0 ? `Notifications, ${unread - 1} unread` : 'Notifications',
          })
          .waitFor();
        await session.close();
        await page.close();
      });

      it('names no target the approver cannot open', async () => {
        // Dee decides, though she can open neither the automation nor the private plan.
        const w = await waitingRun({ document: privatePlan(), approvers: ['dee@acme.test'] });
        const dee = await app.signedIn('dee@acme.test');
        const home = await open(dee, app.url('/'));
        const here = card(home, w);
        const append = here
          .getByRole('list', { name: 'Writes after approval' })
          .locator(':scope > li')
          .first();
        await append.waitFor();
        assert.match(await append.innerText(), /Append to a document you can’t open/);
        assert.doesNotMatch(await here.innerText(), /Private plan/);
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Dee Null').waitFor();
        await landedOnce(w, privatePlan());
        // Someone the approval does not name finds nothing, whatever the link.
        const bob = await app.signedIn('bob@acme.test');
        const page = await bob.newPage();
        const answer = await page.goto(app.url(`/api/approvals/${w.approvalId}`));
        assert.equal(answer?.status(), 404);
        await page.close();
      });
    },
  );
}
