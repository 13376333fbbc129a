import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
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
import { openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';

/*
 * Writing in the live editor at a person's pace: a key at a time, pauses of 1.5 s, and what the
 * server stores read back. Lists continue on Enter and end on an empty item; Tab indents list
 * items and code, and elsewhere moves focus on without typing anything.
 */

/** What has focus: the editor's text box, or else the name or text of the focused element. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return '';
    return el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 40) ?? el.tagName;
  });

describe('typing in the live editor', { skip: SKIP_BROWSER }, () => {
  for (const db of DATABASES) {
    describe(db.name, () => {
      let app: WebApp;
      before(async () => {
        app = await openWebApp(db);
      });
      after(async () => {
        await app?.close();
      });

      it('a list typed with pauses keeps every space, bullet and Enter, and continues on Enter', async () => {
        const id = await newDocument(app, '# Plan\n\n');
        const page = await editorPage(app, 'bob@acme.test', id);
        await toEnd(page);
        // Enter ends the first item; Bob pauses before each next one, as people do.
        await typeLikeAPerson(page, '- first point\n⏸second point\n⏸third\n\n⏸After the list.');
        await untilStored(app, id, '# Plan\n\n- first point\n- second point\n- third\n\nAfter the list.');
      });

      it('numbers count on, tasks continue with an open box, renumbering follows an insert; Ctrl+Enter ticks, Backspace unmarks', async () => {
        const id = await newDocument(app, 'Steps\n');
        const page = await editorPage(app, 'bob@acme.test', id);
        await toEnd(page);
        await typeLikeAPerson(page, '1. Boil water\n⏸Add tea\n\n- [ ] Buy milk\n⏸Call Ada\n\n');
        await untilStored(app, id, 'Steps\n1. Boil water\n2. Add tea\n\n- [ ] Buy milk\n- [ ] Call Ada\n\n');
        // Enter after the first step: the new one is 2 and the old 2 becomes 3.
        await press(page, 'Control+Home', 'ArrowDown', 'End');
        await typeLikeAPerson(page, '\nWait⏸');
        await untilStored(
          app,
          id,
          'Steps\n1. Boil water\n2. Wait\n3. Add tea\n\n- [ ] Buy milk\n- [ ] Call Ada\n\n',
        );
        // Ctrl+Enter ticks a task; Backspace right after a marker takes the marker away.
        await press(page, 'Control+End', 'ArrowUp', 'ArrowUp', 'ArrowUp', 'Control+Enter');
        await until(async () => (await serverMarkdown(app, id)).includes('- [x] Buy milk'), 'ticked');
        await press(page, 'ArrowDown', 'Home', ...Array<string>(6).fill('ArrowRight'), 'Backspace');
        await untilStored(
          app,
          id,
          'Steps\n1. Boil water\n2. Wait\n3. Add tea\n\n- [x] Buy milk\nCall Ada\n\n',
        );
      });

      it('Tab and Shift+Tab indent and outdent a list item; in code Tab indents; elsewhere it moves focus on', async () => {
        const id = await newDocument(app, '# Heading\n\n- one\n- two\n\n```\nif (x) {\n}\n```\n');
        const page = await editorPage(app, 'bob@acme.test', id);
        const box = page.getByRole('textbox', { name: 'Document' });
        await box.click();
        // On the heading, Tab leaves the editor and types nothing.
        await press(page, 'Control+Home', 'End', 'Tab');
        await until(async () => (await focused(page)) !== 'Document', 'focus leaves the editor');
        await press(page, 'Shift+Tab');
        await until(async () => (await focused(page)) === 'Document', 'Shift+Tab comes back');
        // "- two": in under "- one", then out again.
        await box.click();
        await press(page, 'Control+Home', 'ArrowDown', 'ArrowDown', 'ArrowDown', 'End', 'Tab');
        await until(
          async () => (await serverMarkdown(app, id)).includes('- one\n  - two\n'),
          'two is nested',
        );
        await typeLikeAPerson(page, '\nnested⏸');
        await until(
          async () => (await serverMarkdown(app, id)).includes('- one\n  - two\n  - nested\n'),
          'the next item stays nested',
        );
        await press(page, 'Shift+Tab');
        // In the code block, Tab indents at the cursor.
        await press(page, 'ArrowDown', 'ArrowDown', 'ArrowDown', 'End', 'Enter', 'Tab');
        await typeLikeAPerson(page, 'go();');
        await untilStored(
          app,
          id,
          '# Heading\n\n- one\n  - two\n- nested\n\n```\nif (x) {\n  go();\n}\n```\n',
        );
        assert.equal(await focused(page), 'Document');
        // Esc, then Tab, leaves even from code (the editor says so beside it).
        await page.getByText('after Esc, it moves on').waitFor();
        await press(page, 'Escape', 'Tab');
        await until(async () => (await focused(page)) !== 'Document', 'Esc then Tab leaves the code block');
        assert.ok((await serverMarkdown(app, id)).includes('\n  go();\n}'), 'and types nothing');
      });

      it('two people: one continues a list while the other types elsewhere, and both see one text', async () => {
        const id = await newDocument(app, '# Shared\n\nIntro.\n\n- alpha\n');
        const bob = await editorPage(app, 'bob@acme.test', id);
        const ada = await editorPage(app, 'ada@acme.test', id);
        await ada.getByRole('list', { name: 'People here' }).getByText('Bob Stone').waitFor();
        await toEnd(bob);
        await press(bob, 'ArrowUp', 'End');
        await ada.getByRole('textbox', { name: 'Document' }).click();
        await press(ada, 'Control+Home', 'ArrowDown', 'ArrowDown', 'End');
        await Promise.all([
          typeLikeAPerson(bob, '\nbeta\n⏸gamma'),
          typeLikeAPerson(ada, ' More from Ada.⏸ Done.'),
        ]);
        const expected = '# Shared\n\nIntro. More from Ada. Done.\n\n- alpha\n- beta\n- gamma\n';
        await untilStored(app, id, expected);
        const text = (page: Page) => page.getByRole('textbox', { name: 'Document' }).textContent();
        await until(async () => (await text(bob)) === (await text(ada)), 'both editors show one text');
        assert.equal((await text(bob))?.replace(/\n/g, ''), expected.replace(/\n/g, ''));
      });

      it('composing text (an input method) while another person types elsewhere loses nothing', async () => {
        const id = await newDocument(app, 'Tokyo\n\nOther line\n');
        const bob = await editorPage(app, 'bob@acme.test', id);
        const ada = await editorPage(app, 'ada@acme.test', id);
        await bob.getByRole('textbox', { name: 'Document' }).click();
        await press(bob, 'Control+Home', 'End');
        await ada.getByRole('textbox', { name: 'Document' }).click();
        await press(ada, 'Control+End');
        const ime = await bob.context().newCDPSession(bob);
        // Bob composes 東京 in steps, as an input method does; Ada types meanwhile.
        await ime.send('Input.imeSetComposition', { text: ' と', selectionStart: 2, selectionEnd: 2 });
        await typeLikeAPerson(ada, 'Ada');
        await ime.send('Input.imeSetComposition', { text: ' とう', selectionStart: 3, selectionEnd: 3 });
        await typeLikeAPerson(ada, ' was');
        await ime.send('Input.imeSetComposition', { text: ' 東京', selectionStart: 3, selectionEnd: 3 });
        await typeLikeAPerson(ada, ' here.');
        await ime.send('Input.insertText', { text: ' 東京' });
        await typeLikeAPerson(bob, '!');
        await untilStored(app, id, 'Tokyo 東京!\n\nOther line\nAda was here.');
      });
    });
  }
});
