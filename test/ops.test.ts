import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { metricsAllowed } from '../src/http/ops.ts';
import type { RunningServer } from '../src/server.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import { rawRequest, startOnFreePorts } from './support/raw-http.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const GET = { method: 'GET' };

describe('who may read /metrics', () => {
  const token = 'a-metrics-token-of-length';
  it('serves loopback scrapers, in both address families', () => {
    for (const remote of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      assert.equal(metricsAllowed(remote, undefined, undefined), true);
  });
  it('serves others only with the exact token', () => {
    assert.equal(metricsAllowed('10.1.2.3', undefined, token), false);
    assert.equal(metricsAllowed('10.1.2.3', 'wrong', token), false);
    assert.equal(metricsAllowed('10.1.2.3', `${token}x`, token), false);
    assert.equal(metricsAllowed('10.1.2.3', token, token), true);
    assert.equal(metricsAllowed('10.1.2.3', token, undefined), false);
  });
});

for (const db of DATABASES) {
  describe(`health, readiness and metrics on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let engine: Engine;
    let dir: string;

    before(async () => {
      h = await setup(db);
      dir = mkdtempSync(join(tmpdir(), 'tandem-ops-'));
      server = await startOnFreePorts(h.services, dir);
      engine = createEngine(h.services, { pollMs: 50 });
    });
    after(async () => {
      await engine.stop();
      await server.close();
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers /healthz while the process runs', async () => {
      const res = await rawRequest(`${server.url}/healthz`, GET);
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { status: 'ok' });
    });

    it('is ready when the database answers, and says which check failed when Redis does not', async () => {
      const ready = await rawRequest(`${server.url}/readyz`, GET);
      assert.equal(ready.status, 200, ready.body);
      assert.equal(JSON.parse(ready.body).checks.database, 'ok');
      const other = await startOnFreePorts(h.services, dir, { REDIS_URL: 'redis://127.0.0.1:1' });
      try {
        const res = await rawRequest(`${other.url}/readyz`, GET);
        assert.equal(res.status, 503);
        assert.deepEqual(JSON.parse(res.body).checks, { database: 'ok', redis: 'unreachable' });
      } finally {
        await other.close();
      }
    });

    it('reports the run engine once it runs', async () => {
      await engine.start();
      const res = await rawRequest(`${server.url}/readyz`, GET);
      assert.equal(JSON.parse(res.body).checks.engine, 'ok');
    });

    it('counts tool calls by tool and outcome and shows runs by status', async () => {
      const ada = await h.as('ada@acme.test');
      await ada.call('list_documents', {});
      await ada.call('read_document', { document_id: 'doc_made_up' });
      const res = await rawRequest(`${server.url}/metrics`, GET);
      assert.equal(res.status, 200);
      assert.match(res.body, /tandem_tool_calls_total\{tool="list_documents",outcome="ok"\} [1-9]/);
      assert.match(res.body, /tandem_tool_calls_total\{tool="read_document",outcome="refused"\} [1-9]/);
      assert.match(res.body, /tandem_tool_call_seconds_bucket\{le="[^"]+",tool="list_documents"\}/);
      assert.match(res.body, /tandem_queue_depth \d+/);
    });
  });
}

describe('structured logs', () => {
  it('are JSON on standard error at LOG_LEVEL, carry their run, and never write a secret, even one hung on an error', () => {
    const script = `
      const { log, withLogContext } = await import(${JSON.stringify(join(ROOT, 'src/observability/log.ts'))});
      withLogContext({ run: 'run_1', person: 'per_1' }, () => {
        log.debug('hidden at info');
        log.info({ token: 'tdm_secret', headers: { authorization: 'Bearer x' } }, 'a step ended');
        const failed = Object.assign(new Error('connection ended'), {
          code: '57P01',
          client: { connectionString: 'postgres://tandem:hunter2@db/tandem' },
        });
        log.warn({ err: failed }, 'a Postgres connection failed');
      });
      log.flush();`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, LOG_LEVEL: 'info' },
      encoding: 'utf8',
    });
    const lines = out.stderr
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2, out.stderr);
    const line = lines[0]!;
    assert.equal(line.msg, 'a step ended');
    assert.equal(line.run, 'run_1');
    assert.equal(line.person, 'per_1');
    // An error keeps its own fields; what a library hung on it (a client and its settings) is left out.
    assert.deepEqual(
      {
        message: (lines[1]!.err as Record<string, unknown>).message,
        code: (lines[1]!.err as Record<string, unknown>).code,
      },
      { message: 'connection ended', code: '57P01' },
    );
    assert.doesNotMatch(out.stderr, /tdm_secret|Bearer x|hunter2/);
    assert.equal(out.stdout, '');
  });
});
