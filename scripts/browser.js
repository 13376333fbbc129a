// Finds Debian's Chromium for the browser tests, installing it when the machine allows (root with apt-get).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function ensureChromium() {
  if (existsSync(CHROMIUM) || process.env.TANDEM_TEST_BROWSER === 'skip') return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    console.error(
      `The browser tests need Chromium at ${CHROMIUM}: install it (apt-get install -y chromium), set CHROMIUM_PATH, or set TANDEM_TEST_BROWSER=skip.`,
    );
    process.exit(1);
  }
  console.log('Installing Debian chromium for the browser tests (apt-get install -y chromium) …');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
