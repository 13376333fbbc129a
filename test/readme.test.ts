import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { withToolTable } from '../scripts/readme-tools.ts';
import { freePortPair } from './support/http-server.ts';

it('the README lists every implemented tool as the registry describes it', async () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.equal(readme, await withToolTable(readme), 'README.md is stale: run node scripts/readme-tools.ts');
});

/** A Node older than Tandem needs, when this machine has one (TANDEM_TEST_OLD_NODE or the system's). */
function findOldNode(): string | undefined {
  const candidates = [process.env.TANDEM_TEST_OLD_NODE, '/usr/bin/node', '/usr/local/bin/node'];
  for (const path of candidates) {
    if (!path) continue;
    const probe = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    const major = Number(probe.stdout?.split('.')[0]);
    if (probe.status === 0 && major >= 20 && major < 22) return path;
  }
  return undefined;
}

const oldNode = findOldNode();
const withOldNodeFirst = oldNode && {
  ...process.env,
  PATH: [dirname(oldNode), process.env.PATH].join(delimiter),
  npm_config_loglevel: 'error',
};

describe(
  'the quick start with an older Node first on PATH',
  { skip: !oldNode && 'no Node 20 or 21 here' },
  () => {
    it('npm start serves the demo workspace', async () => {
      const data = mkdtempSync(join(tmpdir(), 'tandem-readme-'));
      try {
        // Another test may take the free ports first; then it starts again on others.
        for (let attempt = 0; ; attempt++) {
          const port = await freePortPair();
          const child = spawn('npm', ['start'], {
            env: { ...withOldNodeFirst, PORT: String(port), TANDEM_DATA: data },
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          });
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          try {
            await new Promise<void>((resolve, reject) => {
              const check = () => {
                if (output.includes('Tandem is running')) resolve();
              };
              child.stdout.on('data', check);
              child.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
            });
            const page = await fetch(`http://127.0.0.1:${port}/`);
            assert.equal(page.status, 200);
            return;
          } catch (error) {
            if (!output.includes('EADDRINUSE') || attempt >= 5) throw error;
          } finally {
            // npm, its shell and the server share the process group started here.
            if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGTERM');
            await new Promise((resolve) =>
              child.exitCode === null ? child.on('exit', resolve) : resolve(null),
            );
          }
        }
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    });

    it('npm scripts run on the Node 24 that npm install pinned', () => {
      const result = spawnSync('npm', ['exec', '--offline', '--', 'node', '-p', 'process.versions.node'], {
        env: withOldNodeFirst || undefined,
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout.trim().split('.')[0], '24');
    });

    it('bin/tandem.js run directly by that Node says in one line how to start it', () => {
      const result = spawnSync(oldNode!, ['bin/tandem.js', 'serve'], { encoding: 'utf8' });
      assert.equal(result.status, 1);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, /too old/);
      assert.match(lines[0]!, /`npm start`/);
      assert.match(lines[0]!, /`npx tandem/);
    });
  },
);
