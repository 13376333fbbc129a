import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** Where screenshots go when asked for (`TANDEM_SCREENSHOTS=dir`); none are taken otherwise. */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

/** A full-page screenshot named `<group>-<name>.png`, when screenshots are asked for. */
export async function shoot(page: Page, group: string, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${group}-${name}.png`), fullPage: true });
}

/** Waits until `check` holds (the run engine and the app move on their own), failing after 15 s. */
export async function waitFor(check: () => Promise<boolean>, what = 'the condition'): Promise<void> {
  const until = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
