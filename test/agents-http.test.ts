import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { acme } from './support/harness.ts';
import { openAppFixture, type AppFixture } from './support/app-fixture.ts';

describe('the app sees which agent is answering a thread', () => {
  let app: AppFixture;
  let token: string;
  const roadmap = () => acme(app.h).artifacts.roadmap as string;
  const requests = async (documentId: string, bearer = token) =>
    app.get(`/api/documents/${documentId}/agent-requests`, { authorization: `Bearer ${bearer}` });

  before(async () => {
    app = await openAppFixture();
    token = await app.tokenFor('ada@acme.test', ['documents:read']);
  });
  after(() => app.close());

  it('lists a mention of @Assistant as pending on its thread, then answered with its reply', async () => {
    const ada = app.h.actor('ada@acme.test');
    const made = await app.h.services.comments.add(ada, {
      document_id: roadmap(),
      body_markdown: '@Assistant what is on the roadmap?',
    });
    let res = await requests(roadmap());
    assert.equal(res.status, 200, res.body);
    const pending = JSON.parse(res.body) as {
      requests: { thread_id: string; agent: string; status: string }[];
    };
    const mine = pending.requests.filter((r) => r.thread_id === made.thread_id);
    assert.deepEqual(
      mine.map((r) => [r.agent, r.status]),
      [['Assistant', 'pending']],
    );
    // With no model configured the assistant answers at once that none is set up.
    await app.engine.drain();
    res = await requests(roadmap());
    const done = (
      JSON.parse(res.body) as { requests: { thread_id: string; status: string; reply_comment_id?: string }[] }
    ).requests.find((r) => r.thread_id === made.thread_id);
    // It ended (no model: a reply saying how an admin sets one) and names its reply.
    assert.ok(done && (done.status === 'answered' || done.status === 'failed'), JSON.stringify(done));
    assert.equal(typeof done.reply_comment_id, 'string');
  });

  it('answers a document the person cannot open, or that does not exist, the same way', async () => {
    const plan = acme(app.h).artifacts.plan as string; // private to Ada; Dee has no role on it
    const cy = await app.tokenFor('dee@acme.test', ['documents:read']);
    const forbidden = await requests(plan, cy);
    const madeUp = await requests('doc_made_up', cy);
    assert.equal(forbidden.status, 404);
    assert.equal(madeUp.status, 404);
    assert.equal(forbidden.body, madeUp.body);
  });
});
