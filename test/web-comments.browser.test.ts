import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/** Screenshots, for looking at (TANDEM_SCREENSHOTS=dir keeps them). */
const SHOTS = process.env.TANDEM_SCREENSHOTS;
/** A person's typing: about twelve keys a second. */
const TYPING = { delay: 80 };

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const editorText = async (page: Page) =>
  (await page.getByRole('textbox', { name: 'Document' }).innerText()).replace(/\n+$/, '');

/**
 * The highlighted passages of this person's threads: role `mark`, named `Comment by <author>…`.
 * (Chromium exposes that name; Playwright's own name computation leaves `mark` unnamed, as ARIA
 * prohibits naming it, so the name is matched through its label.)
 */
const marksBy = (page: Page, author: string) =>
  page.locator('role=mark').and(page.getByLabel(new RegExp(`^Comment by ${author}`)));

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

describe('comments in context', { skip: SKIP_BROWSER }, () => {
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
      async function create(markdown: string, title = 'Budget notes'): Promise<string> {
        return (await docs().create(ada(), { title, scope: 'org', content_markdown: markdown })).document_id;
      }
      const url = (id: string) => app.url(`/documents/${id}`);
      async function editorPage(email: string, id: string, viewport?: { width: number; height: number }) {
        const context = await app.signedIn(email, viewport);
        const page = await open(context, url(id));
        await page.getByRole('textbox', { name: 'Document' }).waitFor();
        return page;
      }

      /** Selects `words` on the editor's last text line with the keyboard. */
      async function selectOnLastLine(page: Page, before: string, words: string) {
        const box = page.getByRole('textbox', { name: 'Document' });
        await box.click();
        await page.keyboard.press('Control+End');
        await page.keyboard.press('ArrowUp');
        await page.keyboard.press('Home');
        for (let i = 0; i < before.length; i++) await page.keyboard.press('ArrowRight');
        for (let i = 0; i < words.length; i++) await page.keyboard.press('Shift+ArrowRight');
      }

      it('two people: a thread, its replies, resolving and reopening reach the other without a reload, highlighted where its passage is', async () => {
        const id = await create('# Budget\n\nThe budget is final for this year.\n');
        const adaPage = await editorPage('ada@acme.test', id);
        const bobPage = await editorPage('bob@acme.test', id);
        await until(async () => (await editorText(bobPage)).includes('budget'), 'Bob sees the text');

        // Ada selects a passage and comments on it, typing as a person does.
        await selectOnLastLine(adaPage, 'The ', 'budget is final');
        const adaComments = adaPage.getByRole('complementary', { name: 'Comments' });
        await until(
          async () => (await adaComments.getByLabel('Quote (optional)').inputValue()) === 'budget is final',
          'the selection becomes the quote',
        );
        await adaComments.getByLabel('New comment').click();
        await adaPage.keyboard.type('Is it really final?', TYPING);
        await adaComments.getByRole('button', { name: 'Comment' }).click();
        const sent = Date.now();

        // Bob sees it, highlighted in his editor, without reloading.
        const bobComments = bobPage.getByRole('complementary', { name: 'Comments' });
        await bobComments.getByText('Is it really final?').waitFor({ timeout: 10_000 });
        const mark = marksBy(bobPage, 'Ada Lovelace');
        await mark.first().waitFor();
        console.log(`# the thread reached the other browser in ${Date.now() - sent} ms`);
        assert.equal((await mark.allInnerTexts()).join(''), 'budget is final');
        await marksBy(adaPage, 'Ada Lovelace').first().waitFor();

        // Ada types before the passage: the highlight follows its words in both editors.
        await adaPage.getByRole('textbox', { name: 'Document' }).click();
        await adaPage.keyboard.press('Control+End');
        await adaPage.keyboard.press('ArrowUp');
        await adaPage.keyboard.press('Home');
        await adaPage.keyboard.type('Note: ', TYPING);
        await until(
          async () => (await editorText(bobPage)).includes('Note: The budget'),
          'Bob sees the edit',
        );
        await until(
          async () => (await marksBy(bobPage, 'Ada Lovelace').allInnerTexts()).join('') === 'budget is final',
          'the highlight follows the passage in Bob’s editor',
        );
        assert.equal((await marksBy(adaPage, 'Ada Lovelace').allInnerTexts()).join(''), 'budget is final');

        // Passage → thread: Bob clicks the highlight and his thread has the focus.
        const thread = bobComments.getByRole('article', { name: 'Thread by Ada Lovelace' });
        const threadId = await thread.getAttribute('id');
        await marksBy(bobPage, 'Ada Lovelace').first().click();
        await until(async () => (await focusedId(bobPage)) === threadId, 'the thread is focused');

        // By keyboard: Alt+Enter with the cursor in the passage does the same.
        await thread.getByRole('button', { name: 'Show in document' }).click();
        await bobPage.keyboard.press('ArrowLeft');
        await bobPage.getByRole('textbox', { name: 'Document' }).press('Alt+Enter');
        await until(async () => (await focusedId(bobPage)) === threadId, 'Alt+Enter focuses the thread');

        // Thread → passage: Show in document selects it in the editor.
        await thread.getByRole('button', { name: 'Show in document' }).click();
        await until(
          async () => (await bobPage.evaluate(() => window.getSelection()?.toString())) === 'budget is final',
          'the passage is selected',
        );

        // Bob replies, mentioning Ada through the picker.
        await thread.getByLabel('Reply').click();
        await bobPage.keyboard.type('Yes, @Ad', TYPING);
        const picker = bobPage.getByRole('listbox', { name: 'Mention' });
        await picker.getByRole('option', { name: /Ada Lovelace/ }).waitFor();
        await bobPage.keyboard.press('Enter');
        await bobPage.keyboard.type('signed off.', TYPING);
        assert.equal(await thread.getByLabel('Reply').inputValue(), 'Yes, @ada signed off.');
        await thread.getByRole('button', { name: 'Send' }).click();
        const adaThread = adaComments.getByRole('article', { name: 'Thread by Ada Lovelace' });
        await adaThread
          .locator('.reply p', { hasText: 'Yes, @ada signed off.' })
          .waitFor({ timeout: 10_000 });

        // Ada resolves it: it leaves Bob's list and his editor's highlights.
        await adaThread.getByRole('button', { name: 'Resolve' }).click();
        await until(
          async () => (await bobComments.getByRole('article').count()) === 0,
          'Bob sees it resolved',
        );
        await until(async () => (await marksBy(bobPage, 'Ada Lovelace').count()) === 0, 'the highlight goes');

        // Bob reopens it from the resolved threads: Ada sees it and its highlight again.
        await bobComments.getByLabel('Show resolved threads').check();
        await bobComments.getByRole('button', { name: 'Reopen' }).click();
        await adaComments
          .getByRole('article', { name: 'Thread by Ada Lovelace' })
          .waitFor({ timeout: 10_000 });
        await marksBy(adaPage, 'Ada Lovelace').first().waitFor();

        const stored = await app.h.services.comments.read(ada(), { document_id: id });
        assert.equal(stored.threads[0]?.replies[0]?.body, 'Yes, @ada signed off.');
        if (SHOTS) {
          await adaPage.getByRole('textbox', { name: 'Document' }).click();
          await adaPage.screenshot({ path: join(SHOTS, `comments-highlight-1280-${db.name}.png`) });
          await adaPage.setViewportSize({ width: 390, height: 844 });
          await marksBy(adaPage, 'Ada Lovelace').first().click();
          await adaPage.screenshot({
            path: join(SHOTS, `comments-highlight-390-${db.name}.png`),
            fullPage: true,
          });
        }
        await adaPage.context().close();
        await bobPage.context().close();
      });

      it('the Mention picker offers agents (Assistant first) and people, filters as one types, and inserts the handle', async () => {
        const id = await create('Plain words.\n', 'Mentions');
        const page = await editorPage('bob@acme.test', id);
        const comments = page.getByRole('complementary', { name: 'Comments' });
        await comments.getByLabel('New comment').click();
        await page.keyboard.type('Ask @', TYPING);
        const picker = page.getByRole('listbox', { name: 'Mention' });
        await picker.waitFor();
        const names = await picker.getByRole('option').allInnerTexts();
        if (SHOTS) await page.screenshot({ path: join(SHOTS, `comments-mention-1280-${db.name}.png`) });
        assert.match(names[0]!, /^Assistant/);
        assert.ok(
          names.some((n) => /^Builder/.test(n)),
          names.join(', '),
        );
        assert.ok(
          names.some((n) => /Ada Lovelace/.test(n)),
          names.join(', '),
        );
        assert.ok(!names.some((n) => /^PM\b/.test(n)), 'retired handles are not offered');
        // Filtered as one types; Escape closes it and leaves the text.
        await page.keyboard.type('bu', TYPING);
        assert.deepEqual(
          (await picker.getByRole('option').allInnerTexts()).map((n) => n.split(/\s/)[0]),
          ['Builder'],
        );
        if (SHOTS) {
          await page.setViewportSize({ width: 390, height: 844 });
          await comments.getByLabel('New comment').scrollIntoViewIfNeeded();
          await page.screenshot({ path: join(SHOTS, `comments-mention-390-${db.name}.png`) });
          await page.setViewportSize({ width: 1280, height: 800 });
        }
        await page.keyboard.press('Escape');
        await picker.waitFor({ state: 'detached' });
        assert.equal(await comments.getByLabel('New comment').inputValue(), 'Ask @bu');
        // A click inserts too.
        await page.keyboard.press('Backspace');
        await page.keyboard.press('Backspace');
        await page.keyboard.type('As', TYPING);
        await picker.getByRole('option', { name: /^Assistant/ }).click();
        assert.equal(await comments.getByLabel('New comment').inputValue(), 'Ask @Assistant ');
        await page.keyboard.type('what is left?', TYPING);
        await comments.getByRole('button', { name: 'Comment' }).click();
        await comments
          .getByRole('article', { name: 'Thread by Bob Stone' })
          .getByText('Ask @Assistant what is left?')
          .waitFor();
        const read = await app.h.services.comments.read(ada(), { document_id: id });
        assert.deepEqual(read.threads[0]?.agent_requests, ['Assistant']);
        // The assistant's answer (no model here: it says so) arrives without a reload.
        await comments
          .getByRole('article', { name: 'Thread by Bob Stone' })
          .locator('.reply', { hasText: 'Assistant' })
          .waitFor({ timeout: 15_000 });
        await page.context().close();
      });

      it('in the read view a commenter sees the passages highlighted; a mark and its thread lead to each other', async () => {
        const plan = app.h.ids.Acme!.artifacts.plan as string; // Bob is a commenter on it
        const { version } = await docs().read(ada(), { document_id: plan });
        await docs().edit(ada(), {
          document_id: plan,
          expected_version: version,
          mode: 'replace_all',
          content_markdown: 'Draft.\n\nWe ship **the new plan** in May.\n',
        });
        await app.h.services.comments.add(ada(), {
          document_id: plan,
          body_markdown: 'Which May?',
          anchor_excerpt: 'ship **the new plan** in May',
        });
        const context = await app.signedIn('bob@acme.test', { width: 390, height: 844 });
        const page = await open(context, url(plan));
        const mark = marksBy(page, 'Ada Lovelace');
        await mark.first().waitFor();
        assert.equal((await mark.allInnerTexts()).join(''), 'ship the new plan in May');
        assert.equal(await page.getByRole('textbox', { name: 'Document' }).count(), 0, 'a read view');
        // Keyboard: Tab to the mark, Enter focuses the thread.
        await mark.first().focus();
        await page.keyboard.press('Enter');
        const thread = page.getByRole('article', { name: 'Thread by Ada Lovelace' });
        const threadId = await thread.getAttribute('id');
        await until(async () => (await focusedId(page)) === threadId, 'the thread is focused');
        if (SHOTS)
          await page.screenshot({ path: join(SHOTS, `comments-read-390-${db.name}.png`), fullPage: true });
        await thread.getByRole('button', { name: 'Show in document' }).click();
        await until(
          async () =>
            (await page.evaluate(() => window.getSelection()?.toString())) === 'ship the new plan in May',
          'the passage is selected',
        );
        await context.close();
      });

      it('a notification of a mention lands on its thread, focused, and is read once opened', async () => {
        const id = await create('Hiring plan.\n', 'Hiring');
        const made = await app.h.services.comments.add(ada(), {
          document_id: id,
          body_markdown: '@bob can you look at this?',
          anchor_excerpt: 'Hiring plan.',
        });
        const bob = app.h.actor('bob@acme.test');
        const context = await app.signedIn('bob@acme.test', { width: 390, height: 844 });
        const page = await open(context, app.url('/notifications'));
        const card = page.getByRole('listitem').filter({ hasText: 'mentioned you on “Hiring”' });
        await card.getByRole('link', { name: 'Open' }).click();
        await page.waitForURL(
          (u) => u.pathname === `/documents/${id}` && u.hash === `#thread-${made.thread_id}`,
        );
        await until(
          async () => (await focusedId(page)) === `thread-${made.thread_id}`,
          'the thread is focused',
        );
        await until(async () => {
          const list = await app.h.services.notifications.list(bob);
          return list.find((n) => n.thread_id === made.thread_id)?.read === true;
        }, 'the notification is read');

        // A page's likewise, from Home: the page viewer with the thread focused.
        const landing = app.h.ids.Acme!.artifacts.landing as string; // Bob is a commenter on it
        const onPage = await app.h.services.comments.add(ada(), {
          document_id: landing,
          body_markdown: '@bob is the welcome right?',
        });
        const home = await open(context, app.url('/'));
        await home
          .getByRole('region', { name: 'Unread notifications' })
          .getByRole('link', { name: /mentioned you on “Landing”/ })
          .click();
        await home.waitForURL(
          (u) => u.pathname === `/pages/${landing}` && u.hash === `#thread-${onPage.thread_id}`,
        );
        await until(
          async () => (await focusedId(home)) === `thread-${onPage.thread_id}`,
          'the page’s thread is focused',
        );
        await until(async () => {
          const list = await app.h.services.notifications.list(bob);
          return list.find((n) => n.thread_id === onPage.thread_id)?.read === true;
        }, 'that notification is read too');
        await context.close();
      });
    });
  }
});
