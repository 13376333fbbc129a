#!/usr/bin/env node
// Builds the web app into web/dist (npm install runs this as `prepare`). Without the build tools
// (an install that left out dev dependencies) it keeps an app built before, or says how to build.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
let vite;
try {
  const manifest = require.resolve('vite/package.json');
  vite = join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.vite);
} catch {
  vite = undefined;
}
if (!vite) {
  console.warn(
    existsSync('web/dist/index.html')
      ? 'Vite is not installed, so the web app was not rebuilt; the build in web/dist is served.'
      : 'Vite is not installed (dev dependencies left out), so the web app is not built; run npm install to build it.',
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, [vite, 'build', 'web', '--logLevel', 'warn'], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
