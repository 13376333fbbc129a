import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REFUSED } from '../src/collab/socket.ts';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, openLive, until, type Editor } from './support/collab.ts';
import {
  authorize,
  authorizeUrl,
  exchangeCode,
  fakeBrowser,
  pkcePair,
  registerClient,
  signIn,
  type FakeBrowser,
} from './support/oauth.ts';

const DOC = '# Plan\n\nIntro.\n\nStep one.\n';
const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:6274/oauth/callback';

for (const db of DATABASES) {
  describe(`live sockets end with their credential on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;

    before(async () => {
      live = await openLive(db);
      await live.services().accounts.setPassword('bob@acme.test', PASSWORD);
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const bob = () => live.h.actor('bob@acme.test');
    const read = async (id: string) => (await docs().read(ada(), { document_id: id })).markdown;

    async function create(): Promise<string> {
      return (await docs().create(ada(), { title: 'Live', scope: 'org', content_markdown: DOC })).document_id;
    }

    /** An editor, with the reason the server gave when it closed the document's connection. */
    async function connected(id: string, token: string | (() => Promise<string>)) {
      const editor = live.editor(id, token as string);
      const closed: string[] = [];
      editor.provider.on('close', ({ event }: { event: { reason: string } }) => closed.push(event.reason));
      await editor.ready;
      return Object.assign(editor, { closed });
    }

    /** After the close: what the editor types stays in its own copy; the document keeps what it had. */
    async function nothingLands(id: string, editor: Editor & { closed: string[] }) {
      assert.deepEqual(editor.closed, [REFUSED.ended]);
      const before = await read(id);
      blockTextIn(editor.doc, 'Step one.').insert(0, 'After the end ');
      // A second person's edit, sent after the first's, lands: the first's was not taken.
      const witness = await connected(id, await live.tokenFor('ada@acme.test'));
      const intro = blockTextIn(witness.doc, 'Intro.');
      intro.insert(intro.toString().indexOf('Intro.'), 'Witness ');
      await until(async () => (await read(id)).includes('Witness Intro.'), 'the witness’s edit lands');
      assert.equal(await read(id), before.replace('Intro.', 'Witness Intro.'));
    }

    async function bobToken(ttlMs = 3_600_000) {
      return live.services().tokens.create(bob().personId, bob().workspaceId, [...bob().scopes], ttlMs);
    }

    it('closes a socket whose personal access token is revoked, at once, and takes nothing it sends after', async () => {
      const id = await create();
      const made = await bobToken();
      const editor = await connected(id, made.token);
      blockTextIn(editor.doc, 'Intro.').insert(0, 'Before ');
      await until(async () => (await read(id)).includes('Before Intro.'), 'the edit before lands');
      await live.services().tokens.revoke(made.tokenId, bob().personId);
      await until(() => editor.closed.length > 0, 'the socket is closed', 1000);
      await nothingLands(id, editor);
    });

    it('closes a socket whose token expires while it is open', async () => {
      const id = await create();
      const made = await bobToken(1_500);
      const editor = await connected(id, made.token);
      await until(() => editor.closed.length > 0, 'the socket is closed', 8_000);
      await nothingLands(id, editor);
    });

    async function signedIn(): Promise<FakeBrowser> {
      const browser = fakeBrowser(live.server.url);
      await signIn(browser, 'bob@acme.test', PASSWORD);
      return browser;
    }

    /** A ticket from the app's own route, as the web editor asks for one with its cookie. */
    async function ticket(browser: FakeBrowser, id: string): Promise<string> {
      const res = await fetch(`${live.server.url}/api/collab/tickets`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: browser.jar.header(),
          origin: live.server.url,
        },
        body: JSON.stringify({ document_id: id }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { ticket: string }).ticket;
    }

    it('closes a browser’s socket when it signs out, though its ticket was good', async () => {
      const id = await create();
      const browser = await signedIn();
      const editor = await connected(id, await ticket(browser, id));
      const other = await signedIn();
      const stays = await connected(id, await ticket(other, id));
      const res = await browser.post('/logout', {});
      assert.ok(res.status < 400, `signed out: ${res.status}`);
      await until(() => editor.closed.length > 0, 'the signed-out socket is closed', 1000);
      await nothingLands(id, editor);
      // Another browser of the same person stays connected and writing.
      assert.deepEqual(stays.closed, []);
      blockTextIn(stays.doc, 'Step one.').insert(0, 'Still ');
      await until(async () => (await read(id)).includes('Still Step one.'), 'the other browser writes');
    });

    it('closes a socket opened with an OAuth access token when the person disconnects the app', async () => {
      const id = await create();
      const origin = live.server.url;
      const clientId = await registerClient(origin, REDIRECT);
      const { verifier, challenge } = pkcePair();
      const browser = await signedIn();
      const { callback } = await authorize(
        browser,
        authorizeUrl(origin, {
          clientId,
          redirectUri: REDIRECT,
          challenge,
          scope: 'documents:read documents:write',
        }),
      );
      const tokens = await exchangeCode(origin, {
        client_id: clientId,
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const editor = await connected(id, tokens.body.access_token!);
      assert.equal(editor.provider.authorizedScope, 'read-write');
      const record = await live.services().oauth.find('AccessToken', tokens.body.access_token!);
      await live.services().grants.revoke(String(record!.grantId), bob().personId);
      await until(() => editor.closed.length > 0, 'the socket is closed', 1000);
      await nothingLands(id, editor);
    });
  });
}
