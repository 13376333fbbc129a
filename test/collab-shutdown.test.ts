import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices } from '../src/services.ts';
import { blockTextIn, connectEditor, until } from './support/collab.ts';
import { testFixture } from './support/fixture.ts';
import { freePort } from './support/raw-http.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'tandem.js');

describe('tandem serve stopping', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-serve-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stores a person’s edit it holds when told to stop (SIGTERM), and exits cleanly', async () => {
    const sqlitePath = join(dir, 'tandem.sqlite');
    const setup = await openServices({ sqlitePath });
    const acme = (await importFixture(setup.deps, testFixture)).workspaces.Acme!;
    const bob = { personId: acme.users['bob@acme.test']!, workspaceId: acme.id, scopes: new Set(SCOPES) };
    const { token } = await setup.tokens.create(bob.personId, bob.workspaceId, [...SCOPES], 3_600_000);
    const id = acme.artifacts.roadmap!;
    await setup.close();

    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--no-worker'], {
      env: { ...process.env, TANDEM_DATA: dir, PAGES_PORT: String(await freePort()), LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('Tandem is running')) resolve();
      });
      void exited.then((code) => reject(new Error(`tandem serve exited with ${code}`)));
    });

    const editor = connectEditor(`ws://127.0.0.1:${port}/collab`, id, token);
    try {
      await editor.ready;
      blockTextIn(editor.doc, 'Ship it.').insert('Ship it'.length, ' before Friday');
      await until(() => editor.acknowledged(), 'the server acknowledged the edit');
      // Well within the two quiet seconds after which it would be stored anyway.
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      editor.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }

    const after = await openServices({ sqlitePath });
    try {
      await after.documents.store.open(id);
      const read = await after.documents.read(bob, { document_id: id });
      assert.equal(read.markdown, '# Roadmap\n\nShip it before Friday.\n');
      const [row] = (await after.documents.versions(bob, { document_id: id })).versions;
      assert.equal(row!.reason, 'edit');
      assert.equal(row!.author_label, 'Bob Stone');
    } finally {
      await after.close();
    }
  });
});
