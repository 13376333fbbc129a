import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SERVICES = resolve(import.meta.dirname, '..', 'src', 'services.ts');

/** A process that reads (or makes) the data directory's secret and prints it. */
function secretFrom(dir: string, at = 0): Promise<string> {
  // Loaded first, then all asking at the same instant `at` (slept to, then spun to the millisecond).
  const script = `
    const { dataSecret } = await import(${JSON.stringify(SERVICES)});
    await new Promise((r) => setTimeout(r, Math.max(0, ${at} - Date.now() - 5)));
    while (Date.now() < ${at});
    console.log(dataSecret(${JSON.stringify(dir)}, 'secrets').toString('base64'));`;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => (code === 0 ? done(out.trim()) : fail(new Error(`exited ${code}: ${err}`))));
  });
}

describe('the data directory’s secret', () => {
  it('is one secret when several processes start on a new directory at once', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tandem-secret-')), 'data');
    try {
      const at = Date.now() + 3_000;
      const secrets = await Promise.all(Array.from({ length: 6 }, () => secretFrom(dir, at)));
      assert.equal(new Set(secrets).size, 1, `they disagree: ${secrets.join(', ')}`);
      assert.equal(Buffer.from(secrets[0]!, 'base64').length, 32);
      assert.deepEqual(readdirSync(dir), ['secrets.key'], 'no file of a process that lost is left');
      assert.equal(statSync(join(dir, 'secrets.key')).mode & 0o077, 0, 'only its owner may read it');
      assert.equal(await secretFrom(dir), secrets[0], 'a later process reads the same one');
    } finally {
      rmSync(resolve(dir, '..'), { recursive: true, force: true });
    }
  });
});
