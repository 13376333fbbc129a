import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { API_ROUTES } from '../src/http/api.ts';
import { log } from '../src/observability/log.ts';
import type { RunningServer } from '../src/server.ts';
import { capability, lit, plan, type Published } from './support/automations.ts';
import { connectorWorld, single, type ConnectorWorld } from './support/connectors.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { hookSenders } from './support/hooks.ts';
import { startOnFreePorts } from './support/raw-http.ts';

/** Everything this process writes to the console or its output streams while the suite runs. */
function captureLogs() {
  const lines: string[] = [];
  const record = (args: unknown[]) =>
    lines.push(
      args
        .map((a) =>
          a instanceof Error ? `${a.message}\n${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a),
        )
        .join(' '),
    );
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const saved = methods.map((m) => console[m]);
  methods.forEach((m, i) => {
    console[m] = (...args: unknown[]) => {
      record(args);
      saved[i]!.apply(console, args);
    };
  });
  const writes = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    return () => (stream.write = write);
  });
  // The structured log writes to its own stream, past process.stderr.
  const stream = (log as unknown as Record<symbol, { write(line: string): unknown }>)[
    pino.symbols.streamSym
  ]!;
  const writeLine = stream.write.bind(stream);
  stream.write = (line: string) => {
    lines.push(line);
    return writeLine(line);
  };
  return {
    lines,
    restore() {
      methods.forEach((m, i) => (console[m] = saved[i]!));
      for (const undo of writes) undo();
      stream.write = writeLine;
    },
  };
}

/** Started by hand here; an event trigger keeps the automation pages' schedule preview out of it. */
const TRIGGER = { kind: 'connector_event', provider: 'slack', event: 'channel_created' };

for (const db of DATABASES) {
  describe(`connector secrets stay secret on ${db.name}`, () => {
    let w: ConnectorWorld;
    let server: RunningServer;
    let dataDir: string;
    let logs: ReturnType<typeof captureLogs>;
    /** Everything a person or an agent could have been shown, as text. */
    const shown: string[] = [];
    const automations: Published[] = [];
    const runIds: string[] = [];

    before(async () => {
      logs = captureLogs();
      w = await connectorWorld(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-connector-secrets-'));
      server = await startOnFreePorts(w.h.services, dataDir);
    });
    after(async () => {
      logs.restore();
      await server.close();
      await w.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const secretList = () => Object.values(w.secrets);
    const leaks = (text: string) => secretList().filter((s) => text.includes(s));

    async function runAndKeep(planJson: Record<string, unknown>, dryRun?: boolean) {
      const automation = await w.helpers.publish(w.ada, planJson, {
        write_approval: 'automatic',
        trigger: TRIGGER,
      });
      automations.push(automation);
      const run = await w.runToEnd(automation, dryRun);
      runIds.push(run.run_id);
      shown.push(JSON.stringify(run));
      return run;
    }

    it('works its way through every connector, a refusal that quotes the token included', async () => {
      const everything = plan('Everything', [
        capability('issue', 'github.create_issue', { repo: lit('acme/web'), title: lit('Secrets') }),
        capability('prs', 'github.list_pull_requests', { repo: lit('acme/web') }),
        capability('post', 'slack.post_message', { channel: lit('#general'), text: lit('Hello') }),
        capability('mail', 'email.send', { to: lit(['bob@acme.test']), subject: lit('Hi'), body: lit('Hi') }),
      ]);
      assert.equal((await runAndKeep(everything)).status, 'succeeded');
      await runAndKeep(everything, true);

      // Services that repeat the credential in their refusal: the node's error must not.
      w.github.answerNext({ status: 401, body: { message: `token ${w.secrets.githubToken} was revoked` } });
      w.slack.answerNext({ status: 200, body: { ok: false, error: `invalid_auth ${w.secrets.slackToken}` } });
      w.smtp.refuseNextLogin(535, `password ${w.secrets.smtpPassword} is wrong`);
      const refused = await runAndKeep(everything);
      assert.equal(refused.status, 'failed');
      const errors = refused.nodes.map((n) => n.error ?? '').join('\n');
      assert.match(errors, /GitHub refused \w+ \(401 Unauthorized\): token \[secret\] was revoked/);
      assert.match(errors, /Slack refused post_message: invalid_auth \[secret\]/);
      assert.match(errors, /password \[secret\] is wrong/);

      // Connection failures and an unreachable service say what happened without the settings.
      await w.configure('slack', { api_url: 'http://127.0.0.1:9/api/' });
      await runAndKeep(single('Unreachable', 'slack.list_channels', {}));
      await w.configure('slack', { api_url: w.slack.url('/api/') });

      // Hooks signed with the webhook secrets.
      const { github } = hookSenders(() => server.url);
      const hook = await github(
        acme(w.h).id,
        'ping',
        { zen: 'Keep it logically awesome.' },
        { secret: w.secrets.webhookSecret },
      );
      assert.equal(hook.status, 200);

      // The stand-ins did see them: the search below would find a leak.
      assert.ok(w.github.received.some((r) => r.headers.authorization === `token ${w.secrets.githubToken}`));
      assert.ok(w.slack.received.some((r) => r.headers.authorization === `Bearer ${w.secrets.slackToken}`));
      assert.ok(w.smtp.mails.length > 0);
    });

    it('shows none of them in any tool result', async () => {
      const texts: string[] = [];
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result = await w.ada.call(name, args);
        texts.push(result.text, JSON.stringify(result.structured));
      };
      await call('describe_capabilities');
      await call('list_automations');
      for (const [i, a] of automations.entries()) {
        await call('read_automation', {
          automation_id: a.automation_id,
          include_plan: true,
          include_runs: true,
        });
        await call('read_automation', { automation_id: a.automation_id, run_id: runIds[i] });
      }
      assert.deepEqual(leaks(texts.join('\n')), []);
      assert.deepEqual(leaks(shown.join('\n')), []);
    });

    it('shows none of them in any JSON API answer, the activity history included', async () => {
      const ada = w.h.actor('ada@acme.test');
      const token = (
        await w.h.services.tokens.create(ada.personId, ada.workspaceId, [...ada.scopes], 3_600_000)
      ).token;
      const texts: string[] = [];
      const get = async (path: string) => {
        const response = await fetch(new URL(`/api${path}`, server.url), {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        });
        texts.push(`${path} ${response.status} ${await response.text()}`);
      };
      const documents = (await w.h.services.documents.list(ada, {})).documents.map((d) => d.document_id);
      for (const route of API_ROUTES.filter((r) => r.method === 'GET')) {
        if (route.path.startsWith('/sessions/'))
          for (const a of automations) await get(`/sessions/${a.session_id}`);
        else if (route.path === '/automations/:id/runs/:run_id')
          for (const [i, a] of automations.entries())
            await get(`/automations/${a.automation_id}/runs/${runIds[i]}`);
        else if (route.path.startsWith('/automations/:id'))
          for (const a of automations) await get(route.path.replace(':id', a.automation_id));
        else if (route.path.startsWith('/documents/:id'))
          for (const id of documents) await get(route.path.replace(':id', id));
        else if (!route.path.includes(':')) await get(route.path);
      }
      assert.ok(
        texts.some((t) => t.startsWith('/activity 200')),
        'the activity history was read',
      );
      assert.deepEqual(leaks(texts.join('\n')), []);
      // What the settings page shows of the connections.
      const views = JSON.stringify(await w.h.services.connectors.list(ada));
      assert.match(views, /"token":"set"/);
      assert.deepEqual(leaks(views), []);
    });

    it('keeps none of them in the open in any table', async () => {
      const database = w.h.services.deps.db;
      const tables =
        db.name === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(database)
          : await sql<{
              name: string;
            }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
              database,
            );
      assert.ok(tables.rows.some((t) => t.name === 'connectors'));
      const dump: string[] = [];
      for (const { name } of tables.rows) {
        const rows = await sql`select * from ${sql.table(name)}`.execute(database);
        dump.push(
          `${name}: ${JSON.stringify(rows.rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
      }
      const text = dump.join('\n');
      assert.match(text, /"sealed":"v1:/, 'the connectors hold their secrets sealed');
      assert.deepEqual(leaks(text), []);
    });

    it('writes none of them to a log line', () => {
      assert.deepEqual(leaks(logs.lines.join('\n')), []);
    });
  });
}
