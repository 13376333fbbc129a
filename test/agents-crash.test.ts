import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { messageText } from './support/agents.ts';
import { testFixture } from './support/fixture.ts';
import { startWorker } from './support/worker-processes.ts';
import { startModelServer, textReply, type ModelServer } from './support/model-server.ts';

const QUESTIONS = 3;

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
};

describe('agent requests survive a worker killed with SIGKILL', () => {
  let dir: string;
  let services: Services;
  let model: ModelServer;
  const threads: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-agents-crash-'));
    model = await startModelServer();
    // Each answer names its question and takes a while, so kills land while one is being worked out.
    model.fallback = (request) => {
      const asked = /question (\d+)/.exec(messageText(request))?.[1] ?? '?';
      return { ...textReply(`Answer to question ${asked}.`), delayMs: 300 };
    };
    services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
    const { workspaces } = await importFixture(services.deps, testFixture);
    const acme = workspaces.Acme!;
    const ada = { personId: acme.users['ada@acme.test']!, workspaceId: acme.id, scopes: new Set(SCOPES) };
    for (let n = 1; n <= QUESTIONS; n++) {
      const added = await services.comments.add(ada, {
        document_id: acme.artifacts.roadmap,
        body_markdown: `@Assistant question ${n}: what ships first?`,
      });
      threads.push(added.thread_id);
    }
  });

  after(async () => {
    await services?.close();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const worker = () =>
    startWorker(undefined, dir, {
      // Everything it logs, as a worker started without LOG_LEVEL would.
      LOG_LEVEL: 'info',
      TANDEM_RUN_LEASE_S: '2',
      TANDEM_MODEL_URL: model.url,
      TANDEM_MODEL: 'test-model',
      TANDEM_AGENT_CONCURRENCY: '1',
    });

  const replies = () =>
    services.deps.db
      .selectFrom('comments')
      .select(['thread_id', 'body'])
      .where('agent', '=', 'Assistant')
      .where('thread_id', 'in', threads)
      .execute();

  it('answers every request exactly once after kills mid-answer and between answers', async () => {
    // Killed while the model works on the first question: nothing is posted.
    const first = await worker();
    await until('the first question to reach the model', () => model.requests.length >= 1);
    await first.kill();
    assert.deepEqual(await replies(), []);

    // Killed as soon as one reply is posted.
    const second = await worker();
    await until('a reply', async () => (await replies()).length >= 1);
    await second.kill();

    const third = await worker();
    try {
      await until('every request answered', async () => {
        const open = await services.deps.db
          .selectFrom('agent_requests')
          .select('id')
          .where('thread_id', 'in', threads)
          .where('status', 'in', ['pending', 'answering'])
          .execute();
        return open.length === 0;
      });
    } finally {
      await third.kill();
    }
    assert.equal(third.stderr(), '', 'the worker reported no errors');

    const posted = await replies();
    for (const [i, thread] of threads.entries()) {
      assert.deepEqual(
        posted.filter((r) => r.thread_id === thread).map((r) => r.body),
        [`Answer to question ${i + 1}.`],
        `question ${i + 1} has exactly one reply`,
      );
    }
    const requests = await services.deps.db
      .selectFrom('agent_requests')
      .select(['status', 'claims'])
      .where('thread_id', 'in', threads)
      .execute();
    assert.ok(
      requests.every((r) => r.status === 'answered'),
      JSON.stringify(requests),
    );
    assert.ok(model.requests.length > QUESTIONS, 'the question cut off by the first kill was asked again');
    assert.ok(
      requests.some((r) => r.claims >= 2),
      'a request was taken up again after its worker died',
    );
  });
});
