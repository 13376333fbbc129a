import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import {
  approval,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  trig,
  type Json,
} from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { errorReply, startModelServer, textReply, type ModelServer } from './support/model-server.ts';
import { ok } from './support/results.ts';
import { waitFor } from './support/web-shots.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/** The accessible label of what has the keyboard's focus. */
const focusedLabel = (page: Page) =>
  page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');

/** Where to write screenshots of the pages, when set. */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

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

/** A plan with a branch (two arms) and a map whose body has two steps. */
const branchingPlan = (roadmap: string): Json => ({
  planVersion: 1,
  name: 'Branches and maps',
  description: '',
  nodes: [
    {
      ...capability('read', 'documents.read_document', { document_id: lit(roadmap) }),
      title: 'Read the roadmap',
    },
    {
      kind: 'branch',
      id: 'long',
      title: 'Is it long?',
      condition: { op: 'gt', left: ref('read', 'size_chars'), right: lit(10) },
    },
    { kind: 'notify', id: 'short_note', title: 'Say it is short', message: lit('Short.') },
    {
      kind: 'map',
      id: 'each',
      title: 'For each part',
      items: lit(['a', 'b']),
      body: {
        nodes: [
          {
            kind: 'transform',
            id: 'shout',
            title: 'Shout it',
            op: 'template',
            input: { v: trig('item') },
            args: { template: '{{v}}!' },
          },
          { kind: 'notify', id: 'tell', title: 'Tell it', message: ref('shout', 'text') },
        ],
        edges: [{ from: 'shout', to: 'tell' }],
      },
      result: 'tell',
    },
  ],
  edges: [
    { from: 'read', to: 'long' },
    { from: 'long', to: 'each', when: true },
    { from: 'long', to: 'short_note', when: false },
  ],
});

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Europe/Berlin' };

for (const db of DATABASES) {
  describe(`automations made in the app, in a browser (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;
    let model: ModelServer;
    let ada: BrowserContext;
    let phone: BrowserContext;
    let counter = 0;

    /** A screenshot of the page, or of one part of it, for a person to look at. */
    async function shot(page: Page, name: string, part?: Locator | 'viewport') {
      if (!SHOTS) return;
      mkdirSync(SHOTS, { recursive: true });
      const path = join(SHOTS, `${name}-${db.name}.png`);
      if (part === 'viewport') await page.screenshot({ path });
      else if (part) await part.screenshot({ path });
      else await page.screenshot({ path, fullPage: true });
    }

    /** Presses Tab until the focused element has this accessible name (at most 80 presses). */
    async function tabTo(page: Page, name: RegExp) {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          if (!el) return '';
          const labelled = el.getAttribute('aria-label');
          if (labelled) return labelled;
          const id = el.id;
          const label = id ? document.querySelector(`label[for="${id}"]`)?.textContent : undefined;
          return (label ?? el.textContent ?? '').trim();
        });
        if (name.test(focused)) return;
      }
      throw new Error(`nothing named ${name} could be reached with Tab`);
    }

    async function publishDigest(name = `Digest ${++counter}`) {
      const actor = app.h.actor('ada@acme.test');
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

    before(async () => {
      model = await startModelServer();
      app = await openWebApp(
        db,
        {},
        { builder: { model: { url: model.url, model: 'test-model' }, timeoutMs: 20_000 } },
      );
      ada = await app.signedIn('ada@acme.test');
      phone = await app.signedIn('ada@acme.test', { width: 390, height: 844 });
    });
    after(async () => {
      await app?.close();
      await model?.close();
    });

    it('drafts a template, dry-runs it (it stays a draft) and publishes it; list_automations then lists it', async () => {
      const page = await open(ada, app.url('/automations'));
      await page.getByRole('button', { name: 'New automation' }).click();
      const dialog = page.getByRole('dialog', { name: 'New automation' });
      await dialog.getByRole('region', { name: 'Start from a template' }).waitFor();
      const templates = dialog.getByRole('list', { name: 'Templates' }).getByRole('button');
      assert.ok((await templates.count()) >= 6);
      await shot(page, 'new-automation-1280');
      await dialog.getByRole('button', { name: /^Weekly document digest/ }).click();
      await dialog.getByLabel('Document', { exact: true }).selectOption({ label: 'Roadmap' });
      await dialog.getByRole('button', { name: 'Draft from template' }).click();
      await page.waitForURL(/\/automations\/drafts\/fv_/);
      await page.getByRole('heading', { level: 1, name: 'Weekly digest' }).waitFor();
      assert.match(await page.locator('main').innerText(), /made by Ada Lovelace/);
      const diagram = page.getByRole('region', { name: 'Plan diagram' });
      for (const name of ['Read the document', 'Write the digest', 'Approve the digest', 'Post the digest'])
        await diagram.getByRole('button', { name: new RegExp(`^${name},`) }).waitFor();
      // The template's trigger is filled in.
      assert.equal(await page.getByLabel('Frequency').inputValue(), 'weekly');
      await shot(page, 'draft-1280');
      const small = await open(phone, page.url());
      await small.getByRole('region', { name: 'Plan diagram' }).waitFor();
      await shot(small, 'draft-390', 'viewport');
      await small.getByRole('button', { name: 'Publish' }).scrollIntoViewIfNeeded();
      await shot(small, 'draft-390-publish', 'viewport');
      await small.close();

      await page.getByRole('button', { name: 'Dry run' }).click();
      const steps = page.getByRole('table', { name: 'Steps of this run' });
      await steps
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: 'post' }) })
        .getByText('Simulated', { exact: true })
        .waitFor();
      await page.getByRole('region', { name: 'Plan diagram' }).first().waitFor();
      await page.getByRole('list', { name: 'Legend' }).waitFor();
      await shot(page, 'draft-dry-run-1280');
      // The run is shown like any run, marked Simulated, and the draft is still only a draft.
      await page
        .getByRole('region', { name: /^Run run_/ })
        .getByText('Simulated', { exact: true })
        .first()
        .waitFor();
      let listed = ok(await (await app.h.as('ada@acme.test')).call('list_automations', {}));
      assert.equal(
        (listed.automations as Json[]).find((a) => a.name === 'Weekly digest'),
        undefined,
        'the dry run published nothing',
      );
      const drafts = await app.h.services.drafts.list(app.h.actor('ada@acme.test'));
      assert.ok(
        drafts.drafts.some((d) => d.name === 'Weekly digest' && page.url().includes(d.flow_version_id)),
      );

      await page.getByRole('button', { name: 'Publish' }).click();
      await page.waitForURL(/\/automations\/aut_/);
      await page.getByRole('heading', { level: 1, name: 'Weekly digest' }).waitFor();
      listed = ok(await (await app.h.as('ada@acme.test')).call('list_automations', {}));
      const live = (listed.automations as Json[]).find((a) => a.name === 'Weekly digest');
      assert.equal(live?.enabled, true);
      assert.equal((live?.trigger as Json).frequency, 'weekly');
      // Next run names its zone (once the automation's page has loaded it).
      await page.locator('main').getByText('Next run').first().waitFor();
      assert.match(
        await page.locator('main').innerText(),
        new RegExp(`Next run\\s+.*${(live?.trigger as Json).timezone as string}`),
      );
      await page.close();
    });

    it('drafts from a sentence through @Builder (a stand-in model), and lists it as @Builder’s', async () => {
      model.replies.push(() =>
        textReply(
          JSON.stringify({
            ask: 'Post the roadmap every week.',
            write_approval: 'required',
            plan: { ...digestPlan(acme(app.h).artifacts.roadmap!), name: 'Roadmap to the session' },
          }),
        ),
      );
      const page = await open(ada, app.url('/automations'));
      await page.getByRole('button', { name: 'New automation' }).click();
      const dialog = page.getByRole('dialog', { name: 'New automation' });
      const describeIt = dialog.getByRole('region', { name: 'Describe it' });
      await describeIt
        .getByLabel('What should it do, and when?')
        .fill('Post the roadmap to the session every week.');
      await describeIt.getByRole('button', { name: 'Draft it' }).click();
      await page.getByRole('heading', { level: 1, name: 'Roadmap to the session' }).waitFor();
      assert.match(await page.locator('main').innerText(), /made by @Builder for Ada Lovelace/);
      const sent = JSON.stringify(model.requests.at(-1));
      assert.match(sent, /Post the roadmap to the session every week\./);

      await page.getByRole('link', { name: 'Automations' }).first().click();
      const drafts = page.getByRole('table', { name: 'Drafts' });
      const row = drafts.getByRole('row').filter({ hasText: 'Roadmap to the session' });
      assert.match(await row.innerText(), /@Builder for Ada Lovelace/);
      await page.close();
    });

    it('drafts from a sentence without holding the request: a progress state, then one sentence when it fails', async () => {
      // The model refuses every call: the drafting fails in the background, after the request answered.
      for (let i = 0; i < 8; i++) model.replies.push(() => errorReply(400, 'the stand-in model refuses'));
      const page = await open(ada, app.url('/automations'));
      await page.getByRole('button', { name: 'New automation' }).click();
      const describeIt = page
        .getByRole('dialog', { name: 'New automation' })
        .getByRole('region', { name: 'Describe it' });
      await describeIt.getByLabel('What should it do, and when?').fill('Tell me about the roadmap.');
      // Whether the dialog ever says @Builder is drafting (it may say so only for a moment).
      await page.evaluate(() => {
        const seen = window as unknown as { sawDrafting?: boolean };
        new MutationObserver(() => {
          for (const s of document.querySelectorAll('[role="status"]'))
            if (s.textContent?.includes('@Builder is drafting it')) seen.sawDrafting = true;
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      const response = page.waitForResponse((r) => r.url().endsWith('/api/drafts/describe'));
      await describeIt.getByRole('button', { name: 'Draft it' }).click();
      const started = (await (await response).json()) as Json;
      assert.equal(started.status, 'drafting', 'the request answers before the model is called');
      const alert = describeIt.getByRole('alert');
      await alert.waitFor();
      assert.match(
        await alert.innerText(),
        /^@Builder could not reach the model \(.*\); try again in a moment\.$/,
      );
      assert.equal(await describeIt.getByRole('button', { name: 'Draft it' }).isEnabled(), true);
      assert.equal(
        await page.evaluate(() => (window as unknown as { sawDrafting?: boolean }).sawDrafting),
        true,
        'the dialog said @Builder was drafting',
      );
      model.replies.length = 0;
      await page.close();
    });

    it('says at once when no model is configured', async () => {
      const bare = await openWebApp(db);
      try {
        const context = await bare.signedIn('ada@acme.test');
        const page = await open(context, bare.url('/automations'));
        await page.getByRole('button', { name: 'New automation' }).click();
        const describeIt = page
          .getByRole('dialog', { name: 'New automation' })
          .getByRole('region', { name: 'Describe it' });
        await describeIt.getByText(/No model is configured/).waitFor();
        assert.equal(await describeIt.getByRole('button', { name: 'Draft it' }).count(), 0);
      } finally {
        await bare.close();
      }
    });

    it('lists a draft made with draft_automation under Drafts, as an agent’s for the person', async () => {
      const agent = await app.h.as('ada@acme.test');
      const drafted = ok(
        await agent.call('draft_automation', {
          plan_json: { ...digestPlan(acme(app.h).artifacts.roadmap!), name: 'Drafted by a tool' },
          ask: 'Post the roadmap when I approve.',
        }),
      );
      const page = await open(ada, app.url('/automations'));
      const row = page
        .getByRole('table', { name: 'Drafts' })
        .getByRole('row')
        .filter({ hasText: 'Drafted by a tool' });
      await row.waitFor();
      assert.match(await row.innerText(), /An agent for Ada Lovelace/);
      await row.getByRole('link', { name: 'Drafted by a tool' }).click();
      await page.waitForURL(`**/automations/drafts/${drafted.flow_version_id as string}`);
      await page.getByRole('heading', { level: 1, name: 'Drafted by a tool' }).waitFor();
      await page.close();
    });

    it('draws every node of a plan with a branch and a map, its arms labelled; Enter opens a step', async () => {
      const actor = app.h.actor('ada@acme.test');
      const draft = await app.h.services.automations.draft(actor, {
        plan_json: branchingPlan(acme(app.h).artifacts.roadmap!),
        ask: 'Read the roadmap and act on its length.',
      });
      // The steps' forms wait for the capabilities; hold them back until a node has been opened.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const capabilities = '**/api/automation-capabilities';
      await ada.route(capabilities, async (route) => {
        await held;
        await route.continue();
      });
      const page = await open(ada, app.url(`/automations/drafts/${draft.flow_version_id}`));
      const diagram = page.getByRole('region', { name: 'Plan diagram' });
      for (const [title, kind] of [
        ['Read the roadmap', 'documents.read_document'],
        ['Is it long\\?', 'branch'],
        ['Say it is short', 'notify'],
        ['For each part', 'map: for each item'],
        ['Shout it', 'transform'],
        ['Tell it', 'notify'],
      ])
        await diagram.getByRole('button', { name: new RegExp(`^${title}, ${kind}$`) }).waitFor();
      const text = await diagram.innerText();
      assert.match(text, /yes/);
      assert.match(text, /no/);
      // Keyboard: each node is reached with Tab, and Enter opens its step's form.
      await diagram.getByRole('button', { name: /^Read the roadmap,/ }).focus();
      await page.keyboard.press('Tab');
      // Pressed before the steps' forms have loaded: the form is focused when it appears.
      await page.keyboard.press('Enter');
      assert.equal(await page.getByRole('group', { name: 'Step Is it long?' }).count(), 0);
      release();
      await waitFor(
        async () => (await focusedLabel(page)) === 'Step Is it long?',
        'the step form to be focused',
      );
      await ada.unroute(capabilities);
      await shot(page, 'diagram-1280');
      const small = await open(phone, app.url(`/automations/drafts/${draft.flow_version_id}`));
      await small.getByRole('region', { name: 'Plan diagram' }).waitFor();
      await shot(small, 'diagram-390', small.getByRole('region', { name: 'Plan diagram' }));
      await small.close();
      await page.close();
    });

    it('edits a step in its form: an invalid value shows the validator’s error at its field, a valid one republishes', async () => {
      const published = await publishDigest();
      const page = await open(ada, app.url(`/automations/${published.automation_id}`));
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      const read = editor.getByRole('group', { name: 'Step read' });
      const windowField = read.getByLabel('Window (optional)');
      await windowField.fill('0');
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('list', { name: 'Problems in the plan' }).waitFor();
      assert.equal(await windowField.getAttribute('aria-invalid'), 'true');
      const errorId = await windowField.getAttribute('aria-describedby');
      const atField = await page.locator(`#${errorId}`).innerText();
      assert.match(atField, /documents\.read_document/);
      assert.match(atField, />=\s*1|at least 1|too small/i);
      await shot(page, 'step-form-error-1280');
      const small = await open(phone, app.url(`/automations/${published.automation_id}`));
      const smallEditor = small.getByRole('region', { name: 'Edit and publish' });
      await smallEditor.getByRole('group', { name: 'Step read' }).getByLabel('Window (optional)').fill('0');
      await smallEditor.getByRole('button', { name: 'Publish' }).click();
      await smallEditor.getByRole('list', { name: 'Problems in the plan' }).waitFor();
      await smallEditor.getByRole('group', { name: 'Step read' }).scrollIntoViewIfNeeded();
      await shot(small, 'step-form-error-390', smallEditor.getByRole('group', { name: 'Step read' }));
      await small.close();

      await windowField.fill('500');
      // The same plan shows in Edit as JSON.
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      assert.match(
        await editor.getByLabel('Plan (JSON)').inputValue(),
        /"window": \{\s+"kind": "literal",\s+"value": 500/,
      );
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();
      const detail = await app.h.services.automations.read(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
        include_plan: true,
      });
      const step = (detail.plan_json as { nodes: Json[] }).nodes.find((n) => n.id === 'read');
      assert.deepEqual((step?.input as Json).window, { kind: 'literal', value: 500 });
      await page.close();
    });

    it('edits a branch and a map in their forms: the validator’s errors at the map’s and the branch’s fields, then a republish', async () => {
      const actor = app.h.actor('ada@acme.test');
      const draft = await app.h.services.automations.draft(actor, {
        plan_json: branchingPlan(acme(app.h).artifacts.roadmap!),
        ask: 'Read the roadmap and act on its length.',
      });
      const published = await app.h.services.automations.publish(actor, {
        flow_version_id: draft.flow_version_id,
        name: `Branches ${++counter}`,
        trigger: DAILY,
      });
      const page = await open(ada, app.url(`/automations/${published.automation_id}`));
      const editor = page.getByRole('region', { name: 'Edit and publish' });
      const branch = editor.getByRole('group', { name: 'Step Is it long?' });
      // The branch's condition and arms are fields of its own shape.
      assert.equal(await branch.getByLabel('Compare with', { exact: true }).inputValue(), 'gt');
      assert.equal(await branch.getByLabel('If true, go on to (optional)').inputValue(), 'each');
      assert.equal(await branch.getByLabel('If false, go on to (optional)').inputValue(), 'short_note');
      await branch.getByLabel('Compare with', { exact: true }).selectOption('lt');
      await branch.getByLabel('Compared to', { exact: true }).fill('5000');
      // The map: its items, result and concurrency; its body's steps are forms inside it.
      const map = editor.getByRole('group', { name: 'Step For each part' });
      assert.equal(await map.getByLabel('Result', { exact: true }).inputValue(), 'tell');
      const body = map.getByRole('group', { name: 'Steps for each item of For each part' });
      const shout = body.getByRole('group', { name: 'Step Shout it' });
      assert.equal(await shout.getByLabel('Template', { exact: true }).inputValue(), '{{v}}!');
      assert.equal(await shout.getByLabel('V: value from').inputValue(), 'trigger:item');
      const concurrency = map.getByLabel('Concurrency (optional)');
      await concurrency.fill('20');
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('list', { name: 'Problems in the plan' }).waitFor();
      assert.equal(await concurrency.getAttribute('aria-invalid'), 'true');
      const errorId = await concurrency.getAttribute('aria-describedby');
      assert.match(await page.locator(`#${errorId}`).innerText(), /concurrency must be at most 10/);
      await branch.scrollIntoViewIfNeeded();
      await shot(page, 'branch-form-1280', editor.getByRole('group', { name: 'Step Is it long?' }));
      await shot(page, 'map-form-error-1280', map);
      const small = await open(phone, app.url(`/automations/${published.automation_id}`));
      const smallEditor = small.getByRole('region', { name: 'Edit and publish' });
      const smallMap = smallEditor.getByRole('group', { name: 'Step For each part' });
      await smallMap.getByLabel('Concurrency (optional)').fill('20');
      // A branch whose value names a step that does not exist (typed in Edit as JSON): the
      // validator's error is placed at the branch's Value field.
      await smallEditor.getByRole('button', { name: 'Edit as JSON' }).click();
      const smallJson = smallEditor.getByLabel('Plan (JSON)');
      await smallJson.fill((await smallJson.inputValue()).replace('"node": "read"', '"node": "nowhere"'));
      await smallEditor.getByRole('button', { name: 'Edit as JSON' }).click();
      await smallEditor.getByRole('button', { name: 'Publish' }).click();
      await smallEditor.getByRole('list', { name: 'Problems in the plan' }).waitFor();
      const value = smallEditor
        .getByRole('group', { name: 'Step Is it long?' })
        .getByLabel('Value', { exact: true });
      const valueError = await small.locator(`#${await value.getAttribute('aria-describedby')}`).innerText();
      assert.match(valueError, /nowhere/);
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 390px screen`);
      await shot(
        small,
        'branch-form-error-390',
        smallEditor.getByRole('group', { name: 'Step Is it long?' }),
      );
      await shot(small, 'map-form-error-390', smallMap);
      await small.setViewportSize({ width: 1280, height: 900 });
      await shot(
        small,
        'branch-form-error-1280',
        smallEditor.getByRole('group', { name: 'Step Is it long?' }),
      );
      await small.close();

      await concurrency.fill('2');
      // The same plan shows in Edit as JSON.
      await editor.getByRole('button', { name: 'Edit as JSON' }).click();
      assert.match(await editor.getByLabel('Plan (JSON)').inputValue(), /"concurrency": 2/);
      await editor.getByRole('button', { name: 'Publish' }).click();
      await editor.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();
      const detail = await app.h.services.automations.read(actor, {
        automation_id: published.automation_id,
        include_plan: true,
      });
      const nodes = (detail.plan_json as { nodes: Json[] }).nodes;
      assert.deepEqual(nodes.find((n) => n.id === 'long')?.condition, {
        op: 'lt',
        left: { kind: 'ref', node: 'read', path: 'size_chars' },
        right: { kind: 'literal', value: 5000 },
      });
      assert.equal(nodes.find((n) => n.id === 'each')?.concurrency, 2);
      await page.close();
    });

    it('lists every step of a run, those not started too, and opens a step’s input and output whole', async () => {
      const published = await publishDigest();
      const started = await app.h.services.automations.run(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      const page = await open(ada, app.url(`/automations/${published.automation_id}`));
      // Open run is a real link.
      const link = page.getByRole('link', { name: new RegExp(`Open run ${started.run_id.slice(-6)}`) });
      assert.match((await link.getAttribute('href')) ?? '', new RegExp(`\\?run=${started.run_id}`));
      await link.click();
      const steps = page.getByRole('table', { name: 'Steps of this run' });
      const row = (id: string) =>
        steps.getByRole('row').filter({ has: page.getByRole('rowheader', { name: id }) });
      await row('ok').getByText('Waiting', { exact: true }).waitFor();
      assert.match(await row('post').innerText(), /Not started/);
      // The automation's plan is drawn above; the run's is drawn with each step's status.
      await page
        .getByRole('region', { name: 'Steps' })
        .getByRole('region', { name: 'Plan diagram' })
        .waitFor();
      const diagram = page
        .getByRole('region', { name: /^Run run_/ })
        .getByRole('region', { name: 'Plan diagram' });
      await diagram
        .getByRole('button', { name: /^post, conversations\.post_message, Not started$/ })
        .waitFor();
      await diagram.getByRole('button', { name: /^read, documents\.read_document, Succeeded$/ }).waitFor();
      await shot(page, 'run-diagram-1280');

      await row('read').getByRole('button', { name: 'Show all of step read' }).click();
      const whole = page.getByRole('dialog', { name: 'Step read: input and output' });
      const shown = JSON.parse(
        await whole.getByRole('region', { name: 'Output' }).locator('pre').innerText(),
      ) as Json;
      const run = await app.h.services.automationViews.inspectRun(app.h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
        run_id: started.run_id,
      });
      const stored = run?.nodes.find((n) => n.node_id === 'read') as { output?: Json } | undefined;
      assert.ok(JSON.stringify(stored?.output).length > 80, 'the output is longer than a cell shows');
      assert.deepEqual(shown, stored?.output, 'the whole output is shown');
      assert.ok(await whole.getByRole('button', { name: 'Copy output' }).isVisible());
      await page.keyboard.press('Escape');
      await whole.waitFor({ state: 'hidden' });
      const small = await open(
        phone,
        app.url(`/automations/${published.automation_id}?run=${started.run_id}`),
      );
      await small
        .getByRole('region', { name: /^Run run_/ })
        .getByRole('region', { name: 'Plan diagram' })
        .waitFor();
      await small.getByRole('table', { name: 'Steps of this run' }).waitFor();
      await shot(small, 'run-diagram-390', small.getByRole('region', { name: /^Run run_/ }));
      await small.close();
      await page.close();
    });

    it('goes from New automation to a draft with the keyboard alone', async () => {
      const page = await open(ada, app.url('/automations'));
      await tabTo(page, /^New automation$/);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'New automation' });
      await dialog.getByRole('list', { name: 'Templates' }).waitFor();
      await tabTo(page, /^Weekly document digest/);
      await page.keyboard.press('Enter');
      // The template's form appears after Enter; tabbing before it is there would pass it by.
      await dialog.getByLabel('Document', { exact: true }).waitFor();
      await tabTo(page, /^Document$/);
      await page.keyboard.press('ArrowDown');
      await tabTo(page, /^Draft from template$/);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/automations\/drafts\/fv_/);
      await page.getByRole('region', { name: 'Plan diagram' }).waitFor();
      await tabTo(page, /^Post the digest,/);
      await page.keyboard.press('Enter');
      await waitFor(
        async () => (await focusedLabel(page)) === 'Step Post the digest',
        'the step form to be focused',
      );
      const small = await open(phone, app.url('/automations'));
      await small.getByRole('button', { name: 'New automation' }).click();
      await small
        .getByRole('dialog', { name: 'New automation' })
        .getByRole('list', { name: 'Templates' })
        .waitFor();
      await shot(small, 'new-automation-390', small.getByRole('dialog', { name: 'New automation' }));
      await small.close();
      await page.close();
    });
  });
}
