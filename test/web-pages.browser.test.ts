import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { open, openWebApp, signIn, SKIP_BROWSER, type WebApp } from './support/web.ts';

for (const db of DATABASES) {
  describe(`pages, documents, home and history in a browser (${db.name})`, { skip: SKIP_BROWSER }, () => {
    let app: WebApp;
    let ada: BrowserContext;

    before(async () => {
      app = await openWebApp(db);
      ada = await app.signedIn('ada@acme.test');
    });
    after(async () => {
      await app?.close();
    });

    /** A new page of Ada's with two versions, written by her agent. */
    async function pageWithTwoVersions(title: string) {
      const agent = await app.h.as('ada@acme.test');
      const created = await agent.call('create_page', { title, html: '<h1>First draft</h1>' });
      const pageId = String(created.structured?.page_id);
      const written = await agent.call('write_page', {
        page_id: pageId,
        html: '<h1>Second draft</h1>',
        expected_version: 1,
      });
      assert.equal(written.isError, false, written.text);
      return pageId;
    }

    const frameText = async (page: Page) => {
      const frame = page.frameLocator('iframe.page-frame');
      return frame.locator('h1').innerText();
    };

    it('sends a person who is not signed in to sign in, and back to the page they asked for', async () => {
      const context = await app.browser.newContext();
      const page = await context.newPage();
      await page.goto(app.url('/automations'));
      assert.equal(new URL(page.url()).pathname, '/login');
      await app.h.services.accounts.setPassword('bob@acme.test', 'correct horse battery staple');
      await signIn(page, app.server.url, 'bob@acme.test', '/automations');
      await page.getByRole('heading', { level: 1, name: 'Automations' }).waitFor();
      assert.equal(await page.title(), 'Automations · Tandem');
      await page.getByRole('link', { name: 'Home' }).click();
      await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
      assert.equal(await page.title(), 'Home · Tandem');
      await context.close();
    });

    it('serves the app with a policy that allows no inline script and no framing', async () => {
      const page = await ada.newPage();
      const response = await page.goto(app.url('/'));
      const csp = response?.headers()['content-security-policy'] ?? '';
      assert.match(csp, /(^|; )script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, new RegExp(`frame-src ${app.server.pagesUrl}`));
      const inline = await page.locator('script:not([src])').count();
      assert.equal(inline, 0, 'the shell has no inline script');
      await page.close();
    });

    it('shows a page in its sandboxed frame, with Comments and Versions beside it', async () => {
      const pageId = await pageWithTwoVersions('Launch notes');
      const page = await open(ada, app.url(`/pages/${pageId}`));
      assert.equal(await page.title(), 'Launch notes · Tandem');
      const frame = page.locator('iframe.page-frame');
      const sandbox = (await frame.getAttribute('sandbox')) ?? '';
      assert.ok(!sandbox.includes('allow-scripts') && !sandbox.includes('allow-same-origin'), sandbox);
      assert.equal(new URL((await frame.getAttribute('src'))!).origin, app.server.pagesUrl);
      assert.equal(await frameText(page), 'Second draft');
      await page.getByRole('complementary', { name: 'Comments' }).waitFor();
      const versions = page.getByRole('region', { name: 'Versions' });
      assert.match(await versions.innerText(), /Version 1[\s\S]*agent edit by Agent for Ada Lovelace/);
      await page.close();
    });

    it('starts a thread on a page, replies in it and resolves it', async () => {
      const pageId = await pageWithTwoVersions('Pricing');
      const page = await open(ada, app.url(`/pages/${pageId}`));
      const comments = page.getByRole('complementary', { name: 'Comments' });
      await comments.getByLabel('New comment').fill('Is this the final headline?');
      await comments.getByLabel('Quote (optional)').fill('Second draft');
      await comments.getByRole('button', { name: 'Comment' }).click();
      const thread = comments.getByRole('article').filter({ hasText: 'Is this the final headline?' });
      await thread.waitFor();
      assert.equal(await thread.locator('blockquote').innerText(), 'Second draft', 'the quoted anchor');

      await thread.getByLabel('Reply').fill('Yes, ship it.');
      await thread.getByRole('button', { name: 'Send' }).click();
      // The reply as posted (the Reply box may still hold the same words for a moment).
      await thread.getByRole('paragraph').filter({ hasText: 'Yes, ship it.' }).waitFor();

      await thread.getByRole('button', { name: 'Resolve' }).click();
      await comments.getByText('No open comment threads.').waitFor();
      const stored = await app.h.services.comments.read(app.h.actor('ada@acme.test'), {
        document_id: pageId,
        include_resolved: true,
      });
      assert.equal(stored.threads.length, 1);
      assert.equal(stored.threads[0]!.status, 'resolved');
      assert.equal(stored.threads[0]!.anchor_excerpt, 'Second draft');
      assert.deepEqual(
        stored.threads[0]!.replies.map((r) => [r.author_label, r.body]),
        [['Ada Lovelace', 'Yes, ship it.']],
      );

      await comments.getByLabel('Show resolved threads').check();
      await thread.getByRole('button', { name: 'Reopen' }).click();
      await thread.getByRole('button', { name: 'Resolve' }).waitFor();
      await page.close();
    });

    it('restores an earlier page version as a new version, recorded as a restore', async () => {
      const pageId = await pageWithTwoVersions('Roadshow');
      const page = await open(ada, app.url(`/pages/${pageId}`));
      const versions = page.getByRole('region', { name: 'Versions' });
      const first = versions.getByRole('row').filter({ hasText: 'Version 1' });
      await first.getByRole('button', { name: 'Restore' }).click();
      await page
        .getByRole('dialog', { name: 'Restore version 1?' })
        .getByRole('button', { name: 'Restore' })
        .click();
      await versions.getByText('Now at version 3.').waitFor();
      await page.waitForFunction(() =>
        document.querySelector('iframe.page-frame')?.getAttribute('src')?.includes('v=3'),
      );
      assert.equal(await frameText(page), 'First draft');
      assert.match(
        await versions.innerText(),
        /Version 2[\s\S]*restore by Ada Lovelace[\s\S]*restored version 1/,
      );
      const read = await app.h.services.pages.read(app.h.actor('ada@acme.test'), pageId);
      assert.equal(read.html, '<h1>First draft</h1>');
      assert.equal(read.version, 3);
      await page.close();
    });

    it('offers no Restore or new comment to someone who may only read a page', async () => {
      const page = await open(
        await app.signedIn('cy@acme.test'),
        app.url(`/pages/${acme(app.h).artifacts.landing}`),
      );
      // Comments and versions load after the page: judge what they offer once both are in.
      await page.getByText('You can read comments here but not add them.').waitFor();
      await page.getByText('Loading versions…').waitFor({ state: 'detached' });
      assert.equal(await page.getByRole('button', { name: 'Restore' }).count(), 0);
      assert.equal(await page.getByLabel('New comment').count(), 0);
      await page.close();
    });

    it('lists documents, searches them and makes a new one', async () => {
      const page = await open(ada, app.url('/documents'));
      assert.equal(await page.title(), 'Documents · Tandem');
      const table = page.getByRole('table');
      await table.getByRole('link', { name: 'Budget' }).waitFor();
      assert.match(await table.innerText(), /Roadmap/);
      await page.getByRole('searchbox', { name: 'Search' }).fill('roadmap');
      await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
      await page.waitForURL('**/documents?q=roadmap');
      await page.getByRole('link', { name: 'Budget' }).waitFor({ state: 'detached' });
      assert.match(await table.innerText(), /Roadmap/);

      await page.getByRole('button', { name: 'New document' }).click();
      await page.getByLabel('Title').fill('Meeting notes');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { level: 1, name: 'Meeting notes' }).waitFor();
      assert.match(new URL(page.url()).pathname, /^\/documents\/doc_/);
      assert.equal(await page.title(), 'Meeting notes · Tandem');
      const made = await app.h.services.documents.list(app.h.actor('ada@acme.test'), { scope: 'mine' });
      assert.ok(made.documents.some((d) => d.title === 'Meeting notes' && d.role === 'owner'));
      await page.close();
    });

    it('shows a reader a document’s markdown rendered, and runs nothing of it', async () => {
      const plan = acme(app.h).artifacts.plan!;
      const agent = await app.h.as('ada@acme.test');
      const read = await agent.call('read_document', { document_id: plan });
      const written = await agent.call('edit_document', {
        document_id: plan,
        mode: 'replace_all',
        expected_version: read.structured?.version,
        content_markdown: '# Plan\n\n- one\n- **two**\n\n<img src=x onerror="window.__ran=1">\n',
      });
      assert.equal(written.isError, false, written.text);
      // Cy may only view the plan: the read view.
      const page = await open(await app.signedIn('cy@acme.test'), app.url(`/documents/${plan}`));
      await page.locator('.prose').getByRole('heading', { level: 1, name: 'Plan' }).waitFor();
      assert.equal(await page.getByRole('listitem').filter({ hasText: 'two' }).count(), 1);
      assert.equal(await page.evaluate(() => (window as { __ran?: number }).__ran), undefined);
      assert.equal(await page.locator('.prose [onerror]').count(), 0);
      await page.close();
    });

    it('shows Home with recent documents, approvals waiting and unread notifications', async () => {
      const agent = await app.h.as('bob@acme.test');
      await agent.call('add_comment', {
        document_id: acme(app.h).artifacts.roadmap,
        body_markdown: '@ada please look at the roadmap',
      });
      const page = await open(ada, app.url('/'));
      const recent = page.getByRole('region', { name: 'Recent documents and pages' });
      await recent.getByRole('link').first().waitFor();
      const unread = page.getByRole('region', { name: 'Unread notifications' });
      await unread.getByText(/please look at the roadmap/).waitFor();
      await page.getByRole('region', { name: 'Automations that need attention' }).waitFor();
      await page.getByRole('link', { name: 'All notifications' }).click();
      await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
      await page.getByRole('button', { name: 'Mark all as read' }).click();
      await page.getByRole('status').filter({ hasText: 'All read.' }).waitFor();
      const listed = await app.h.services.notifications.list(app.h.actor('ada@acme.test'));
      assert.ok(listed.length > 0 && listed.every((n) => n.read));
      await page.close();
    });

    it('shows every tool call of the person’s agents, reads included, filtered by tool and outcome', async () => {
      const agent = await app.h.as('ada@acme.test');
      await agent.call('list_documents', {});
      await agent.call('read_page', { page_id: 'pg_0000000000000000000000000' });
      const page = await open(ada, app.url('/activity'));
      assert.equal(await page.title(), 'Agent activity · Tandem');
      // Tools are written as words: list_documents is “list documents”.
      const table = page.getByRole('table');
      await table.getByText('list documents').first().waitFor();
      await page.getByLabel('Outcome').selectOption('error');
      await page.waitForURL('**/activity?outcome=error');
      // The filtered list replaces the whole one when it arrives: wait for that, not the URL.
      await table.getByText('list documents').first().waitFor({ state: 'detached' });
      assert.match(await table.innerText(), /read page/);
      await page.getByLabel('Outcome').selectOption('');
      await page.getByLabel('Tool').selectOption('list_documents');
      await page.waitForURL('**/activity?tool=list_documents');
      await table.getByText('read page').first().waitFor({ state: 'detached' });
      assert.match(await table.innerText(), /list documents/);
      await page.close();
    });
  });
}
