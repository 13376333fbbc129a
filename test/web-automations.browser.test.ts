import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { schedulePreview } from '../src/flowplan/schedule-preview.ts';
import type { Trigger } from '../src/flowplan/triggers.ts';
import {
  approval,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  type Json,
} from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { ok } from './support/results.ts';
import { mainText, open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/** Reads the roadmap, asks for approval, then posts what it read to the session. */
const digestPlan = (roadmap: string): Json =>
  plan(
    'Digest',
    [
      capability('read', 'documents.read_document', { document_id: lit(roadmap) }),
      approval('ok', { message: lit('Post the digest?') }),
      postMessage('post', ref('read', 'markdown')),
    ],
    chain('read', 'ok', 'post'),
  );

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Europe/Berlin' };
/** Where to write screenshots of the pages, when set. */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

for (const db of DATABASES) {
  describe(`the automations pages in a browser (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;
    let ada: BrowserContext;
    let counter = 0;

    /** A new automation of Ada's (or of `email`), published with the digest plan. */
    async function publish(email = 'ada@acme.test', name = `Digest ${++counter}`) {
      const actor = app.h.actor(email);
      const draft = await app.h.services.automations.draft(actor, {
        plan_json: digestPlan(acme(app.h).artifacts.roadmap!),
        ask: 'Post the roadmap to the session once I approve it.',
      });
      return app.h.services.automations.publish(actor, {
        flow_version_id: draft.flow_version_id,
        name,
        trigger: DAILY,
      });
    }

    const automationPage = (id: string) => open(ada, app.url(`/automations/${id}`));

    /** A screenshot of the page (or of one part of it) for a person to look at, when asked for. */
    async function shot(page: Page, name: string, part?: ReturnType<Page['getByRole']>) {
      if (!SHOTS) return;
      mkdirSync(SHOTS, { recursive: true });
      const path = join(SHOTS, `${name}-${db.name}.png`);
      if (part) await part.screenshot({ path });
      else await page.screenshot({ path, fullPage: true });
    }

    before(async () => {
      app = await openWebApp(db);
      ada = await app.signedIn('ada@acme.test');
    });
    after(async () => {
      await app?.close();
    });

    it('lists automations in a table with their trigger, state, next and last run, and failures', async () => {
      const published = await publish('ada@acme.test', 'Morning digest');
      const page = await open(ada, app.url('/automations'));
      assert.equal(await page.title(), 'Automations · Tandem');
      // The automations' table, not the drafts' one the page may show too.
      const table = page.getByRole('table', { name: 'Automations', exact: true });
      // The table comes with the page's data: wait for it before reading its headers.
      await table.getByRole('columnheader').first().waitFor();
      const headers = await table.getByRole('columnheader').allInnerTexts();
      assert.deepEqual(
        headers.map((h) => h.toLowerCase()),
        ['name', 'trigger', 'state', 'next run', 'last run', 'failures'],
      );
      const row = table.getByRole('row').filter({ hasText: 'Morning digest' });
      assert.match(await row.innerText(), /daily at 09:00 \(Europe\/Berlin\)/);
      assert.match(await row.innerText(), /Enabled/);
      await row.getByRole('link', { name: 'Morning digest' }).click();
      await page.waitForURL(`**/automations/${published.automation_id}`);
      await page.getByRole('heading', { level: 1, name: 'Morning digest' }).waitFor();
      assert.equal(await page.title(), 'Morning digest · Automations · Tandem');
      await page.close();
    });

    it('shows the trigger in words with its next five runs in its zone, and what clock changes do', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const trigger = page.getByRole('region', { name: 'Trigger' });
      assert.match(await trigger.innerText(), /Runs daily at 09:00 \(Europe\/Berlin\)/);
      const firings = await trigger.getByRole('listitem').allInnerTexts();
      assert.equal(firings.length, 5);
      for (const f of firings) assert.match(f, /\d{4}-\d\d-\d\d 09:00 Europe\/Berlin \(UTC\+0[12]:00\)/);
      assert.match(await trigger.innerText(), /clocks go forward/);
      await page.close();
    });

    it('pauses and resumes an automation', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      await page.getByRole('button', { name: 'Pause' }).click();
      await page.getByRole('button', { name: 'Resume' }).waitFor();
      assert.match(await mainText(page), /State Paused/);
      assert.equal(await page.getByRole('button', { name: 'Run now' }).isDisabled(), true);
      let row = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(row.enabled, false);

      await page.getByRole('button', { name: 'Resume' }).click();
      await page.getByRole('button', { name: 'Pause' }).waitFor();
      assert.match(await mainText(page), /State Enabled/);
      row = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(row.enabled, true);
      await page.close();
    });

    it('dry-runs an automation and shows each step’s status, attempts and output', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      await page.getByRole('button', { name: 'Dry run' }).click();
      const steps = page.getByRole('table', { name: 'Steps of this run' });
      await steps.waitFor();
      const run = page.getByRole('region', { name: /^Run run_/ });
      const step = (id: string) =>
        steps.getByRole('row').filter({ has: page.getByRole('rowheader', { name: id }) });
      const statusOf = async (id: string) => (await step(id).innerText()).replace(/\s+/g, ' ');
      // The last step ends the run; the page follows it until then.
      await step('post').getByText('Simulated', { exact: true }).waitFor();
      // The read runs, the approval and the write are simulated: nothing is sent.
      assert.match(await statusOf('read'), /capability Succeeded 1/);
      assert.match(await statusOf('ok'), /approval Simulated 1/);
      assert.match(await statusOf('post'), /capability Simulated 1/);
      assert.match(await run.innerText(), /Dry run \(writes simulated\)/);
      // The run is listed, and the session got no message from the simulated write.
      const runs = page.getByRole('table', { name: 'Runs, newest first' });
      assert.match(await runs.innerText(), /Dry run/);
      const session = await app.h.services.automations.session(
        app.h.actor('ada@acme.test'),
        published.session_id,
      );
      assert.ok(!session.messages.some((m) => m.body.includes('Ship it')), 'the write was not sent');
      await page.close();
    });

    it('edits the trigger and publishes it', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      await editor.getByLabel('Frequency').selectOption('weekly');
      await editor.getByLabel('Weekday').selectOption('Friday');
      await editor.getByLabel('Hour').fill('17');
      await editor.getByLabel('Minute').fill('30');
      await editor.getByLabel('Time zone').fill('America/New_York');
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('status').filter({ hasText: 'new trigger' }).waitFor();
      const trigger = page.getByRole('region', { name: 'Trigger' });
      await trigger.getByText('Runs every Friday at 17:30 (America/New_York).').waitFor();
      const detail = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.deepEqual(detail.trigger, {
        kind: 'schedule',
        frequency: 'weekly',
        weekday: 5,
        hour: 17,
        minute: 30,
        timezone: 'America/New_York',
      });
      assert.equal(detail.version, 1, 'a trigger change keeps the plan version');
      await page.close();
    });

    it('previews the edited trigger before Publish: its words and next five runs in its zone', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      const preview = editor.getByRole('region', { name: 'Preview' });
      await preview.getByText('Unchanged: it runs daily at 09:00 (Europe/Berlin).').waitFor();

      await editor.getByLabel('Hour').fill('17');
      await editor.getByLabel('Time zone').fill('America/New_York');
      await preview.getByText('Once published, it runs daily at 17:00 (America/New_York).').waitFor();
      const firings = await preview.getByRole('listitem').allInnerTexts();
      // The same five instants the domain gives for that trigger (the one rule, in one place).
      const expected = schedulePreview(
        { ...DAILY, hour: 17, timezone: 'America/New_York' } as Trigger,
        new Date(),
      ).next;
      assert.equal(firings.length, 5);
      firings.forEach((f, i) => {
        assert.match(f, /^\d{4}-\d\d-\d\d 17:00 America\/New_York \(UTC-0[45]:00\)/);
        assert.ok(f.startsWith(`${expected[i]?.local} America/New_York (${expected[i]?.offset})`), f);
      });
      assert.match(await preview.innerText(), /clocks go forward/);
      await shot(page, 'trigger-preview', editor);

      // Nothing is published yet: the live trigger is as it was.
      const trigger = page.getByRole('region', { name: 'Trigger' });
      assert.match(await trigger.innerText(), /Runs daily at 09:00 \(Europe\/Berlin\)\./);
      const before = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal((before.trigger as { hour?: number }).hour, 9);

      await editor.getByRole('button', { name: 'Publish' }).click();
      await trigger.getByText('Runs daily at 17:00 (America/New_York).').waitFor();
      assert.deepEqual(await trigger.getByRole('listitem').allInnerTexts(), firings);
      await preview.getByText('Unchanged: it runs daily at 17:00 (America/New_York).').waitFor();
      await page.close();
    });

    it('says what is wrong with an edited trigger before Publish, and Publish then publishes nothing', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      const preview = editor.getByRole('region', { name: 'Preview' });
      // A plan edit too: a refused trigger must not leave a draft of it behind.
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      const planBox = editor.getByLabel('Plan (JSON)');
      const edited = JSON.parse(await planBox.inputValue()) as { nodes: Json[]; edges: Json[] };
      edited.nodes.push({ id: 'done', kind: 'notify', message: lit('Posted.') });
      edited.edges.push({ from: 'post', to: 'done' });
      await planBox.fill(JSON.stringify(edited, null, 2));
      await editor.getByLabel('Time zone').fill('Mars/Olympus_Mons');
      const problem =
        'trigger.timezone "Mars/Olympus_Mons" is not an IANA time zone; use a name such as Europe/Berlin or UTC.';
      await preview.getByText(`This trigger cannot be published: ${problem}`).waitFor();
      assert.equal(await preview.getByRole('listitem').count(), 0);
      await shot(page, 'trigger-preview-invalid', editor);

      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor
        .getByRole('alert')
        .filter({ hasText: `Nothing was published: ${problem}` })
        .waitFor();
      await shot(page, 'trigger-preview-refused', editor);
      const detail = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(detail.version, 1, 'no version was published');
      assert.deepEqual(detail.trigger, DAILY, 'the trigger did not change');
      const versions = await app.h.services.automationViews.versions(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(versions.versions.length, 1, 'no draft was stored');

      // Mending the zone mends the preview.
      await editor.getByLabel('Time zone').fill('Europe/Paris');
      await preview.getByText('Once published, it runs daily at 09:00 (Europe/Paris).').waitFor();
      // From the keyboard too: the arrow keys step the hour, and the preview follows.
      await editor.getByLabel('Hour').focus();
      await page.keyboard.press('ArrowUp');
      await preview.getByText('Once published, it runs daily at 10:00 (Europe/Paris).').waitFor();
      await page.close();
    });

    it('lays out the preview at phone width', { skip: !SHOTS }, async () => {
      const published = await publish();
      const phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
      const page = await open(phone, app.url(`/automations/${published.automation_id}`));
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      await editor.getByLabel('Frequency').selectOption('weekly');
      await editor.getByLabel('Weekday').selectOption('Friday');
      await editor.getByLabel('Time zone').fill('Australia/Sydney');
      await editor
        .getByRole('region', { name: 'Preview' })
        .getByText('Once published, it runs every Friday at 09:00 (Australia/Sydney).')
        .waitFor();
      await shot(page, 'trigger-preview-phone', editor.getByRole('group', { name: 'Schedule' }));
      await shot(page, 'trigger-preview-phone-preview', editor.getByRole('region', { name: 'Preview' }));
      await page.close();
    });

    it('publishes an edited plan as the next version, with what changed', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      const planBox = editor.getByLabel('Plan (JSON)');
      const edited = JSON.parse(await planBox.inputValue()) as { nodes: Json[]; edges: Json[] };
      edited.nodes.push({ id: 'done', kind: 'notify', message: lit('Posted.') });
      edited.edges.push({ from: 'post', to: 'done' });
      await planBox.fill(JSON.stringify(edited, null, 2));
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();
      const versions = page.getByRole('region', { name: 'Versions' });
      await versions.getByText('Added step done (notify)').waitFor();
      assert.match(await versions.innerText(), /Added edge post → done/);
      assert.match(await versions.innerText(), /Version 2\s*live/);
      await page.close();
    });

    it('says who made each version: an agent for the person, or the person', async () => {
      // An agent (an MCP client acting for Ada) drafts and publishes the first version.
      const agent = await app.h.as('ada@acme.test');
      const drafted = ok(
        await agent.call('draft_automation', {
          plan_json: digestPlan(acme(app.h).artifacts.roadmap!),
          ask: 'Post the roadmap to the session once I approve it.',
        }),
      );
      const published = ok(
        await agent.call('edit_automation', {
          action: 'publish',
          flow_version_id: drafted.flow_version_id,
          name: `Digest ${++counter}`,
          trigger: DAILY,
        }),
      );
      // Ada publishes the second in the app.
      const page = await automationPage(published.automation_id as string);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      const planBox = editor.getByLabel('Plan (JSON)');
      const edited = JSON.parse(await planBox.inputValue()) as { nodes: Json[]; edges: Json[] };
      edited.nodes.push({ id: 'done', kind: 'notify', message: lit('Posted.') });
      edited.edges.push({ from: 'post', to: 'done' });
      await planBox.fill(JSON.stringify(edited, null, 2));
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();
      const versions = page.getByRole('region', { name: 'Versions' });
      const version = (n: number) =>
        versions
          .getByRole('listitem')
          .filter({ has: page.getByText(`Version ${n}`, { exact: true }) })
          .locator('p')
          .first();
      await versions.getByText('Added step done (notify)').waitFor();
      assert.match(await version(2).innerText(), /^Version 2\s*live\s*by Ada Lovelace,/);
      assert.match(await version(1).innerText(), /^Version 1\s*by an agent for Ada Lovelace,/);
      await page.close();
    });

    it('shows dag/cycle for an invalid plan and publishes nothing', async () => {
      const published = await publish();
      const page = await automationPage(published.automation_id);
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      const planBox = editor.getByLabel('Plan (JSON)');
      const edited = JSON.parse(await planBox.inputValue()) as { edges: Json[] };
      edited.edges.push({ from: 'post', to: 'read' });
      await planBox.fill(JSON.stringify(edited, null, 2));
      await editor.getByLabel('Hour').fill('6');
      await editor.getByRole('button', { name: 'Publish' }).click();
      const problems = editor.getByRole('list', { name: 'Problems in the plan' });
      await problems.waitFor();
      assert.match(await problems.innerText(), /dag\/cycle/);
      assert.match(await editor.getByRole('alert').innerText(), /was not published/);
      const detail = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(detail.version, 1, 'no version was published');
      assert.equal((detail.trigger as { hour?: number }).hour, 9, 'the trigger did not change either');
      const versions = await app.h.services.automationViews.versions(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(versions.versions.length, 1, 'nothing was stored');
      await page.close();
    });

    it('approves and rejects from the session, each card recording who decided, when and the note', async () => {
      const published = await publish();
      const actor = app.h.actor('ada@acme.test');
      await app.h.services.automations.run(actor, { automation_id: published.automation_id });
      await app.h.services.automations.run(actor, { automation_id: published.automation_id });
      await waitFor(async () => (await pendingCards(app, published.session_id)) === 2);

      const page = await open(ada, app.url(`/sessions/${published.session_id}`));
      assert.equal(
        await page.title(),
        `${(await app.h.services.automations.read(actor, { automation_id: published.automation_id })).name} · Session · Tandem`,
      );
      const cards = page.getByRole('article').filter({ hasText: 'Post the digest?' });
      assert.equal(await cards.count(), 2);
      const first = cards.nth(0);
      await first.getByLabel('Note').fill('Looks right.');
      await first.getByRole('button', { name: 'Approve' }).click();
      await first.getByText(/Approved by Ada Lovelace, .+: “Looks right\.”/).waitFor();
      assert.equal(await first.getByRole('button', { name: 'Approve' }).count(), 0, 'one decision per card');

      const second = cards.nth(1);
      await second.getByLabel('Note').fill('Not this week.');
      await second.getByRole('button', { name: 'Reject' }).click();
      await second.getByText(/Rejected by Ada Lovelace, .+: “Not this week\.”/).waitFor();

      const runs = await app.h.services.automations.read(actor, {
        automation_id: published.automation_id,
        include_runs: true,
      });
      await waitFor(async () => {
        const now = await app.h.services.automations.read(actor, {
          automation_id: published.automation_id,
          include_runs: true,
        });
        return (now.runs ?? []).every((r) => r.status === 'succeeded' || r.status === 'cancelled');
      });
      assert.equal(runs.runs?.length, 2);
      await page.close();
    });

    it('works with the keyboard: skip to the content, write a note and approve', async () => {
      const published = await publish();
      await app.h.services.automations.run(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      await waitFor(async () => (await pendingCards(app, published.session_id)) === 1);
      const page = await open(ada, app.url(`/sessions/${published.session_id}`));
      await page.getByRole('article').filter({ hasText: 'Post the digest?' }).waitFor();
      const focused = () =>
        page.evaluate(() => {
          const el = document.activeElement;
          const label = el?.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : undefined;
          return { tag: el?.tagName, text: el?.textContent?.trim(), label };
        });
      await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Skip to content');
      await page.keyboard.press('Enter');
      assert.equal((await focused()).tag, 'MAIN', 'the skip link moves focus to the content');
      for (let i = 0; i < 20 && (await focused()).label !== 'Note'; i++) await page.keyboard.press('Tab');
      assert.equal((await focused()).label, 'Note');
      await page.keyboard.type('Checked by keyboard.');
      await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Approve');
      await page.keyboard.press('Enter');
      await page.getByText(/Approved by Ada Lovelace, .+: “Checked by keyboard\.”/).waitFor();
      await page.close();
    });

    it('shows no controls to someone who may not change an automation, and no approval buttons to a non-approver', async () => {
      const published = await publish('ada@acme.test', 'Ada’s own digest');
      // Bob cannot open Ada's personal automation at all.
      const bob = await app.signedIn('bob@acme.test');
      const hidden = await open(bob, app.url(`/automations/${published.automation_id}`));
      assert.equal(await hidden.title(), 'Automation not found · Tandem');
      await hidden.close();
      // Ada, an admin, reads Bob's personal automation, but only Bob may change it or approve its steps.
      const bobs = await publish('bob@acme.test', 'Bob’s digest');
      const page = await automationPage(bobs.automation_id);
      assert.equal(await page.getByRole('button', { name: 'Pause' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Dry run' }).count(), 0);
      assert.equal(await page.getByRole('region', { name: 'Edit and publish' }).count(), 0);
      assert.match(await mainText(page), /Only its creator can change this automation\./);
      await app.h.services.automations.run(app.h.actor('bob@acme.test'), {
        automation_id: bobs.automation_id,
      });
      await waitFor(async () => (await pendingCards(app, bobs.session_id, 'bob@acme.test')) === 1);
      const session = await open(ada, app.url(`/sessions/${bobs.session_id}`));
      const card = session.getByRole('article').filter({ hasText: 'Post the digest?' });
      await card.waitFor();
      assert.equal(await card.getByRole('button', { name: 'Approve' }).count(), 0);
      assert.match(await card.innerText(), /Waiting for the automation’s creator to decide/);
      await session.close();
      await page.close();
    });

    it('shows the same not-found page for a made-up id and for one the person cannot open', async () => {
      const theirs = await publish('bob@acme.test', 'Private digest');
      // Dee is in no pod and no conversation, holds no role on Ada's private page and document,
      // and is no admin; Eve's document is in another workspace.
      const ids = acme(app.h).artifacts;
      const pairs: [string, string, string[]][] = [
        ['automations', 'aut_0000000000000000000000000', [theirs.automation_id]],
        ['sessions', 'cnv_0000000000000000000000000', [theirs.session_id]],
        ['pages', 'pg_0000000000000000000000000', [ids.landing!, ids.pod_page!]],
        ['documents', 'doc_0000000000000000000000000', [ids.plan!, app.h.ids.Other!.artifacts.eve_doc!]],
      ];
      const dee = await app.signedIn('dee@acme.test');
      for (const [kind, madeUp, forbidden] of pairs) {
        const seen: { title: string; text: string }[] = [];
        for (const id of [madeUp, ...forbidden]) {
          const page = await open(dee, app.url(`/${kind}/${id}`));
          await page.getByRole('heading', { name: /not found$/ }).waitFor();
          seen.push({ title: await page.title(), text: await mainText(page) });
          await page.close();
        }
        for (const other of seen.slice(1)) {
          assert.deepEqual(other, seen[0], `/${kind}: an id Dee cannot open looks like a made-up one`);
        }
        assert.match(seen[0]!.title, /not found · Tandem$/);
      }
    });
  });
}

async function pendingCards(app: WebApp, sessionId: string, email = 'ada@acme.test'): Promise<number> {
  const session = await app.h.services.automations.session(app.h.actor(email), sessionId);
  return session.messages.filter((m) => m.card?.type === 'approval' && m.card.status === 'pending').length;
}

/** Waits for a condition the run engine brings about (it runs on its own, as in `tandem serve`). */
async function waitFor(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for the run engine');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
