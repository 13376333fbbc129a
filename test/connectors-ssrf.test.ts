import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { lit } from './support/automations.ts';
import { insideListener, type Listener } from './support/connector-stand-ins.ts';
import { connectorWorld, resolverWith, single, type ConnectorWorld } from './support/connectors.ts';
import { DATABASES } from './support/databases.ts';
import { standIn, type StandIn } from './support/stand-in.ts';

/** What a refused address reads like, whichever service asked. */
const REFUSED =
  /refused: .*(a loopback address|the cloud metadata address|a private address).*; .* is not on the allow list \(add it to TANDEM_HTTP_ALLOW/;

for (const db of DATABASES) {
  describe(`connector addresses inside the network on ${db.name}`, () => {
    let w: ConnectorWorld;
    let inside: StandIn;
    let smtpInside: Listener;

    before(async () => {
      inside = await standIn((_req, res) => res.end('{"an":"inside secret"}'));
      smtpInside = await insideListener();
      w = await connectorWorld(db, {
        resolve: resolverWith({ 'api.inside.test': ['127.0.0.1'], 'mail.inside.test': ['::ffff:127.0.0.1'] }),
      });
    });
    after(async () => {
      await w.close();
      await Promise.all([inside.close(), smtpInside.close()]);
    });

    /** Every spelling of an inside host the connectors' URLs may name. */
    const hosts = (port: number) => [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      '169.254.169.254',
      '10.0.0.1',
      `api.inside.test:${port}`,
    ];

    async function failure(name: string, key: string, input: Record<string, unknown>) {
      const run = await w.runToEnd(await w.publish(single(name, key, input)));
      assert.equal(run.status, 'failed', JSON.stringify(run));
      return w.helpers.nodeOf(run, 'call').error ?? '';
    }

    it('refuses a GitHub api_url inside, in every spelling and after DNS, reaching nothing', async () => {
      try {
        for (const host of hosts(inside.port)) {
          await w.configure('github', { api_url: `http://${host}/api/v3` });
          const read = await failure('Inside read', 'github.get_issue', {
            repo: lit('acme/web'),
            number: lit(1),
          });
          assert.match(read, /^GitHub GET /, host);
          assert.match(read, REFUSED, host);
          const write = await failure('Inside write', 'github.create_issue', {
            repo: lit('acme/web'),
            title: lit('x'),
          });
          assert.match(write, /^GitHub POST .* refused: /, host);
        }
        assert.deepEqual(inside.received, []);
      } finally {
        await w.configure('github', { api_url: w.github.url('/api/v3') });
      }
    });

    it('refuses a redirect from the listed GitHub host to an inside one', async () => {
      const to = inside.url('/api/v3/repos/acme/web/issues/1');
      w.github.answerNext({ status: 302, headers: { location: to } });
      const read = await failure('Redirected', 'github.get_issue', { repo: lit('acme/web'), number: lit(1) });
      assert.match(read, new RegExp(`^GitHub GET ${w.github.host}, redirected to ${inside.host} refused: `));
      assert.match(read, REFUSED);
      w.github.answerNext({ status: 307, headers: { location: to } });
      const write = await failure('Redirected write', 'github.create_issue', {
        repo: lit('acme/web'),
        title: lit('x'),
      });
      assert.match(write, REFUSED);
      assert.deepEqual(inside.received, []);
    });

    it('refuses a Slack api_url inside, and follows no redirect of Slack’s', async () => {
      try {
        for (const host of hosts(inside.port)) {
          await w.configure('slack', { api_url: `http://${host}/api/` });
          const error = await failure('Inside Slack', 'slack.post_message', {
            channel: lit('#general'),
            text: lit('x'),
          });
          assert.match(error, /^Slack POST /, host);
          assert.match(error, REFUSED, host);
        }
      } finally {
        await w.configure('slack', { api_url: w.slack.url('/api/') });
      }
      w.slack.answerNext({ status: 302, headers: { location: inside.url('/api/chat.postMessage') } });
      const redirected = await failure('Slack redirect', 'slack.post_message', {
        channel: lit('#general'),
        text: lit('x'),
      });
      assert.match(redirected, /^Slack POST .* answered 302, a redirect, which this client does not follow$/);
      assert.deepEqual(inside.received, []);
    });

    it('refuses an SMTP host inside, in every spelling and after DNS, before connecting', async () => {
      const port = smtpInside.port;
      const mail = { to: lit(['bob@acme.test']), subject: lit('x'), body: lit('x') };
      try {
        for (const host of [...hosts(port), `mail.inside.test:${port}`]) {
          await w.configure('email', { smtp_url: `smtp://${host}` });
          const error = await failure('Inside mail', 'email.send', mail);
          assert.match(error, /^SMTP /, host);
          assert.match(error, REFUSED, host);
        }
        assert.equal(smtpInside.connections, 0, 'nothing reached the listener');
      } finally {
        await w.configure('email', { smtp_url: `smtp://127.0.0.1:${w.smtp.port}` });
      }
    });
  });
}
