import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { clientAddressOf, parseTrustProxy, type TrustProxy } from '../src/http/client-address.ts';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import { startOnFreePorts } from './support/raw-http.ts';

const PASSWORD = 'correct horse battery';

const trust = (text: string): TrustProxy => {
  const parsed = parseTrustProxy(text);
  assert.ok(typeof parsed !== 'string', parsed as string);
  return parsed;
};

describe('the client address', () => {
  it('is the connection’s peer unless TRUST_PROXY names the proxies', () => {
    assert.equal(clientAddressOf('10.0.0.5', '198.51.100.1', trust('')), '10.0.0.5');
    assert.equal(clientAddressOf('::ffff:10.0.0.5', undefined, trust('')), '10.0.0.5');
    // Behind one proxy at a listed address: the address it appended, never one the client wrote.
    const proxies = trust('10.0.0.0/8, fd00::/8');
    assert.equal(clientAddressOf('10.0.0.5', '198.51.100.1', proxies), '198.51.100.1');
    assert.equal(clientAddressOf('10.0.0.5', '1.2.3.4, 198.51.100.1', proxies), '198.51.100.1');
    assert.equal(clientAddressOf('10.0.0.5', ['1.2.3.4', '198.51.100.1, 10.0.0.9'], proxies), '198.51.100.1');
    assert.equal(clientAddressOf('fd00::1', '[2001:db8::7]:4711', proxies), '2001:db8::7');
    // A peer that is not a listed proxy is the client, whatever it says.
    assert.equal(clientAddressOf('203.0.113.9', '198.51.100.1', proxies), '203.0.113.9');
    // Garbage from the proxy's client: the proxy is as far as is known.
    assert.equal(clientAddressOf('10.0.0.5', 'evil, not-an-address', proxies), '10.0.0.5');
    // A hop count: that many proxies from the right.
    assert.equal(clientAddressOf('10.0.0.5', '1.2.3.4, 198.51.100.1', trust('1')), '198.51.100.1');
    assert.equal(clientAddressOf('10.0.0.5', '1.2.3.4, 198.51.100.1, 10.0.0.7', trust('2')), '198.51.100.1');
    assert.equal(clientAddressOf('10.0.0.5', undefined, trust('2')), '10.0.0.5');
    assert.equal(clientAddressOf('127.0.0.1', '198.51.100.1', trust('loopback')), '198.51.100.1');
  });

  it('TRUST_PROXY is checked at start, with one line naming what is wrong', () => {
    for (const [value, error] of [
      ['0', /TRUST_PROXY="0" must be a number of proxies from 1 to 10/],
      ['11', /from 1 to 10/],
      ['10.0.0.0/33', /TRUST_PROXY="10.0.0.0\/33" "10.0.0.0\/33" is not a proxy address or CIDR range/],
      ['proxy.example', /is not a proxy address or CIDR range; use e\.g\. 10\.0\.0\.5/],
      ['10.0.0.1, ', /"" is not a proxy address/],
    ] as const) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: value }),
        (e: unknown) => e instanceof ConfigError && error.test(e.message) && !e.message.includes('\n'),
        value,
      );
    }
    assert.deepEqual(loadConfig({}).trustProxy, { kind: 'none' });
    assert.deepEqual(loadConfig({ TRUST_PROXY: '2' }).trustProxy, { kind: 'hops', hops: 2 });
    assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8,loopback' }).trustProxy.kind, 'addresses');
  });
});

for (const db of DATABASES) {
  describe(`signing in behind a proxy (${db.name})`, () => {
    let h: Harness;
    let dataDir: string;
    let direct: RunningServer;
    let listed: RunningServer;
    let hops: RunningServer;
    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-proxy-'));
      direct = await startOnFreePorts(h.services, dataDir);
      // The tests' requests come from 127.0.0.1: they play the proxy.
      listed = await startOnFreePorts(h.services, dataDir, { TRUST_PROXY: 'loopback' });
      hops = await startOnFreePorts(h.services, dataDir, { TRUST_PROXY: '1' });
      for (const email of ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test'])
        await h.services.accounts.setPassword(email, PASSWORD);
    });
    after(async () => {
      await Promise.all([direct, listed, hops].map((s) => s?.close()));
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const forgetAttempts = () => h.services.deps.db.deleteFrom('sign_in_attempts').execute();

    /** A sign-in posted from the app's sign-in page, as the proxy passes it on. */
    async function login(server: RunningServer, email: string, password: string, forwardedFor?: string) {
      const origin = new URL(server.url).origin;
      const res = await fetch(`${origin}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin,
          ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        },
        body: new URLSearchParams({ email, password, next: '/' }).toString(),
      });
      await res.body?.cancel();
      return res.status;
    }

    it('behind a trusted proxy, guesses from one client leave the owner at another client signing in', async () => {
      for (const [server, name] of [
        [listed, 'proxy addresses'],
        [hops, 'a hop count'],
      ] as const) {
        await forgetAttempts();
        for (let i = 0; i < 5; i++)
          assert.equal(await login(server, 'cy@acme.test', `guess ${i}`, '203.0.113.7'), 401, name);
        assert.equal(
          await login(server, 'cy@acme.test', PASSWORD, '203.0.113.7'),
          429,
          `${name}: the guesser waits`,
        );
        assert.equal(
          await login(server, 'cy@acme.test', PASSWORD, '198.51.100.9'),
          303,
          `${name}: the owner signs in`,
        );
      }
    });

    it('believes only what the trusted proxy wrote: addresses a client forges in X-Forwarded-For are passed over', async () => {
      for (const server of [listed, hops]) {
        await forgetAttempts();
        // The guesser writes the owner's address (and a new one each time) before the proxy's entry.
        for (let i = 0; i < 5; i++)
          await login(server, 'dee@acme.test', `guess ${i}`, `198.51.100.9, 192.0.2.${i}, 203.0.113.8`);
        assert.equal(await login(server, 'dee@acme.test', PASSWORD, '192.0.2.77, 203.0.113.8'), 429);
        assert.equal(
          await login(server, 'dee@acme.test', PASSWORD, '198.51.100.9'),
          303,
          'the forged address is untouched',
        );
      }
    });

    it('without TRUST_PROXY, X-Forwarded-For is not believed: rotating it escapes nothing', async () => {
      await forgetAttempts();
      for (let i = 0; i < 5; i++) await login(direct, 'bob@acme.test', `guess ${i}`, `192.0.2.${i}`);
      assert.equal(await login(direct, 'bob@acme.test', PASSWORD, '198.51.100.200'), 429);
      await forgetAttempts();
    });

    it('behind a trusted proxy, made-up e-mails from the owner’s own network never keep them out', async () => {
      await forgetAttempts();
      for (let i = 0; i < 25; i++) await login(listed, `made-up-${i}@acme.test`, 'guess', '203.0.113.50');
      assert.equal(await login(listed, 'ada@acme.test', PASSWORD, '203.0.113.50'), 303);
      await forgetAttempts();
    });
  });
}
