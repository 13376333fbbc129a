import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DATABASES } from './support/databases.ts';
import {
  editorPage,
  newDocument,
  press,
  serverMarkdown,
  toEnd,
  typeLikeAPerson,
  until,
  untilStored,
} from './support/editor.ts';
import { open, openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/*
 * The live editor shows markdown as a document (the text stays the markdown) and formats it
 * from the `Formatting` toolbar and the keyboard; the read view renders the same.
 * TANDEM_SCREENSHOTS=dir keeps screenshots of it at 1280 and 390 px wide.
 */

const SHOTS = process.env.TANDEM_SCREENSHOTS;

const SAMPLE = [
  '# Launch plan',
  '',
  'We ship **on Friday** with *care*, see [the brief](https://example.com/brief) and `npm run ship`.',
  '',
  '- Write the notes',
  '- Tell the team',
  '',
  '- [x] Book the room',
  '- [ ] Order cake',
  '',
  '> Done is better than perfect.',
  '',
  '```',
  'npm run build',
  '```',
  '',
].join('\n');

/** The computed style of the first element matching `selector` in the editor whose text is `text`. */
async function styleOf(box: Locator, selector: string, text: string) {
  return box.evaluate(
    (el, [sel, t]) => {
      const found = [...el.querySelectorAll<HTMLElement>(sel!)].find((e) => e.textContent === t);
      if (!found) return null;
      const s = getComputedStyle(found);
      return { fontSize: parseFloat(s.fontSize), fontWeight: Number(s.fontWeight), color: s.color };
    },
    [selector, text],
  );
}

/** Whether the page is wider than the window (a horizontal scroll bar). */
const overflows = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe('formatting in the live editor', { skip: SKIP_BROWSER }, () => {
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

      it('draws the markdown: headings larger, emphasis, links, boxes; markers only on the cursor line', async () => {
        const id = await newDocument(app, SAMPLE, 'Launch');
        const page = await editorPage(app, 'bob@acme.test', id);
        const box = page.getByRole('textbox', { name: 'Document' });
        await until(
          async () => (await box.textContent())?.includes('Order cake') === true,
          'the text is there',
        );
        // The text is the markdown, markers and all.
        assert.equal(await box.textContent(), SAMPLE.replace(/\n/g, ''));
        const body = await styleOf(box, '.cm-line', SAMPLE.split('\n')[2]!);
        const heading = await styleOf(box, '.cm-line', '# Launch plan');
        assert.ok(body && heading && heading.fontSize > body.fontSize * 1.4, 'the heading is larger');
        assert.equal((await styleOf(box, '.cm-md-strong', '**on Friday**'))?.fontWeight, 700);
        // Away from the cursor the markers take no room; on its line they show, dimmed.
        assert.equal((await styleOf(box, '.cm-md-hide', '# '))?.fontSize, 0);
        await box.getByRole('checkbox', { name: 'Order cake' }).waitFor();
        await box.getByRole('checkbox', { name: 'Book the room', checked: true }).waitFor();
        await box.click();
        await press(page, 'Control+Home');
        const mark = await styleOf(box, '.cm-md-mark', '# ');
        assert.ok(mark && mark.fontSize > 0, 'the heading marker shows on the cursor line');
        assert.notEqual(mark.color, heading.color, 'dimmed');
        if (SHOTS && db.name === 'sqlite') {
          await press(page, 'ArrowDown', 'ArrowDown', 'End');
          await page.screenshot({ path: join(SHOTS, 'editor-1280.png') });
        }
        await page.setViewportSize({ width: 390, height: 844 });
        await until(async () => !(await overflows(page)), 'no horizontal scrolling at 390 px');
        const bar = page.getByRole('toolbar', { name: 'Formatting' });
        for (const button of await bar.getByRole('button').all()) {
          const r = await button.boundingBox();
          assert.ok(
            r && r.x >= 0 && r.x + r.width <= 390 && r.width >= 32,
            'every tool is on screen and big enough',
          );
        }
        if (SHOTS && db.name === 'sqlite')
          await page.screenshot({ path: join(SHOTS, 'editor-390.png'), fullPage: true });
      });

      it('Bold, Italic, Code and Link from the toolbar and with Ctrl+B, +I, +E, +K; again unwraps', async () => {
        const id = await newDocument(app, 'Intro\n');
        const page = await editorPage(app, 'bob@acme.test', id);
        const bar = page.getByRole('toolbar', { name: 'Formatting' });
        await toEnd(page);
        await typeLikeAPerson(page, 'Ship it now');
        // A selection: "now", made with Shift+arrows, then Bold.
        await press(page, 'Shift+ArrowLeft', 'Shift+ArrowLeft', 'Shift+ArrowLeft');
        await bar.getByRole('button', { name: 'Bold' }).click();
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\nShip it **now**', 'bold wraps');
        // The selection stays on the word: Bold again unwraps it.
        await bar.getByRole('button', { name: 'Bold' }).click();
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\nShip it now', 'bold unwraps');
        // No selection: the word at the cursor. Ctrl+I in "Ship", Ctrl+E in "it".
        await press(page, 'Home', 'ArrowRight', 'ArrowRight', 'Control+i');
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\n*Ship* it now', 'italic');
        await press(page, 'End', 'Control+ArrowLeft', 'Control+ArrowLeft', 'ArrowRight', 'Control+e');
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\n*Ship* `it` now', 'code');
        await press(page, 'Control+b');
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\n*Ship* `**it**` now', 'Ctrl+B');
        await press(page, 'Control+b', 'Control+e');
        await until(async () => (await serverMarkdown(app, id)) === 'Intro\n*Ship* it now', 'both undone');
        // Ctrl+K on "now": the address is selected, ready to be typed over.
        await press(page, 'End', 'Control+k');
        await typeLikeAPerson(page, 'https://tandem.test/now');
        await untilStored(app, id, 'Intro\n*Ship* it [now](https://tandem.test/now)');
      });

      it('headings, lists, checklists and quotes from the toolbar with the keyboard alone, at 390 px', async () => {
        const id = await newDocument(app, 'Title\nalpha\nbeta\nA thought\n');
        const page = await editorPage(app, 'bob@acme.test', id, { width: 390, height: 844 });
        const box = page.getByRole('textbox', { name: 'Document' });
        const bar = page.getByRole('toolbar', { name: 'Formatting' });
        await box.focus();
        /** From the editor: Shift+Tab to the toolbar, arrows to the tool, Enter; focus comes back. */
        const useTool = async (name: string) => {
          await press(page, 'Shift+Tab');
          const inBar = () => bar.evaluate((el) => el.contains(document.activeElement));
          await until(inBar, 'Shift+Tab reaches the toolbar');
          for (let i = 0; i < 12; i++) {
            const label = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
            if (label === name) break;
            await press(page, 'ArrowRight');
          }
          assert.equal(await inBar(), true);
          await press(page, 'Enter');
          await until(
            async () => (await box.evaluate((el) => el === document.activeElement)) === true,
            'focus back',
          );
        };
        await press(page, 'Control+Home');
        await useTool('Heading');
        await until(async () => (await serverMarkdown(app, id)).startsWith('# Title\n'), 'a heading');
        await press(page, 'ArrowDown', 'Shift+ArrowDown');
        await useTool('Bulleted list');
        await until(async () => (await serverMarkdown(app, id)).includes('\n- alpha\n- beta\n'), 'bullets');
        await useTool('Numbered list');
        await until(async () => (await serverMarkdown(app, id)).includes('\n1. alpha\n2. beta\n'), 'numbers');
        await useTool('Checklist');
        await until(
          async () => (await serverMarkdown(app, id)).includes('\n- [ ] alpha\n- [ ] beta\n'),
          'tasks',
        );
        await press(page, 'Control+End', 'ArrowUp');
        await useTool('Quote');
        await untilStored(app, id, '# Title\n- [ ] alpha\n- [ ] beta\n> A thought\n');
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= 390), true);
      });

      it('a click on a check box toggles it, for the other person too; the read view renders the same', async () => {
        const id = await newDocument(app, SAMPLE, 'Tasks');
        const bob = await editorPage(app, 'bob@acme.test', id);
        const ada = await editorPage(app, 'ada@acme.test', id);
        await bob
          .getByRole('textbox', { name: 'Document' })
          .getByRole('checkbox', { name: 'Order cake' })
          .click();
        await until(async () => (await serverMarkdown(app, id)).includes('- [x] Order cake'), 'checked');
        await ada.getByRole('checkbox', { name: 'Order cake', checked: true }).waitFor();
        await ada.getByRole('checkbox', { name: 'Book the room' }).click();
        await untilStored(
          app,
          id,
          SAMPLE.replace('- [x] Book', '- [ ] Book').replace('- [ ] Order', '- [x] Order'),
        );

        // Cy may only view the private plan: the same markdown, rendered.
        const ada_ = app.h.actor('ada@acme.test');
        const plan = await app.h.services.deps.db
          .selectFrom('artifacts')
          .select('id')
          .where('title', '=', 'Private plan')
          .executeTakeFirstOrThrow();
        const { version } = await app.h.services.documents.read(ada_, { document_id: plan.id });
        await app.h.services.documents.edit(ada_, {
          document_id: plan.id,
          mode: 'replace_all',
          content_markdown: SAMPLE,
          expected_version: version,
        });
        const cy = await open(await app.signedIn('cy@acme.test'), app.url(`/documents/${plan.id}`));
        await cy.getByRole('heading', { name: 'Launch plan' }).waitFor();
        assert.equal(await cy.getByRole('textbox', { name: 'Document' }).count(), 0);
        await cy.locator('.prose strong', { hasText: 'on Friday' }).waitFor();
        await cy.locator('.prose em', { hasText: 'care' }).waitFor();
        await cy.getByRole('link', { name: 'the brief' }).waitFor();
        await cy.locator('.prose code', { hasText: 'npm run ship' }).waitFor();
        // The boxes are drawn, ticked as in the text: glyphs, never something to tick.
        await cy.locator('.prose li', { hasText: '☑ Book the room' }).waitFor();
        await cy.locator('.prose li', { hasText: '☐ Order cake' }).waitFor();
        assert.equal(await cy.locator('.prose input, .prose [role=checkbox]').count(), 0);
        await cy.locator('.prose blockquote', { hasText: 'Done is better than perfect.' }).waitFor();
        await cy.locator('.prose pre', { hasText: 'npm run build' }).waitFor();
        const sizes = await cy.evaluate(() => {
          const size = (sel: string) =>
            parseFloat(getComputedStyle(document.querySelector(`.prose ${sel}`)!).fontSize);
          return { h1: size('h1'), p: size('p') };
        });
        assert.ok(sizes.h1 > sizes.p * 1.4, 'the heading is larger');
        if (SHOTS && db.name === 'sqlite') await cy.screenshot({ path: join(SHOTS, 'read-view-1280.png') });
      });
    });
  }
});
