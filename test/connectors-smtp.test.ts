import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { lit } from './support/automations.ts';
import { connectorWorld, resolverWith, single, type ConnectorWorld } from './support/connectors.ts';
import { DATABASES } from './support/databases.ts';

for (const db of DATABASES) {
  describe(`an SMTP password and the connection it goes over on ${db.name}`, () => {
    let w: ConnectorWorld;

    before(async () => {
      // mail.acme.test stands for a server elsewhere; the stand-in offers no STARTTLS.
      w = await connectorWorld(db, {
        resolve: resolverWith({ 'mail.acme.test': ['127.0.0.1'], localhost: ['127.0.0.1'] }),
        httpAllow: ['mail.acme.test', 'localhost'],
      });
    });
    after(() => w.close());

    const smtpUrl = (host: string) =>
      `smtp://robot%40acme.test:${w.secrets.smtpPassword}@${host}:${w.smtp.port}`;

    async function mail(name: string) {
      return w.runToEnd(
        await w.publish(
          single(
            name,
            'email.send',
            { to: lit(['bob@acme.test']), subject: lit(name), body: lit('Hello.') },
            { retry: { max_attempts: 3, backoff_s: 0 } },
          ),
        ),
      );
    }

    it('refuses to sign in over smtp:// to a server without STARTTLS, saying how to fix it, once', async () => {
      await w.configure('email', { smtp_url: smtpUrl('mail.acme.test') });
      try {
        const [logins, mails] = [w.smtp.logins.length, w.smtp.mails.length];
        const run = await mail('Plain');
        assert.equal(run.status, 'failed', JSON.stringify(run));
        const node = w.helpers.nodeOf(run, 'call');
        assert.equal(
          node.error,
          'SMTP server mail.acme.test does not offer STARTTLS, so its password would be sent unencrypted; set smtp_url to smtps://mail.acme.test:465 (TLS from the start) or to a server that offers STARTTLS',
        );
        assert.equal(node.attempt, 1, 'not tried again: the server will not change its mind');
        assert.equal(w.smtp.logins.length, logins, 'the password was never sent');
        assert.equal(w.smtp.mails.length, mails);
      } finally {
        await w.configure('email', { smtp_url: smtpUrl('127.0.0.1') });
      }
    });

    it('signs in over plain smtp:// to a relay on this machine', async () => {
      for (const host of ['localhost', '127.0.0.1']) {
        await w.configure('email', { smtp_url: smtpUrl(host) });
        const logins = w.smtp.logins.length;
        const run = await mail(`Local ${host}`);
        assert.equal(run.status, 'succeeded', JSON.stringify(run));
        assert.deepEqual(w.smtp.logins.slice(logins), ['robot@acme.test'], host);
        assert.equal(w.smtp.mails.at(-1)!.user, 'robot@acme.test');
      }
      await w.configure('email', { smtp_url: smtpUrl('127.0.0.1') });
    });
  });
}
