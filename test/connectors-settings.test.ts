import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '../src/errors.ts';
import { importFixture } from '../src/domains/import/import.ts';
import type { ServiceOptions, Services } from '../src/services.ts';
import { sharedDatabase } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme, type Harness } from './support/harness.ts';
import { echoPlan } from './support/hooks.ts';

async function refusal(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DomainError, String(error));
  return error.message;
}

for (const db of DATABASES) {
  describe(`connector settings on ${db.name}`, () => {
    let h: Harness;
    let open: (options?: ServiceOptions) => Promise<Services>;
    let close: () => Promise<void>;
    const ada = () => h.actor('ada@acme.test');
    const bob = () => h.actor('bob@acme.test');
    const connectors = () => h.services.connectors;
    const row = (id: string) =>
      h.services.deps.db.selectFrom('connectors').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    before(async () => {
      const shared = await sharedDatabase(db);
      h = shared.h;
      open = shared.open;
      close = () => shared.h.close();
    });
    after(() => close());

    it('lets an admin set a shared connection and shows its secrets only as set or not set', async () => {
      const token = `ghp_${randomBytes(8).toString('hex')}`;
      const view = await connectors().set(ada(), {
        provider: 'github',
        settings: { api_url: 'https://ghe.acme.test/api/v3', token },
      });
      assert.deepEqual(view.settings, {
        api_url: 'https://ghe.acme.test/api/v3',
        token: 'set',
        secret: 'set',
      });
      assert.deepEqual(view.missing, []);
      assert.equal(view.personal, false);
      const stored = await row(view.connector_id);
      assert.match(stored.sealed ?? '', /^v1:[0-9a-f]{8}:/);
      assert.ok(!JSON.stringify(stored).includes(token), 'the token is sealed at rest');
      assert.equal(stored.secret, null, 'the fixture’s webhook secret moved into the sealed settings');
      assert.equal(await connectors().webhookSecret(acme(h).id, 'github'), 'whsec-1');

      const cleared = await connectors().set(ada(), { provider: 'github', settings: { token: null } });
      assert.equal(cleared.settings.token, 'not set');
      assert.deepEqual(cleared.missing, ['token']);
      await connectors().set(ada(), { provider: 'github', settings: { token } });
    });

    it('keeps shared connections to admins and a personal one to its owner', async () => {
      assert.equal(
        await refusal(connectors().set(bob(), { provider: 'github', settings: { token: 'x' } })),
        'Only workspace admins can change shared connectors',
      );
      const mine = await connectors().set(bob(), {
        provider: 'gmail',
        personal: true,
        settings: { from: 'Bob Stone <bob@acme.test>', password: 'app-password-1' },
      });
      assert.equal(mine.owner_id, bob().personId);
      assert.deepEqual(mine.missing, [], 'Gmail’s SMTP host is preset');
      const bobs = await connectors().list(bob());
      assert.deepEqual(
        bobs.map((c) => c.provider),
        ['gmail', 'slack'],
        'Bob sees his own connections only',
      );
      const adas = await connectors().list(ada());
      assert.ok(
        adas.every((c) => !c.personal || c.owner_id === ada().personId),
        'not Bob’s personal ones',
      );
      assert.ok(adas.some((c) => c.provider === 'github' && !c.personal));
    });

    it('refuses unknown settings and bad values, one line naming the field', async () => {
      assert.equal(
        await refusal(connectors().set(ada(), { provider: 'github', settings: { tokn: 'x' } })),
        'github has no setting "tokn"; it takes api_url, token, secret',
      );
      assert.equal(
        await refusal(
          connectors().set(ada(), { provider: 'github', settings: { api_url: 'ftp://ghe.acme.test' } }),
        ),
        'api_url must be an http or https URL',
      );
      assert.equal(
        await refusal(
          connectors().set(ada(), { provider: 'email', settings: { smtp_url: 'https://mail.acme.test' } }),
        ),
        'smtp_url must start with smtp:// (STARTTLS) or smtps:// (TLS)',
      );
      assert.equal(
        await refusal(connectors().set(ada(), { provider: 'email', settings: { from: 'not an address' } })),
        'from must be an e-mail address, or a name and one: Ada <ada@example.com>',
      );
      assert.equal(
        await refusal(connectors().set(ada(), { provider: 'GitHub!', settings: {} })),
        'provider must be a provider name such as github, slack, email, gmail or outlook',
      );
    });

    it('takes a login and password out of smtp_url and seals the password', async () => {
      const view = await connectors().set(ada(), {
        provider: 'email',
        settings: {
          smtp_url: 'smtps://robot%40acme.test:s3cr3t-pw@mail.acme.test:465',
          from: 'robot@acme.test',
        },
      });
      assert.deepEqual(view.settings, {
        smtp_url: 'smtps://mail.acme.test:465',
        from: 'robot@acme.test',
        username: 'robot@acme.test',
        password: 'set',
        secret: 'not set',
      });
      assert.ok(!JSON.stringify(await row(view.connector_id)).includes('s3cr3t-pw'));
    });

    it('loads connector settings from a fixture, and names a wrong one by its place', async () => {
      const { workspaces } = await importFixture(h.services.deps, {
        workspaces: [
          {
            name: 'Delta',
            users: [{ email: 'dan@delta.test', name: 'Dan', admin: true }],
            connectors: [
              {
                provider: 'slack',
                config: { bot_token: 'xoxb-delta', api_url: 'https://slack.delta.test/api/' },
              },
            ],
          },
        ],
      });
      const dan = {
        personId: workspaces.Delta!.users['dan@delta.test']!,
        workspaceId: workspaces.Delta!.id,
        scopes: new Set<never>(),
      };
      const [slack] = await connectors().list(dan);
      assert.deepEqual(slack?.settings, {
        api_url: 'https://slack.delta.test/api/',
        bot_token: 'set',
        secret: 'not set',
      });
      const wrong = await refusal(
        importFixture(h.services.deps, {
          workspaces: [
            {
              name: 'Epsilon',
              users: [{ email: 'eve@epsilon.test', name: 'Eve' }],
              connectors: [{ provider: 'github', config: { tokn: 'x' } }],
            },
          ],
        }),
      );
      assert.equal(
        wrong,
        'workspaces.0.connectors.0.config: github has no setting "tokn"; it takes api_url, token, secret',
      );
    });

    it('chooses the connection a run goes through: the person’s own, else the shared one; the shared one for a workspace automation', async () => {
      await connectors().configure(acme(h).id, 'slack', null, { settings: { bot_token: 'xoxb-shared' } });
      await connectors().configure(acme(h).id, 'slack', bob().personId, {
        settings: { bot_token: 'xoxb-bobs' },
      });
      const mine = await connectors().connectionFor(bob(), 'slack');
      assert.equal(mine.settings.bot_token, 'xoxb-bobs');
      assert.ok(
        mine.secrets.includes('xoxb-bobs') && mine.secrets.includes('slack-1'),
        'its secrets, to keep out of errors',
      );
      await connectors().configure(acme(h).id, 'slack', ada().personId, {
        settings: { bot_token: 'xoxb-adas' },
      });
      assert.equal((await connectors().connectionFor(ada(), 'slack')).settings.bot_token, 'xoxb-adas');
      const drafted = await h.services.automations.draft(ada(), {
        plan_json: echoPlan('Shared'),
        ask: 'Echo it.',
      });
      const { automation_id } = await h.services.automations.publish(ada(), {
        flow_version_id: drafted.flow_version_id,
        name: 'Shared',
        scope: 'workspace',
        trigger: { kind: 'connector_event', provider: 'slack', event: 'message' },
      });
      const forWorkspace = await connectors().connectionFor(ada(), 'slack', automation_id);
      assert.equal(forWorkspace.settings.bot_token, 'xoxb-shared', 'never the admin’s own');
      const gmail = await connectors().connectionFor(bob(), 'email');
      assert.equal(gmail.provider, 'gmail');
      assert.equal(gmail.settings.smtp_url, 'smtps://smtp.gmail.com:465');
      assert.equal(gmail.settings.username, 'bob@acme.test', 'a preset signs in as the from address');
    });

    it('seals a webhook secret stored in the open when the service starts', async () => {
      const [github] = (await connectors().list(ada())).filter((c) => c.provider === 'github');
      const database = h.services.deps.db;
      await database
        .updateTable('connectors')
        .set({ secret: 'whsec-legacy', sealed: null })
        .where('id', '=', github!.connector_id)
        .execute();
      assert.equal(
        await connectors().webhookSecret(acme(h).id, 'github'),
        'whsec-legacy',
        'still verified before',
      );
      const again = await open();
      const stored = await row(github!.connector_id);
      assert.equal(stored.secret, null);
      assert.ok(!JSON.stringify(stored).includes('whsec-legacy'));
      assert.equal(await again.connectors.webhookSecret(acme(h).id, 'github'), 'whsec-legacy');
      await connectors().set(ada(), { provider: 'github', settings: { token: 'ghp_again' } });
    });

    it('says so when the secrets were sealed with another key, and replaces them only all together', async () => {
      // The same database opened by a process with another key (a worker started without TANDEM_SECRET_KEY).
      const elsewhere = await open({ secretKey: randomBytes(32) });
      const other = elsewhere.connectors;
      const [github] = (await other.list(ada())).filter((c) => c.provider === 'github');
      assert.deepEqual(github?.settings, {
        api_url: 'https://ghe.acme.test/api/v3',
        token: 'unreadable',
        secret: 'unreadable',
      });
      assert.match(
        await refusal(other.connectionFor(ada(), 'github')),
        /^the GitHub connection's secrets cannot be read: a stored secret was sealed with another key \(TANDEM_SECRET_KEY or TANDEM_DATA\/secrets\.key changed\)/,
      );
      assert.match(
        await refusal(other.set(ada(), { provider: 'github', settings: { token: 'ghp_new' } })),
        /give every one again \(token, secret; an empty value clears one\)$/,
      );
      const replaced = await other.set(ada(), {
        provider: 'github',
        settings: { token: 'ghp_new', secret: 'whsec-new' },
      });
      assert.deepEqual(replaced.settings, {
        api_url: 'https://ghe.acme.test/api/v3',
        token: 'set',
        secret: 'set',
      });
      assert.equal((await other.connectionFor(ada(), 'github')).settings.token, 'ghp_new');
    });

    it('does not open a sealed value moved to another connection', async () => {
      const views = await connectors().list(ada());
      const github = views.find((c) => c.provider === 'github')!;
      const slack = views.find((c) => c.provider === 'slack' && !c.personal)!;
      const moved = await row(github.connector_id);
      await h.services.deps.db
        .updateTable('connectors')
        .set({ sealed: moved.sealed })
        .where('id', '=', slack.connector_id)
        .execute();
      const [after] = (await connectors().list(ada())).filter((c) => c.connector_id === slack.connector_id);
      assert.equal(after?.settings.bot_token, 'unreadable');
    });
  });
}
