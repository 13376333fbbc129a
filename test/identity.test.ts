import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WRONG_CREDENTIALS } from '../src/domains/auth/accounts.ts';
import { hashPassword, verifyPassword } from '../src/domains/auth/passwords.ts';
import { waitAfter } from '../src/domains/auth/throttle.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { DomainError } from '../src/errors.ts';
import { DEMO_USER, ensureDemo } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';

const PASSWORD = 'correct horse battery';

/** The refusal a sign-in got: its code and sentence. */
async function refusal(attempt: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await attempt;
  } catch (error) {
    assert.ok(error instanceof DomainError, String(error));
    return { code: error.code, message: error.message };
  }
  assert.fail('the attempt was not refused');
}

describe('passwords', () => {
  it('are stored as salted scrypt hashes that verify only the password given', async () => {
    const a = await hashPassword(PASSWORD);
    const b = await hashPassword(PASSWORD);
    assert.match(a, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b, 'a fresh salt each time');
    assert.equal(await verifyPassword(PASSWORD, a), true);
    assert.equal(await verifyPassword(`${PASSWORD} `, a), false);
    assert.equal(await verifyPassword(PASSWORD, null), false, 'no password set never matches');
    await assert.rejects(hashPassword('short'), /at least 8 characters/);
  });

  it('wait longer after each failure past the threshold, up to 15 minutes', () => {
    assert.equal(waitAfter('account:a', 4), 0);
    assert.equal(waitAfter('account:a', 5), 2000);
    assert.equal(waitAfter('account:a', 6), 4000);
    assert.equal(waitAfter('account:a', 40), 15 * 60_000);
    assert.equal(waitAfter('address:1.2.3.4', 19), 0);
    assert.equal(waitAfter('address:1.2.3.4', 20), 2000);
  });
});

for (const db of DATABASES) {
  describe(`people's accounts (${db.name})`, () => {
    let h: Harness;
    before(async () => {
      h = await setup(db);
      await h.services.accounts.setPassword('ada@acme.test', PASSWORD);
    });
    after(async () => {
      await h?.close();
    });
    const accounts = () => h.services.accounts;
    /** Lets every wait run out, as if the minutes had passed. */
    const forgetWaits = () =>
      h.services.deps.db.updateTable('sign_in_attempts').set({ wait_until: 0 }).execute();

    it('signs in with the right password, in any case of the e-mail', async () => {
      const [member] = await accounts().signIn('ADA@acme.test', PASSWORD, '10.0.0.1');
      assert.equal(member?.personId, h.actor('ada@acme.test').personId);
      assert.equal(member?.workspace, 'Acme');
    });

    it('answers a wrong password, an unknown e-mail and an account without one with the same sentence', async () => {
      const answers = [
        await refusal(accounts().signIn('ada@acme.test', 'wrong password', '10.0.0.2')),
        await refusal(accounts().signIn('nobody@acme.test', PASSWORD, '10.0.0.2')),
        await refusal(accounts().signIn('bob@acme.test', PASSWORD, '10.0.0.2')),
      ];
      for (const answer of answers) {
        assert.deepEqual(answer, { code: 'unauthenticated', message: WRONG_CREDENTIALS });
      }
    });

    /** Every throttle forgotten, as if a quiet hour had passed. */
    const forgetAttempts = () => h.services.deps.db.deleteFrom('sign_in_attempts').execute();

    it('slows guesses at an account from one address, and not its owner signing in from another', async () => {
      await forgetAttempts();
      await h.services.accounts.setPassword('cy@acme.test', PASSWORD);
      for (let i = 0; i < 5; i++) {
        const r = await refusal(accounts().signIn('cy@acme.test', 'guess', '10.1.0.1'));
        assert.equal(r.code, 'unauthenticated', `attempt ${i + 1}`);
      }
      const slowed = await refusal(accounts().signIn('cy@acme.test', PASSWORD, '10.1.0.1'));
      assert.equal(slowed.code, 'rate_limited', 'the guessing address waits, even with the right password');
      assert.match(slowed.message, /^Too many sign-in attempts; try again in [12] seconds?\.$/);
      // The owner, elsewhere, is not held up by the attack; nor is another account from the same address.
      assert.equal((await accounts().signIn('cy@acme.test', PASSWORD, '10.1.0.9')).length, 1);
      assert.equal((await accounts().signIn('ada@acme.test', PASSWORD, '10.1.0.1')).length, 1);
      // The e-mail in another case is the same account from the same address.
      assert.equal(
        (await refusal(accounts().signIn('CY@acme.test', PASSWORD, '10.1.0.1'))).code,
        'rate_limited',
      );
      await forgetWaits();
      assert.equal((await accounts().signIn('cy@acme.test', PASSWORD, '10.1.0.1')).length, 1);
      // Success forgets the pair's failures.
      for (let i = 0; i < 4; i++) await refusal(accounts().signIn('cy@acme.test', 'guess', '10.1.0.1'));
      assert.equal((await accounts().signIn('cy@acme.test', PASSWORD, '10.1.0.1')).length, 1);
    });

    it('holds an account guessed at from many addresses of one IPv6 network as one address', async () => {
      await forgetAttempts();
      await h.services.accounts.setPassword('cy@acme.test', PASSWORD);
      for (let i = 1; i <= 5; i++) {
        await refusal(accounts().signIn('cy@acme.test', 'guess', `2001:db8:1:2::${i.toString(16)}`));
      }
      const held = await refusal(accounts().signIn('cy@acme.test', PASSWORD, '2001:db8:1:2:ffff:1:2:3'));
      assert.equal(held.code, 'rate_limited', 'the same /64');
      assert.equal((await accounts().signIn('cy@acme.test', PASSWORD, '2001:db8:1:3::1')).length, 1);
    });

    it('counts parallel guesses: of ten at once from one address, five are checked and five are held back', async () => {
      await forgetAttempts();
      await h.services.accounts.setPassword('dee@acme.test', PASSWORD);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => refusal(accounts().signIn('dee@acme.test', 'guess', '10.2.0.1'))),
      );
      const codes = answers.map((a) => a.code).sort();
      assert.deepEqual(codes, [...Array(5).fill('rate_limited'), ...Array(5).fill('unauthenticated')]);
      await forgetAttempts();
    });

    it('slows an address after twenty failures across real accounts', async () => {
      await forgetAttempts();
      for (const email of ['bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
        await h.services.accounts.setPassword(email, PASSWORD);
      }
      for (const email of ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
        for (let i = 0; i < 5; i++) await refusal(accounts().signIn(email, 'guess', '10.3.0.1'));
      }
      // Ada's pair is held too; Bob's e-mail at another address is not.
      const held = await refusal(accounts().signIn('nobody@acme.test', PASSWORD, '10.3.0.1'));
      assert.equal(held.code, 'rate_limited', 'any e-mail from that address waits');
      assert.equal(
        (await accounts().signIn('ada@acme.test', PASSWORD, '10.3.0.2')).length,
        1,
        'other addresses',
      );
      await forgetAttempts();
    });

    it('keeps an address waiting when it signs in to an account of its own between guesses', async () => {
      await forgetAttempts();
      for (const email of ['bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
        await h.services.accounts.setPassword(email, PASSWORD);
      }
      for (const email of ['bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
        for (let i = 0; i < 5; i++) await refusal(accounts().signIn(email, 'guess', '10.5.0.1'));
      }
      for (let i = 0; i < 4; i++) await refusal(accounts().signIn('ada@acme.test', 'guess', '10.5.0.1'));
      // The guesser's own account, signed in to rightly: the twentieth attempt, which sets a wait.
      assert.equal((await accounts().signIn('ada@acme.test', PASSWORD, '10.5.0.1')).length, 1);
      const next = await refusal(accounts().signIn('nobody@acme.test', 'guess', '10.5.0.1'));
      assert.equal(next.code, 'rate_limited', 'the wait stays');
      await forgetAttempts();
    });

    it('never lets failures with made-up e-mails keep a person with the right password out', async () => {
      await forgetAttempts();
      for (let i = 0; i < 30; i++) {
        const r = await refusal(accounts().signIn(`nobody${i}@acme.test`, 'guess', '10.4.0.1'));
        assert.equal(r.code, 'unauthenticated', `made-up e-mail ${i + 1}`);
      }
      // Nor e-mails of people who have no password (they cannot sign in, so they are nobody's).
      await importFixture(h.services.deps, {
        workspaces: [{ name: 'No passwords', users: [{ email: 'nopass@acme.test', name: 'No Pass' }] }],
      });
      for (let i = 0; i < 6; i++)
        await refusal(accounts().signIn('nopass@acme.test', `guess ${i}`, '10.4.0.1'));
      assert.equal((await accounts().signIn('ada@acme.test', PASSWORD, '10.4.0.1')).length, 1);
      // The made-up e-mail itself is slowed from that address, as any account would be.
      assert.equal(
        (await refusal(accounts().signIn('nopass@acme.test', 'x', '10.4.0.1'))).code,
        'rate_limited',
      );
      await forgetAttempts();
    });

    it('keeps browser sessions as rows: revoked or switched at once, never to another account’s workspace', async () => {
      const [ada] = await accounts().memberships('ada@acme.test');
      const { secret } = await h.services.sessions.create(ada!);
      const session = await h.services.sessions.verify(secret);
      assert.equal(session?.actor.personId, ada!.personId);
      assert.equal(session?.actor.scopes.size, 4);
      const row = await h.services.deps.db
        .selectFrom('browser_sessions')
        .selectAll()
        .where('id', '=', session!.sessionId)
        .executeTakeFirstOrThrow();
      assert.notEqual(row.hash, secret, 'only a hash of the secret is stored');
      await assert.rejects(
        h.services.sessions.switchWorkspace(session!.sessionId, h.ids.Other!.id),
        /Workspace not found/,
      );
      await h.services.sessions.revoke(session!.sessionId);
      assert.equal(await h.services.sessions.verify(secret), null);
      assert.equal(await h.services.sessions.verify('tss_made-up'), null);
    });

    it('lists and revokes a person’s tokens; another person’s is not found', async () => {
      const ada = h.actor('ada@acme.test');
      const bob = h.actor('bob@acme.test');
      const made = await h.services.tokens.create(ada.personId, ada.workspaceId, ['documents:read'], 60_000);
      const listed = await h.services.tokens.list(ada.personId);
      assert.ok(listed.some((t) => t.token_id === made.tokenId && t.scopes.join() === 'documents:read'));
      await assert.rejects(h.services.tokens.revoke(made.tokenId, bob.personId), /Token not found/);
      assert.ok(await h.services.tokens.verify(made.token));
      await h.services.tokens.revoke(made.tokenId, ada.personId);
      assert.equal(await h.services.tokens.verify(made.token), null, 'at once in this process');
      assert.ok(!(await h.services.tokens.list(ada.personId)).some((t) => t.token_id === made.tokenId));
    });

    it('takes passwords from a fixture, one per e-mail', async () => {
      const person = (email: string, password?: string) => ({
        email,
        name: email,
        ...(password ? { password } : {}),
      });
      const result = await importFixture(h.services.deps, {
        workspaces: [
          {
            name: 'Side',
            users: [person('ada@acme.test', 'side password 1'), person('fay@side.test', 'fay password')],
          },
        ],
      });
      assert.ok(result.workspaces.Side);
      const ada = await accounts().signIn('ada@acme.test', 'side password 1', '10.4.0.1');
      assert.deepEqual(
        ada.map((m) => m.workspace),
        ['Acme', 'Side'],
        'one account, two workspaces',
      );
      await assert.rejects(
        importFixture(h.services.deps, {
          workspaces: [
            { name: 'Two', users: [person('gus@two.test', 'first password')] },
            { name: 'Three', users: [person('gus@two.test', 'other password')] },
          ],
        }),
        /workspaces\.1\.users\.0\.password: gus@two\.test has another password at workspaces\.0\.users\.0\.password/,
      );
      assert.equal((await accounts().memberships('gus@two.test')).length, 0, 'nothing was imported');
      await h.services.accounts.setPassword('ada@acme.test', PASSWORD);
    });
  });
}

describe('the demo workspace', () => {
  it('prints its people’s password once, and it signs them in', async () => {
    const services = await DATABASES[0]!.open();
    try {
      const password = await ensureDemo(services);
      assert.match(password ?? '', /^[a-z2-9]{16}$/);
      const [ada] = await services.accounts.signIn(DEMO_USER, password!, '10.5.0.1');
      assert.equal(ada?.workspace, 'Demo');
      assert.equal(await ensureDemo(services), null, 'made once, shown once');
    } finally {
      await services.dispose();
    }
  });
});
