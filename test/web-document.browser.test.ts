import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import { JSDOM } from 'jsdom';
import { problemsIn } from './support/rendered-checks.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { controlVectors, HARMLESS_MARKDOWN } from './support/xss-vectors.ts';

/** Screenshots of the document page, for looking at (TANDEM_SCREENSHOTS=dir keeps them). */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The editor's text as shown (one line per line; trailing blank lines left out). */
const editorText = async (page: Page) =>
  (await page.getByRole('textbox', { name: 'Document' }).innerText()).replace(/\n+$/, '');

describe('the document page', { skip: SKIP_BROWSER }, () => {
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

      const ada = () => app.h.actor('ada@acme.test');
      const docs = () => app.h.services.documents;
      async function create(markdown: string, title = 'Live notes'): Promise<string> {
        const made = await docs().create(ada(), { title, scope: 'org', content_markdown: markdown });
        return made.document_id;
      }
      const markdown = async (id: string) => (await docs().read(ada(), { document_id: id })).markdown;
      const url = (id: string) => app.url(`/documents/${id}`);

      async function editorPage(email: string, id: string, viewport?: { width: number; height: number }) {
        const context = await app.signedIn(email, viewport);
        const page = await open(context, url(id));
        await page.getByRole('textbox', { name: 'Document' }).waitFor();
        return page;
      }

      it('a person types and read_document sees it; an agent appends and the editor shows it', async () => {
        const id = await create('# Plan\n\nStep one.\n');
        const page = await editorPage('bob@acme.test', id);
        const box = page.getByRole('textbox', { name: 'Document' });
        await until(async () => (await editorText(page)).includes('Step one.'), 'the editor shows the text');
        await box.click();
        await page.keyboard.press('Control+End');
        await page.keyboard.type('Typed by Bob.');
        await until(
          async () => (await markdown(id)).includes('Typed by Bob.'),
          'read_document sees the typing',
        );
        assert.equal(await markdown(id), '# Plan\n\nStep one.\nTyped by Bob.');

        await docs().edit(ada(), {
          document_id: id,
          mode: 'append',
          content_markdown: 'Appended by an agent.\n',
        });
        await until(
          async () => (await editorText(page)).includes('Appended by an agent.'),
          'the editor shows the append without a reload',
        );
        await page.getByRole('list', { name: 'People here' }).getByText('Bob Stone').waitFor();
        if (SHOTS && db.name === 'sqlite') {
          await page.screenshot({ path: join(SHOTS, 'document-editor.png') });
        }
      });

      it('a document past the live bounds opens read-only, saying why', async () => {
        // Agents write up to 60,000 characters a call; five calls take it past 250,000.
        const chunk = 'A paragraph an agent wrote, long enough to count. '
          .repeat(20)
          .concat('\n\n')
          .repeat(58);
        const id = await create(chunk, 'Very long');
        for (let i = 0; i < 4; i++) {
          await docs().edit(ada(), { document_id: id, mode: 'append', content_markdown: chunk });
        }
        for (const viewport of [
          { width: 1280, height: 800 },
          { width: 390, height: 800 },
        ]) {
          const context = await app.signedIn('bob@acme.test', viewport);
          const page = await open(context, url(id));
          const status = page.getByRole('status').filter({ hasText: 'read-only' });
          await status.waitFor();
          assert.match(
            await status.innerText(),
            /This document is read-only here: it holds [\d,]+ characters, past the limit of 250,000 for live editing/,
          );
          assert.equal(await page.getByRole('textbox', { name: 'Document' }).count(), 0);
          if (SHOTS) await page.screenshot({ path: join(SHOTS, `document-read-only-${viewport.width}.png`) });
        }
      });

      it('two browsers converge', async () => {
        const id = await create('Shared text.\n');
        const bob = await editorPage('bob@acme.test', id);
        const ada = await editorPage('ada@acme.test', id);
        await ada.getByRole('list', { name: 'People here' }).getByText('Bob Stone').waitFor();
        await bob.getByRole('textbox', { name: 'Document' }).click();
        await ada.getByRole('textbox', { name: 'Document' }).click();
        await bob.keyboard.press('Control+Home');
        await ada.keyboard.press('Control+End');
        await Promise.all([bob.keyboard.type('Bob first. '), ada.keyboard.type('Ada last.')]);
        await until(async () => {
          const [a, b] = [await editorText(ada), await editorText(bob)];
          return a === b && a.includes('Bob first.') && a.includes('Ada last.');
        }, 'both editors show both edits');
        await until(
          async () => (await markdown(id)) === 'Bob first. Shared text.\nAda last.',
          'the server has both',
        );
        if (SHOTS && db.name === 'sqlite') {
          await ada.setViewportSize({ width: 390, height: 844 });
          await ada.screenshot({ path: join(SHOTS, 'document-phone.png'), fullPage: true });
        }
      });

      it('a viewer reads the rendered document and cannot edit; archived documents offer no editing', async () => {
        const plan = await app.h.services.deps.db
          .selectFrom('artifacts')
          .select('id')
          .where('title', '=', 'Private plan')
          .executeTakeFirstOrThrow();
        const cy = await open(await app.signedIn('cy@acme.test'), url(plan.id));
        await cy.getByText('Draft.').waitFor();
        assert.equal(await cy.getByRole('textbox', { name: 'Document' }).count(), 0);
        assert.equal(await cy.getByRole('button', { name: 'Restore' }).count(), 0);

        const archived = await create('Old words.\n', 'Archived notes');
        await app.h.services.deps.db
          .updateTable('artifacts')
          .set({ status: 'archived' })
          .where('id', '=', archived)
          .execute();
        const page = await open(await app.signedIn('ada@acme.test'), url(archived));
        await page.getByText('This document is archived').waitFor();
        await page.getByText('Old words.').waitFor();
        assert.equal(await page.getByRole('textbox', { name: 'Document' }).count(), 0);
      });

      it('the read view shows no control and no link to the app’s own actions, whatever the document holds', async () => {
        const vectors = controlVectors(new URL(app.url('/')).origin);
        const id = await create(
          [HARMLESS_MARKDOWN, ...vectors.map((v) => v.markdown)].join('\n\n'),
          'Controls and links',
        );
        await app.h.services.deps.db
          .updateTable('artifacts')
          .set({ status: 'archived' })
          .where('id', '=', id)
          .execute();
        const page = await open(await app.signedIn('ada@acme.test'), url(id));
        const prose = page.locator('.prose');
        await prose.getByRole('heading', { name: 'Heading' }).waitFor();
        assert.equal(
          await prose
            .locator('form, input, button, select, textarea, [contenteditable], [formaction]')
            .count(),
          0,
        );
        assert.equal(await prose.getByRole('checkbox').count(), 0, 'a task is a glyph');
        await prose.getByText('☑ shipped').waitFor();
        // Every link and source the reader's browser holds, checked against the routes that act.
        const shown = new JSDOM(`<!doctype html><div>${await prose.innerHTML()}</div>`).window.document;
        assert.deepEqual(problemsIn(shown.body, page.url()), []);
        assert.equal(
          await prose.getByRole('link', { name: 'page of the app' }).getAttribute('href'),
          '/documents/doc_1',
        );
        // What was a link to /logout is text, and nothing on the page signed anyone out.
        assert.equal(
          await prose.getByRole('link', { name: 'sign out' }).count(),
          0,
          'the /logout link is text only',
        );
        const me = await page.evaluate(async () => (await fetch('/api/me')).status);
        assert.equal(me, 200, 'still signed in');
      });

      it('starts a thread from a selection, replies and resolves it', async () => {
        const id = await create('# Notes\n\nThe budget is final.\n');
        const page = await editorPage('ada@acme.test', id);
        const box = page.getByRole('textbox', { name: 'Document' });
        await until(async () => (await editorText(page)).includes('budget'), 'the text is there');
        // Select "budget is final" with the keyboard.
        await box.click();
        await page.keyboard.press('Control+End');
        await page.keyboard.press('ArrowUp');
        await page.keyboard.press('Home');
        for (let i = 0; i < 'The '.length; i++) await page.keyboard.press('ArrowRight');
        for (let i = 0; i < 'budget is final'.length; i++) await page.keyboard.press('Shift+ArrowRight');
        const comments = page.getByRole('complementary', { name: 'Comments' });
        await until(
          async () => (await comments.getByLabel('Quote (optional)').inputValue()) === 'budget is final',
          'the selection becomes the quote',
        );
        await comments.getByLabel('New comment').fill('Is it really?');
        await comments.getByRole('button', { name: 'Comment' }).click();
        const thread = comments.getByRole('article');
        await thread.getByText('Is it really?').waitFor();
        await thread.locator('blockquote', { hasText: 'budget is final' }).waitFor();
        await thread.getByLabel('Reply').fill('Yes, signed off.');
        await thread.getByRole('button', { name: 'Send' }).click();
        // The posted reply, not the words still in the Reply box.
        await thread.locator('.reply p', { hasText: 'Yes, signed off.' }).waitFor();
        await thread.getByRole('button', { name: 'Resolve' }).click();
        await until(
          async () => (await comments.getByRole('article').count()) === 0,
          'the thread is resolved',
        );
        const read = await app.h.services.comments.read(ada(), { document_id: id, include_resolved: true });
        assert.equal(read.threads[0]?.status, 'resolved');
        assert.equal(read.threads[0]?.anchor_excerpt, 'budget is final');
      });

      it('names a version and restores one', async () => {
        const id = await create('First words.\n');
        const { version } = await docs().read(ada(), { document_id: id });
        await docs().edit(ada(), {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'Second words.\n',
          expected_version: version,
        });
        const page = await editorPage('ada@acme.test', id);
        await until(async () => (await editorText(page)).includes('Second words.'), 'the editor shows it');
        await page.getByLabel('Version name').fill('Before the review');
        await page.getByRole('button', { name: 'Name this version' }).click();
        const versions = page.getByRole('region', { name: 'Versions' });
        await versions.getByText('Before the review').waitFor();
        // The agent edit's row holds the text before it: restore it.
        const row = versions.getByRole('row').filter({ hasText: 'agent edit' }).first();
        await row.getByRole('button', { name: 'Restore' }).click();
        // Restoring asks first, showing what would come back.
        const ask = page.getByRole('dialog', { name: `Restore version ${version}?` });
        await ask.locator('ins').filter({ hasText: 'First words.' }).waitFor();
        await ask.getByRole('button', { name: 'Restore' }).click();
        await until(async () => (await markdown(id)) === 'First words.\n', 'the text is the version’s');
        await until(async () => (await editorText(page)).trim() === 'First words.', 'the editor shows it');
        // The restore is stored like a person's edit: within a moment, with its own row.
        const versionRows = async () => (await docs().versions(ada(), { document_id: id })).versions;
        await until(async () => (await versionRows()).some((r) => r.reason === 'restore'), 'a restore row');
        const rows = await versionRows();
        const restore = rows.find((r) => r.reason === 'restore');
        assert.ok(restore, 'a restore row');
        assert.equal(restore.author_label, 'Ada Lovelace');
        const named = rows.find((r) => r.reason === 'named');
        assert.equal(named?.pinned, true);
        assert.equal(named?.label, 'Before the review');
        await versions.getByText('restore by Ada Lovelace').waitFor();
      });
    });
  }
});
