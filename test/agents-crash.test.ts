import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/workspace/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { messageText } from './support/agents.ts';
import { testFixture } from './support/fixture.ts';
import { startModelServer, textReply, type ModelServer } from './support/model-server.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');
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

  const worker = (): { child: ChildProcess; ready: Promise<void>; exited: Promise<unknown> } => {
    const child = spawn(process.execPath, [BIN, 'worker'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TANDEM_DATA: dir,
        TANDEM_RUN_LEASE_S: '2',
        TANDEM_MODEL_URL: model.url,
        TANDEM_MODEL: 'test-model',
        TANDEM_AGENT_CONCURRENCY: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = new Promise<void>((done) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('is running')) done();
      });
      child.once('exit', () => done());
    });
    return { child, ready, exited: new Promise((done) => child.once('exit', done)) };
  };

  const kill = async (w: ReturnType<typeof worker>) => {
    w.child.kill('SIGKILL');
    await w.exited;
  };

  const replies = () =>
    services.deps.db
      .selectFrom('comments')
      .select(['thread_id', 'body'])
      .where('agent', '=', 'Assistant')
      .where('thread_id', 'in', threads)
      .execute();

  it('answers every request exactly once after kills mid-answer and between answers', async () => {
    // Killed while the model works on the first question: nothing is posted.
    const first = worker();
    await first.ready;
    await until('the first question to reach the model', () => model.requests.length >= 1);
    await kill(first);
    assert.deepEqual(await replies(), []);

    // Killed as soon as one reply is posted.
    const second = worker();
    await second.ready;
    await until('a reply', async () => (await replies()).length >= 1);
    await kill(second);

    const third = worker();
    let stderr = '';
    third.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await third.ready;
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
      await kill(third);
    }
    assert.equal(stderr, '', 'the worker reported no errors');

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
