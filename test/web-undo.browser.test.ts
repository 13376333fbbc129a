import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import { editorPage, newDocument, press, serverMarkdown, typeLikeAPerson, until } from './support/editor.ts';
import { openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/** Screenshots of the versions panel and its dialogs, for looking at (TANDEM_SCREENSHOTS=dir keeps them). */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

const editorText = async (page: Page) =>
  (await page.getByRole('textbox', { name: 'Document' }).innerText()).replace(/\n+$/, '');

describe('agent changes: see them, undo one', { skip: SKIP_BROWSER }, () => {
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
      const shot = async (page: Page, name: string) => {
        if (SHOTS && db.name === 'sqlite') await page.screenshot({ path: join(SHOTS, `${name}.png`) });
      };

      it('shows what a write added, and undoes it while another person types, keeping their words', async () => {
        const id = await newDocument(app, '# Plan\n\nFirst point.\n\nSecond point.\n', 'Undo plan');
        await docs().edit(ada(), {
          document_id: id,
          mode: 'append',
          content_markdown: '\nThe agent wrote this paragraph.\n',
        });
        const adaPage = await editorPage(app, 'ada@acme.test', id);
        const bobPage = await editorPage(app, 'bob@acme.test', id);
        for (const page of [adaPage, bobPage]) {
          await until(
            async () => (await editorText(page)).includes('The agent wrote this'),
            'the write shows',
          );
        }
        const versions = adaPage.getByRole('region', { name: 'Versions' });
        const row = versions.getByRole('row').filter({ hasText: 'agent edit' }).first();
        await row.getByText('agent edit by Agent for Ada Lovelace').waitFor();
        assert.equal(await versions.getByText('someone').count(), 0, 'no row is by “someone”');

        // Show changes: what the write added, as ins.
        await row.getByRole('button', { name: 'Show changes' }).click();
        const changes = adaPage.getByRole('dialog', { name: 'Changes' });
        await changes.locator('ins').filter({ hasText: 'The agent wrote this paragraph.' }).waitFor();
        await changes.getByText('Agent for Ada Lovelace').waitFor();
        await shot(adaPage, 'undo-show-changes-1280');
        await adaPage.keyboard.press('Escape');
        await changes.waitFor({ state: 'hidden' });

        // Bob is typing in the first point while Ada undoes the write.
        await bobPage.getByRole('textbox', { name: 'Document' }).getByText('First point.').click();
        await press(bobPage, 'End');
        const typing = typeLikeAPerson(bobPage, ' Bob adds more.');
        await bobPage.waitForTimeout(400);
        await row.getByRole('button', { name: 'Undo' }).click();
        await typing;
        await versions
          .getByRole('status')
          .getByText(/^Undid version \d+\./)
          .waitFor();

        const expected = '# Plan\n\nFirst point. Bob adds more.\n\nSecond point.';
        await until(
          async () => (await serverMarkdown(app, id)).trim() === expected,
          'the server has Bob’s words without the agent’s',
        );
        for (const page of [adaPage, bobPage]) {
          await until(async () => {
            const text = await editorText(page);
            return text.includes('First point. Bob adds more.') && !text.includes('The agent wrote');
          }, 'each browser shows the result');
        }
        await versions.getByText(/undid version \d+/).waitFor();
        await shot(adaPage, 'undo-after-1280');
      });

      it('keeps a passage a second person changed after the write, and says so; both browsers show it', async () => {
        const id = await newDocument(app, '# Notes\n\nKeep me.\n', 'Undo kept');
        await docs().edit(ada(), {
          document_id: id,
          mode: 'append',
          content_markdown: '\nAgent line one.\n\nAgent line two.\n',
        });
        const adaPage = await editorPage(app, 'ada@acme.test', id);
        const bobPage = await editorPage(app, 'bob@acme.test', id);
        await until(
          async () => (await editorText(bobPage)).includes('Agent line two.'),
          'Bob sees the write',
        );
        await bobPage.getByRole('textbox', { name: 'Document' }).getByText('Agent line two.').click();
        await press(bobPage, 'End');
        await typeLikeAPerson(bobPage, ' Bob was here.');
        await until(
          async () => (await serverMarkdown(app, id)).includes('Agent line two. Bob was here.'),
          'the server has Bob’s edit',
        );
        const versions = adaPage.getByRole('region', { name: 'Versions' });
        const row = versions.getByRole('row').filter({ hasText: 'agent edit' }).first();
        await row.getByRole('button', { name: 'Undo' }).click();
        await versions
          .getByRole('status')
          .getByText('1 passage was changed after this write and was kept.', { exact: false })
          .waitFor();
        for (const page of [adaPage, bobPage]) {
          await until(async () => {
            const text = await editorText(page);
            return !text.includes('Agent line one.') && text.includes('Agent line two. Bob was here.');
          }, 'the kept passage shows in both browsers, the rest of the write is gone');
        }
      });

      it('compares a version with now, and restores only after asking; the current version has no Restore', async () => {
        const id = await newDocument(app, 'Old words.\n', 'Restore asks');
        const { version } = await docs().read(ada(), { document_id: id });
        await docs().edit(ada(), {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'New words.\n',
          expected_version: version,
        });
        const page = await editorPage(app, 'ada@acme.test', id);
        await until(async () => (await editorText(page)).includes('New words.'), 'the editor shows it');
        await page.getByLabel('Version name').fill('Now');
        await page.getByRole('button', { name: 'Name this version' }).click();
        const versions = page.getByRole('region', { name: 'Versions' });
        const named = versions.getByRole('row').filter({ hasText: 'Now' });
        await named.waitFor();
        assert.equal(await named.getByRole('button', { name: 'Restore' }).count(), 0);

        const row = versions.getByRole('row').filter({ hasText: 'agent edit' }).first();
        await row.getByRole('button', { name: 'Compare' }).click();
        const compare = page.getByRole('dialog', { name: 'Changes' });
        await compare.locator('ins').filter({ hasText: 'Old words.' }).waitFor();
        await compare.locator('del').filter({ hasText: 'New words.' }).waitFor();
        await compare.getByRole('button', { name: 'Close' }).click();

        await row.getByRole('button', { name: 'Restore' }).click();
        const ask = page.getByRole('dialog', { name: `Restore version ${version}?` });
        await ask.locator('ins').filter({ hasText: 'Old words.' }).waitFor();
        await shot(page, 'undo-restore-dialog-1280');
        await page.setViewportSize({ width: 390, height: 844 });
        await shot(page, 'undo-restore-dialog-390');
        await ask.getByRole('button', { name: 'Cancel' }).click();
        await ask.waitFor({ state: 'hidden' });
        assert.equal(await serverMarkdown(app, id), 'New words.\n', 'cancel changes nothing');
        await versions.getByRole('button', { name: 'Compare' }).first().scrollIntoViewIfNeeded();
        await shot(page, 'undo-versions-390');
        await page.setViewportSize({ width: 1280, height: 800 });

        await row.getByRole('button', { name: 'Restore' }).click();
        await ask.getByRole('button', { name: 'Restore' }).click();
        await until(async () => (await serverMarkdown(app, id)) === 'Old words.\n', 'the version is back');
        await until(async () => (await editorText(page)).trim() === 'Old words.', 'the editor shows it');
      });

      it('marks what an agent wrote in the last day, naming it and the person, until a person edits it', async () => {
        const id = await newDocument(app, '# Diary\n\nA person wrote this.\n', 'Marked');
        await docs().edit(ada(), {
          document_id: id,
          mode: 'append',
          content_markdown: '\nThe agent wrote this line.\n',
        });
        const page = await editorPage(app, 'bob@acme.test', id);
        const marked = page.locator('.cm-line.agent-written.first');
        await marked.filter({ hasText: 'The agent wrote this line.' }).waitFor();
        assert.equal(await marked.getAttribute('data-by'), 'Agent for Ada Lovelace');
        assert.equal(await marked.count(), 1, 'only the agent’s passage is marked');
        await shot(page, 'undo-agent-mark-1280');
        await page.getByRole('textbox', { name: 'Document' }).getByText('The agent wrote this line.').click();
        await press(page, 'End');
        await typeLikeAPerson(page, ' Bob agrees.');
        await marked.waitFor({ state: 'detached' });
        await until(
          async () => (await serverMarkdown(app, id)).includes('The agent wrote this line. Bob agrees.'),
          'the edit is stored',
        );
      });
    });
  }
});
