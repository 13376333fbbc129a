import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { capability, lit, plan, ref, transform, type Json } from './support/automations.ts';
import { slackFields } from './support/connector-stand-ins.ts';
import { connectorWorld, single, type ConnectorWorld } from './support/connectors.ts';
import { DATABASES } from './support/databases.ts';

/** Opens an issue, then says so in Slack and by e-mail. */
const announce = (title: string) =>
  plan(
    'Announce',
    [
      capability('issue', 'github.create_issue', {
        repo: lit('acme/web'),
        title: lit(title),
        body: lit('Please review the roadmap before Friday.'),
        labels: lit(['planning']),
      }),
      transform('text', 'template', { url: ref('issue', 'url') }, { template: 'New issue: {{url}}' }),
      capability('post', 'slack.post_message', { channel: lit('#general'), text: ref('text', 'text') }),
      capability('mail', 'email.send', {
        to: lit(['bob@acme.test']),
        subject: lit(`Issue: ${title}`),
        body: ref('text', 'text'),
      }),
    ],
    [
      { from: 'issue', to: 'text' },
      { from: 'text', to: 'post' },
      { from: 'text', to: 'mail' },
    ],
  );

for (const db of DATABASES) {
  describe(`connectors reaching their services on ${db.name}`, () => {
    let w: ConnectorWorld;
    before(async () => {
      w = await connectorWorld(db);
    });
    after(() => w.close());

    const issuePosts = () =>
      w.github.received.filter((r) => r.method === 'POST' && r.path.endsWith('/issues'));

    it('opens an issue, posts to Slack and sends an e-mail that the services receive, signed in', async () => {
      const run = await w.runToEnd(await w.publish(announce('Roadmap review')));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));

      const issue = issuePosts().at(-1)!;
      assert.equal(issue.path, '/api/v3/repos/acme/web/issues');
      assert.equal(issue.headers.authorization, `token ${w.secrets.githubToken}`);
      assert.deepEqual(JSON.parse(issue.body), {
        title: 'Roadmap review',
        body: 'Please review the roadmap before Friday.',
        labels: ['planning'],
      });
      const { url, number } = (await w.helpers.outputs(run.run_id)).issue as { url: string; number: number };
      assert.match(url, /^https:\/\/github\.example\/acme\/web\/issues\/\d+$/);
      assert.equal(url.endsWith(`/${number}`), true);

      const post = w.slack.received.at(-1)!;
      assert.equal(post.path, '/api/chat.postMessage');
      assert.equal(post.headers.authorization, `Bearer ${w.secrets.slackToken}`);
      assert.equal(slackFields(post).channel, '#general');
      assert.equal(slackFields(post).text, `New issue: ${url}`);
      assert.deepEqual(run.output?.post, { ts: (run.output?.post as Json).ts, channel: 'C0GENERAL' });

      const mail = w.smtp.mails.at(-1)!;
      assert.equal(mail.user, 'robot@acme.test', 'signed in with the login from smtp_url');
      assert.equal(mail.from, 'robot@acme.test');
      assert.deepEqual(mail.to, ['bob@acme.test']);
      assert.match(mail.raw, /^From: Acme Robot <robot@acme\.test>$/m);
      assert.match(mail.raw, /^Subject: Issue: Roadmap review$/m);
      assert.ok(mail.raw.includes(`New issue: ${url}`), mail.raw);
      assert.match(String((run.output?.mail as Json).message_id), /^<.+@.+>$/);
    });

    it('reads pull requests, issues, files and channels in the shapes describe_capabilities advertises', async () => {
      const reads = plan('Reads', [
        capability('prs', 'github.list_pull_requests', { repo: lit('acme/web'), limit: lit(5) }),
        capability('issue', 'github.get_issue', { repo: lit('acme/web'), number: lit(3) }),
        capability('file', 'github.get_file', {
          repo: lit('acme/web'),
          path: lit('docs/README.md'),
          ref: lit('v2'),
        }),
        capability('channels', 'slack.list_channels', {}),
      ]);
      const run = await w.runToEnd(await w.publish(reads));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.output?.prs, {
        pull_requests: [
          { number: 7, title: 'Change 7', author: 'octocat', url: 'https://github.example/acme/web/pull/7' },
          { number: 8, title: 'Change 8', author: 'octocat', url: 'https://github.example/acme/web/pull/8' },
        ],
      });
      const list = w.github.received.find((r) => r.path.startsWith('/api/v3/repos/acme/web/pulls'))!;
      assert.equal(
        new URL(list.path, 'http://x').searchParams.get('state'),
        'open',
        'open ones unless asked',
      );
      assert.deepEqual((run.output?.issue as Json).labels, ['bug']);
      assert.equal((run.output?.file as Json).text, '# Read me (v2)\n');
      assert.deepEqual(run.output?.channels, {
        channels: [
          { id: 'C0GENERAL', name: 'general' },
          { id: 'C0RANDOM', name: 'random' },
        ],
      });
    });

    it('replies in a Slack thread and comments on an issue', async () => {
      const replies = plan('Replies', [
        capability('reply', 'slack.post_to_thread', {
          channel: lit('C0GENERAL'),
          thread_ts: lit('1700000000.000100'),
          text: lit('On it.'),
        }),
        capability('comment', 'github.comment_on_issue', {
          repo: lit('acme/web'),
          number: lit(3),
          body: lit('Looking.'),
        }),
      ]);
      const run = await w.runToEnd(await w.publish(replies));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      const reply = slackFields(w.slack.received.at(-1)!);
      assert.equal(reply.thread_ts, '1700000000.000100');
      assert.equal(reply.text, 'On it.');
      assert.equal((run.output?.reply as Json).thread_ts, '1700000000.000100');
      const comment = w.github.received.at(-1)!;
      assert.equal(comment.path, '/api/v3/repos/acme/web/issues/3/comments');
      assert.deepEqual(JSON.parse(comment.body), { body: 'Looking.' });
      assert.match(String((run.output?.comment as Json).url), /issues\/3#issuecomment-\d+$/);
    });

    it('retries a 429 after the Retry-After it gives, and opens the issue once', async () => {
      const before = issuePosts().length;
      w.github.answerNext({
        status: 429,
        headers: { 'retry-after': '1' },
        body: { message: 'You have exceeded a secondary rate limit.' },
      });
      const automation = await w.publish({
        ...single(
          'Rate limited',
          'github.create_issue',
          { repo: lit('acme/web'), title: lit('Once') },
          {
            retry: { max_attempts: 3, backoff_s: 0 },
          },
        ),
      });
      const run = await w.runToEnd(automation);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      const node = w.helpers.nodeOf(run, 'call');
      assert.equal(node.attempt, 2);
      const posts = issuePosts().slice(before);
      assert.equal(posts.length, 2, 'refused once, sent again once');
      const times = w.github.times.slice(-2);
      assert.ok(times[1]! - times[0]! >= 950, `waited ${times[1]! - times[0]!} ms of the 1 s asked`);
    });

    it('fails the node with the service’s own message on a 401, a Slack refusal and an SMTP login refusal', async () => {
      w.github.answerNext({
        status: 401,
        body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
      });
      const gh = await w.runToEnd(
        await w.publish(
          single('Refused', 'github.create_issue', { repo: lit('acme/web'), title: lit('No') }),
        ),
      );
      assert.equal(gh.status, 'failed');
      assert.equal(
        w.helpers.nodeOf(gh, 'call').error,
        'GitHub refused create_issue (401 Unauthorized): Bad credentials',
      );

      w.slack.answerNext({ status: 200, body: { ok: false, error: 'channel_not_found' } });
      const sl = await w.runToEnd(
        await w.publish(single('Nowhere', 'slack.post_message', { channel: lit('#gone'), text: lit('Hi') })),
      );
      assert.equal(w.helpers.nodeOf(sl, 'call').error, 'Slack refused post_message: channel_not_found');

      w.smtp.refuseNextLogin(535, '5.7.8 Username and Password not accepted');
      const mail = await w.runToEnd(
        await w.publish(
          single('Mail', 'email.send', { to: lit(['bob@acme.test']), subject: lit('Hi'), body: lit('Hi') }),
        ),
      );
      assert.equal(
        w.helpers.nodeOf(mail, 'call').error,
        'SMTP server 127.0.0.1 refused send (535): 5.7.8 Username and Password not accepted',
      );
    });

    it('says what a connection lacks before calling anything', async () => {
      await w.configure('github', { token: null });
      try {
        const before = w.github.received.length;
        const run = await w.runToEnd(
          await w.publish(single('No token', 'github.get_issue', { repo: lit('acme/web'), number: lit(1) })),
        );
        assert.match(
          w.helpers.nodeOf(run, 'call').error ?? '',
          /^the GitHub connection has no token yet; a workspace admin sets it on \/settings or with "tandem connector set github token=…"$/,
        );
        assert.equal(w.github.received.length, before);
      } finally {
        await w.configure('github', { token: w.secrets.githubToken });
      }
    });

    it('reaches none of the services in a dry run', async () => {
      const counts = () => [
        w.github.received.length,
        w.slack.received.length,
        w.smtp.mails.length,
        w.smtp.logins.length,
      ];
      const before = counts();
      const run = await w.runToEnd(await w.publish(announce('Dry')), true);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(w.helpers.nodeOf(run, 'issue').status, 'simulated');
      assert.equal(w.helpers.nodeOf(run, 'post').status, 'simulated');
      assert.equal(w.helpers.nodeOf(run, 'mail').status, 'simulated');
      assert.deepEqual(counts(), before);
    });
  });
}
