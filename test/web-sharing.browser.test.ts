import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/** Screenshots of the Share dialog, for looking at (TANDEM_SCREENSHOTS=dir keeps them). */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Opens Share, changes what `change` changes, saves, and waits for the dialog to close. */
async function shareAs(page: Page, change: (dialog: ReturnType<Page['getByRole']>) => Promise<void>) {
  await page.getByRole('button', { name: 'Share' }).click();
  const dialog = page.getByRole('dialog', { name: 'Share' });
  await dialog.getByRole('combobox', { name: 'Who can open it' }).waitFor();
  await change(dialog);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByRole('status').filter({ hasText: 'Sharing saved' }).waitFor();
}

describe('sharing, tables and export in the app', { skip: SKIP_BROWSER }, () => {
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  for (const db of DATABASES) {
    describe(db.name, () => {
      let app: WebApp;
      before(async () => {
        app = await openWebApp(db);
      });
      after(async () => {
        await app?.close();
      });

      const readAs = async (email: string, id: string) =>
        (await app.h.services.documents.read(app.h.actor(email), { document_id: id })).markdown;

      it('New document asks who can open it; Share changes what another person can do while they have it open', async () => {
        const bob = await open(await app.signedIn('bob@acme.test'), app.url('/documents'));
        await bob.getByRole('button', { name: 'New document' }).click();
        const form = bob.getByRole('form', { name: 'New document' });
        const who = form.getByRole('combobox', { name: 'Who can open it' });
        assert.equal(await who.inputValue(), 'user', 'only the creator by default');
        await who.locator('option', { hasText: 'Everyone in Acme' }).waitFor({ state: 'attached' });
        assert.deepEqual(await who.locator('option').allInnerTexts(), [
          'Only me',
          'Design',
          'Everyone in Acme',
        ]);
        await form.getByLabel('Title').fill('Team plan');
        await who.selectOption({ label: 'Everyone in Acme' });
        await form.getByRole('combobox', { name: 'Their role' }).selectOption({ label: 'Can view' });
        if (SHOTS && db.name === 'sqlite') await bob.screenshot({ path: join(SHOTS, 'new-document.png') });
        await form.getByRole('button', { name: 'Create' }).click();
        await bob.waitForURL(/\/documents\/doc_/);
        const id = decodeURIComponent(new URL(bob.url()).pathname.split('/').pop()!);
        const box = bob.getByRole('textbox', { name: 'Document' });
        await box.click();
        await bob.keyboard.type('Shared words.', { delay: 60 });
        await until(
          async () => (await readAs('bob@acme.test', id)).includes('Shared words.'),
          'Bob’s text is stored',
        );

        // Cy (everyone in Acme) may view: the read view says so and offers no editor.
        const cy = await open(await app.signedIn('cy@acme.test'), app.url(`/documents/${id}`));
        await cy.getByText('Shared words.').waitFor();
        await cy.getByText('You can view', { exact: true }).waitFor();
        assert.equal(await cy.getByRole('textbox', { name: 'Document' }).count(), 0);
        assert.equal(await cy.getByRole('button', { name: 'Share' }).count(), 0, 'only the owner shares');

        // Added by name as an editor: Cy's open page becomes the editor, without a reload.
        await shareAs(bob, async (dialog) => {
          // Typed as a person would: a part of the name, then Enter picks the one person it names.
          const add = dialog.getByRole('combobox', { name: 'Add people' });
          await add.pressSequentially('cy y', { delay: 60 });
          await add.press('Enter');
          assert.equal(await add.inputValue(), '');
          const added = dialog.getByRole('list', { name: 'People added' }).getByRole('listitem');
          await added.getByRole('combobox', { name: 'Role of Cy Young' }).selectOption({ label: 'Can edit' });
        });
        const cyBox = cy.getByRole('textbox', { name: 'Document' });
        await cyBox.waitFor({ timeout: 5000 });
        await cyBox.click();
        await cy.keyboard.press('Control+End');
        await cy.keyboard.type(' Cy adds.', { delay: 60 });
        await until(
          async () => (await bob.getByRole('textbox', { name: 'Document' }).innerText()).includes('Cy adds.'),
          'Bob sees Cy’s typing',
        );

        // Dropped to commenter: Cy's page goes read-only at once and says so.
        await shareAs(bob, async (dialog) => {
          await dialog
            .getByRole('combobox', { name: 'Role of Cy Young' })
            .selectOption({ label: 'Can comment' });
        });
        await cy.getByText('You can comment', { exact: true }).waitFor({ timeout: 5000 });
        assert.equal(await cyBox.count(), 0);
        await cy.getByText('Cy adds.').waitFor();
        await cy
          .getByRole('complementary', { name: 'Comments' })
          .getByRole('textbox', { name: 'New comment' })
          .waitFor();
        if (SHOTS && db.name === 'sqlite')
          await cy.screenshot({ path: join(SHOTS, 'read-view-commenter.png') });

        // Only people added, and Cy removed: Cy's page reads the document as not found.
        await shareAs(bob, async (dialog) => {
          await dialog
            .getByRole('combobox', { name: 'Who can open it' })
            .selectOption({ label: 'Only people added' });
          assert.equal(await dialog.getByRole('combobox', { name: 'Their role' }).count(), 0);
          await dialog
            .getByRole('listitem')
            .filter({ hasText: 'Cy Young' })
            .getByRole('button', { name: 'Remove' })
            .click();
        });
        await cy.getByRole('heading', { name: 'Document not found' }).waitFor({ timeout: 5000 });
        assert.equal(await cy.getByText('Shared words.').count(), 0);
        const again = await open(await app.signedIn('cy@acme.test'), app.url(`/documents/${id}`));
        await again.getByRole('heading', { name: 'Document not found' }).waitFor();
        const sharing = await app.h.services.sharing.get(app.h.actor('bob@acme.test'), id);
        assert.deepEqual(sharing, { scope: 'user', scope_role: 'editor', people: [] });
      });

      it('the Share dialog works from the keyboard and fits a phone', async () => {
        const plan = await app.h.services.deps.db
          .selectFrom('artifacts')
          .select('id')
          .where('title', '=', 'Private plan')
          .executeTakeFirstOrThrow();
        for (const width of [1280, 390]) {
          const page = await open(
            await app.signedIn('ada@acme.test', { width, height: width > 500 ? 800 : 844 }),
            app.url(`/documents/${plan.id}`),
          );
          await page.getByRole('textbox', { name: 'Document' }).waitFor();
          const share = page.getByRole('button', { name: 'Share' });
          await share.focus();
          await page.keyboard.press('Enter');
          const dialog = page.getByRole('dialog', { name: 'Share' });
          const people = dialog.getByRole('list', { name: 'People added' });
          await people.getByRole('listitem').filter({ hasText: 'Bob Stone' }).waitFor();
          assert.equal(
            await people.getByRole('combobox', { name: 'Role of Bob Stone' }).inputValue(),
            'commenter',
          );
          assert.equal(
            await people.getByRole('combobox', { name: 'Role of Cy Young' }).inputValue(),
            'viewer',
          );
          // The focus starts inside the dialog.
          assert.ok(await dialog.evaluate((d) => d.contains(document.activeElement)));
          if (SHOTS && db.name === 'sqlite') {
            await page.screenshot({ path: join(SHOTS, `share-dialog-${width}.png`) });
          }
          await page.keyboard.press('Escape');
          await dialog.waitFor({ state: 'hidden' });
        }
      });

      it('a table opens showing its rows read-only, and no socket is asked for', async () => {
        const budget = app.h.ids.Acme!.artifacts.budget!;
        const page = await (await app.signedIn('bob@acme.test')).newPage();
        const tickets: string[] = [];
        page.on('request', (r) => {
          if (r.url().includes('/api/collab/tickets')) tickets.push(r.url());
        });
        await page.goto(app.url(`/documents/${budget}`));
        await page.getByRole('heading', { name: 'Budget' }).waitFor();
        const table = page.getByRole('table').filter({ hasText: 'Laptop' });
        await table.getByRole('cell', { name: '1200' }).waitFor();
        assert.deepEqual(await table.getByRole('columnheader').allTextContents(), ['Item', 'Cost']);
        assert.equal(await page.getByRole('textbox', { name: 'Document' }).count(), 0);
        assert.equal(await page.getByText('could not be opened').count(), 0);
        await page.waitForLoadState('networkidle');
        assert.deepEqual(tickets, []);
        if (SHOTS && db.name === 'sqlite') await page.screenshot({ path: join(SHOTS, 'table-budget.png') });
      });

      it('Export downloads the text read at that version, and the export appears in Versions', async () => {
        const made = await app.h.services.documents.create(app.h.actor('ada@acme.test'), {
          title: 'Export me',
          scope: 'org',
          scope_role: 'viewer',
          content_markdown: '# Export me\n\n- [ ] a task\n\nSome *words*.\n',
        });
        const page = await open(
          await app.signedIn('cy@acme.test'),
          app.url(`/documents/${made.document_id}`),
        );
        await page.getByText('You can view', { exact: true }).waitFor();
        for (const [format, ext] of [
          ['Markdown', 'md'],
          ['HTML', 'html'],
        ] as const) {
          await page.getByRole('button', { name: 'Export' }).click();
          const menu = page.getByRole('menu', { name: 'Export' });
          const [download] = await Promise.all([
            page.waitForEvent('download'),
            menu.getByRole('menuitem', { name: format }).click(),
          ]);
          assert.equal(download.suggestedFilename(), `Export me.${ext}`);
          const text = readFileSync((await download.path())!, 'utf8');
          const read = await readAs('cy@acme.test', made.document_id);
          if (format === 'Markdown') assert.equal(text, read);
          else assert.match(text, /<h1[^>]*>Export me<\/h1>[\s\S]*<em>words<\/em>/);
          await page
            .getByRole('region', { name: 'Versions' })
            .getByRole('row')
            .filter({ hasText: `exported as ${format}` })
            .filter({ hasText: 'export by Cy Young' })
            .waitFor();
        }

        // A page exports as HTML only, from the keyboard.
        const landing = app.h.ids.Acme!.artifacts.landing!;
        const pagePage = await open(await app.signedIn('cy@acme.test'), app.url(`/pages/${landing}`));
        const exportButton = pagePage.getByRole('button', { name: 'Export' });
        await exportButton.focus();
        await pagePage.keyboard.press('Enter');
        const items = pagePage.getByRole('menu', { name: 'Export' }).getByRole('menuitem');
        assert.deepEqual(await items.allInnerTexts(), ['HTML']);
        const [download] = await Promise.all([
          pagePage.waitForEvent('download'),
          pagePage.keyboard.press('Enter'),
        ]);
        const html = readFileSync((await download.path())!, 'utf8');
        const read = await app.h.services.pages.read(app.h.actor('cy@acme.test'), landing);
        assert.equal(html, read.html);
      });
    });
  }
});
