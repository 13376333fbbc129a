import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { unpackText } from '../../src/storage/packed.ts';
import { open, type WebApp } from './web.ts';

/** Waits for a condition, polling; fails saying what did not happen. */
export async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** About how fast a person types: a key every 90–150 ms, never two at once. */
const KEY_GAP_MS = 90;

/**
 * Types as a person does: one key at a time, held a moment and released, with a gap after it;
 * `\n` is the Enter key and `⏸` a pause of 1.5 s (a person thinking before going on).
 */
export async function typeLikeAPerson(page: Page, text: string): Promise<void> {
  let i = 0;
  for (const ch of text) {
    if (ch === '⏸') await page.waitForTimeout(1500);
    else if (ch === '\n') await page.keyboard.press('Enter', { delay: 30 });
    else await page.keyboard.type(ch, { delay: 30 });
    await page.waitForTimeout(KEY_GAP_MS + ((i++ * 37) % 60));
  }
}

/** Presses keys (Playwright names, e.g. `Shift+Tab`) one after another at a person's pace. */
export async function press(page: Page, ...keys: string[]): Promise<void> {
  for (const key of keys) {
    await page.keyboard.press(key, { delay: 30 });
    await page.waitForTimeout(KEY_GAP_MS);
  }
}

/** The document's text as the server has it (what read_document returns). */
export async function serverMarkdown(app: WebApp, id: string): Promise<string> {
  const ada = app.h.actor('ada@acme.test');
  return (await app.h.services.documents.read(ada, { document_id: id })).markdown;
}

/** The document's text as stored in the database (people's edits are stored within 2 s). */
export async function storedMarkdown(app: WebApp, id: string): Promise<string> {
  const row = await app.h.services.deps.db
    .selectFrom('artifacts')
    .select('content')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return unpackText(row.content) ?? '';
}

/** Waits until both the server's text and the stored text are `expected`; fails showing what they were. */
export async function untilStored(app: WebApp, id: string, expected: string): Promise<void> {
  let last = '';
  try {
    await until(async () => {
      last = await storedMarkdown(app, id);
      return last === expected && (await serverMarkdown(app, id)) === expected;
    }, 'the typed text is stored');
  } catch {
    assert.equal(await serverMarkdown(app, id), expected, 'read_document');
    assert.equal(last, expected, 'the stored text');
  }
}

/** A new document in Acme, made by Ada. */
export async function newDocument(app: WebApp, markdown: string, title = 'Notes'): Promise<string> {
  const ada = app.h.actor('ada@acme.test');
  const made = await app.h.services.documents.create(ada, {
    title,
    scope: 'org',
    content_markdown: markdown,
  });
  return made.document_id;
}

/** The document page signed in as `email`, once its editor holds the text. */
export async function editorPage(
  app: WebApp,
  email: string,
  id: string,
  viewport?: { width: number; height: number },
): Promise<Page> {
  const page = await open(await app.signedIn(email, viewport), app.url(`/documents/${id}`));
  await page.getByRole('textbox', { name: 'Document' }).waitFor();
  return page;
}

/** Clicks into the editor and puts the cursor at the end of its text. */
export async function toEnd(page: Page): Promise<void> {
  await page.getByRole('textbox', { name: 'Document' }).click();
  await press(page, 'Control+End');
}
