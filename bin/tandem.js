#!/usr/bin/env node
// Tandem runs its TypeScript sources directly on Node's type stripping (on by default from 22.18 and 23.6).
import { spawnSync } from 'node:child_process';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // npm install puts Node 24 (the `node` package) in node_modules/.bin, which npm scripts and npx run first.
  console.error(
    `tandem: Node.js ${process.versions.node} is too old to run this directly (Tandem needs 22.13 or newer); run \`npm start\` or \`npx tandem …\` in the checkout, which use the Node 24 that \`npm install\` puts in node_modules.`,
  );
  process.exit(1);
}
if (!process.features.typescript) {
  const result = spawnSync(
    process.execPath,
    // The flags this process was started with (npm start's heap limits) carry over.
    [
      ...process.execArgv,
      '--experimental-strip-types',
      '--disable-warning=ExperimentalWarning',
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit' },
  );
  process.exit(result.status ?? 1);
}
const { main } = await import('../src/cli/main.ts');
await main(process.argv.slice(2));
