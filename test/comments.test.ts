import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { REPLY_CAP } from '../src/domains/comments/comments.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok, refused, refusedWithPrefix } from './support/results.ts';

interface ReplyView {
  comment_id: string;
  author_label: string;
  body: string;
  deleted: boolean;
  created_at: number;
}

interface ThreadView {
  thread_id: string;
  status: 'open' | 'resolved';
  anchor_excerpt?: string;
  author_label: string;
  body: string;
  created_at: number;
  replies: ReplyView[];
  more_replies: boolean;
  agent_requests: string[];
}

/** A commentable artifact of the fixture, with passages that occur once, twice and never in its text. */
interface Target {
  label: string;
  key: string;
  unique: string;
  twice: string;
  absent: string;
}

const TARGETS: Target[] = [
  // Roadmap's markdown is "# Roadmap\n\nShip it.\n": "p" occurs in "Roadmap" and in "Ship".
  { label: 'a document', key: 'roadmap', unique: 'Ship it.', twice: 'p', absent: 'Ship it tomorrow.' },
  // Landing's HTML source is "<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n".
  {
    label: 'a page',
    key: 'landing',
    unique: '<h1>Hi</h1>',
    twice: '<p>Welcome</p>',
    absent: '<p>Goodbye</p>',
  },
];

const NOT_FOUND = 'Tool failed: Artifact not found';
const READ_ONLY = 'Tool failed: This document is read-only for you';
const ARCHIVED = 'Tool failed: This document is archived';
const NOT_BOOLEAN = 'Tool failed: resolved must be a boolean';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startThread(
  caller: ToolCaller,
  documentId: string,
  body: string,
  extra: Record<string, unknown> = {},
) {
  const s = ok(await caller.call('add_comment', { document_id: documentId, body_markdown: body, ...extra }));
  assert.equal(typeof s.thread_id, 'string');
  return s.thread_id as string;
}

async function reply(caller: ToolCaller, documentId: string, threadId: string, body: string) {
  const s = ok(
    await caller.call('add_comment', { document_id: documentId, thread_id: threadId, body_markdown: body }),
  );
  return s.comment_id as string;
}

async function threads(
  caller: ToolCaller,
  documentId: string,
  includeResolved = false,
): Promise<ThreadView[]> {
  const args = includeResolved
    ? { document_id: documentId, include_resolved: true }
    : { document_id: documentId };
  return ok(await caller.call('read_comments', args)).threads as ThreadView[];
}

function only(list: ThreadView[], threadId: string): ThreadView {
  const found = list.filter((t) => t.thread_id === threadId);
  assert.equal(found.length, 1, `thread ${threadId} should be listed once`);
  return found[0]!;
}

for (const db of DATABASES) {
  describe(`comment threads on ${db.name}`, () => {
    let h: Harness;
    let ids: Record<string, string>;
    beforeEach(async () => {
      h = await setup(db);
      ids = acme(h).artifacts;
    });
    afterEach(() => h.close());

    for (const target of TARGETS) {
      describe(`starting and replying on ${target.label} (${target.key})`, () => {
        it('anchors a new thread to an excerpt that occurs exactly once', async () => {
          const ada = await h.as('ada@acme.test');
          const r = await ada.call('add_comment', {
            document_id: ids[target.key],
            body_markdown: 'Is this right?',
            anchor_excerpt: target.unique,
          });
          const s = ok(r);
          assert.equal(s.document_id, ids[target.key]);
          assert.equal(s.reply, false);
          assert.equal(s.anchored, true);
          assert.equal(s.anchor_excerpt_ignored, undefined);
          assert.doesNotMatch(r.text, /not anchored/);

          const read = await ada.call('read_comments', { document_id: ids[target.key] });
          const thread = only(ok(read).threads as ThreadView[], s.thread_id as string);
          assert.equal(thread.anchor_excerpt, target.unique);
          assert.ok(read.text.includes(`on “${target.unique}”`), read.text);
        });

        it('creates an unanchored thread, without failing, when the excerpt occurs twice', async () => {
          const ada = await h.as('ada@acme.test');
          const r = await ada.call('add_comment', {
            document_id: ids[target.key],
            body_markdown: 'Which one?',
            anchor_excerpt: target.twice,
          });
          const s = ok(r);
          assert.equal(s.reply, false);
          assert.equal(s.anchored, false);
          assert.equal(s.anchor_excerpt_ignored, target.twice);
          assert.match(r.text, /not anchored/);

          const thread = only(await threads(ada, ids[target.key]!), s.thread_id as string);
          assert.equal(thread.anchor_excerpt, undefined);
          assert.equal(thread.body, 'Which one?');
        });

        it('creates an unanchored thread, without failing, when the excerpt does not occur', async () => {
          const ada = await h.as('ada@acme.test');
          const r = await ada.call('add_comment', {
            document_id: ids[target.key],
            body_markdown: 'Where is this?',
            anchor_excerpt: target.absent,
          });
          const s = ok(r);
          assert.equal(s.anchored, false);
          assert.equal(s.anchor_excerpt_ignored, target.absent);
          assert.match(r.text, /not anchored/);

          const thread = only(await threads(ada, ids[target.key]!), s.thread_id as string);
          assert.equal(thread.anchor_excerpt, undefined);
        });

        it('attaches a thread without an excerpt to the whole artifact', async () => {
          const ada = await h.as('ada@acme.test');
          const r = await ada.call('add_comment', {
            document_id: ids[target.key],
            body_markdown: 'Overall: good.',
          });
          const s = ok(r);
          assert.equal(s.reply, false);
          assert.equal(s.anchored, false);
          assert.equal(s.anchor_excerpt_ignored, undefined);
          assert.doesNotMatch(r.text, /not anchored/);

          const read = await ada.call('read_comments', { document_id: ids[target.key] });
          const thread = only(ok(read).threads as ThreadView[], s.thread_id as string);
          assert.equal(thread.anchor_excerpt, undefined);
          assert.match(read.text, /on the whole artifact/);
        });

        it('replies in a thread, returning thread_id and comment_id and ignoring anchor_excerpt', async () => {
          const ada = await h.as('ada@acme.test');
          const bob = await h.as('bob@acme.test');
          const threadId = await startThread(ada, ids[target.key]!, 'Opening remark');

          const r = await bob.call('add_comment', {
            document_id: ids[target.key],
            thread_id: threadId,
            body_markdown: 'A reply',
            anchor_excerpt: target.unique,
          });
          const s = ok(r);
          assert.equal(s.thread_id, threadId);
          assert.equal(s.reply, true);
          assert.equal(typeof s.comment_id, 'string');
          assert.ok((s.comment_id as string).length > 0);
          assert.equal(s.anchored, undefined);
          assert.ok(r.text.includes(s.comment_id as string), r.text);

          const list = await threads(ada, ids[target.key]!);
          assert.equal(list.length, 1, 'a reply must not start a new thread');
          const thread = only(list, threadId);
          assert.equal(thread.anchor_excerpt, undefined, 'a reply must not anchor its thread');
          assert.deepEqual(
            thread.replies.map((x) => [x.comment_id, x.author_label, x.body]),
            [[s.comment_id, 'Bob Stone', 'A reply']],
          );
        });

        it(`shows at most ${REPLY_CAP} replies per thread, the latest ones, and says when some are left out`, async () => {
          const ada = await h.as('ada@acme.test');
          const full = await startThread(ada, ids[target.key]!, 'Exactly at the cap');
          for (let i = 1; i <= REPLY_CAP; i++) await reply(ada, ids[target.key]!, full, `full ${i}`);
          const over = await startThread(ada, ids[target.key]!, 'Over the cap');
          const total = REPLY_CAP + 3;
          for (let i = 1; i <= total; i++) {
            await reply(ada, ids[target.key]!, over, `reply ${i}`);
            await pause(2);
          }

          const list = await threads(ada, ids[target.key]!);
          const atCap = only(list, full);
          assert.equal(atCap.replies.length, REPLY_CAP);
          assert.equal(atCap.more_replies, false);

          const capped = only(list, over);
          assert.equal(capped.more_replies, true);
          const expected = Array.from({ length: REPLY_CAP }, (_, i) => `reply ${total - REPLY_CAP + 1 + i}`);
          assert.deepEqual(
            capped.replies.map((x) => x.body),
            expected,
            'the latest replies, oldest of them first',
          );
        });

        it('keeps replies written within the same millisecond in the order they were written', async (t) => {
          const ada = await h.as('ada@acme.test');
          const threadId = await startThread(ada, ids[target.key]!, 'Quick exchange');
          t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
          const bodies = Array.from({ length: 10 }, (_, i) => `quick ${i + 1}`);
          for (const body of bodies) await reply(ada, ids[target.key]!, threadId, body);
          const thread = only(await threads(ada, ids[target.key]!), threadId);
          assert.deepEqual(
            thread.replies.map((x) => x.body),
            bodies,
          );
        });
      });
    }

    describe('read_comments', () => {
      it("returns the caller's effective role", async () => {
        const cases: [string, string, string][] = [
          ['ada@acme.test', 'plan', 'owner'],
          ['bob@acme.test', 'plan', 'commenter'],
          ['cy@acme.test', 'plan', 'viewer'],
          ['bob@acme.test', 'roadmap', 'editor'],
          ['ada@acme.test', 'landing', 'owner'],
          ['bob@acme.test', 'landing', 'commenter'],
          ['cy@acme.test', 'landing', 'viewer'],
        ];
        for (const [email, key, role] of cases) {
          const caller = await h.as(email);
          const s = ok(await caller.call('read_comments', { document_id: ids[key] }));
          assert.equal(s.role, role, `${email} on ${key}`);
          assert.equal(s.document_id, ids[key]);
        }
      });

      for (const target of TARGETS) {
        it(`returns every field of a thread on ${target.label}`, async () => {
          const ada = await h.as('ada@acme.test');
          const bob = await h.as('bob@acme.test');
          const before = Date.now();
          const threadId = await startThread(ada, ids[target.key]!, 'Please **check** this', {
            anchor_excerpt: target.unique,
          });
          const commentId = await reply(bob, ids[target.key]!, threadId, 'Checked.');
          const after = Date.now();

          const thread = only(await threads(bob, ids[target.key]!), threadId);
          assert.equal(thread.status, 'open');
          assert.equal(thread.anchor_excerpt, target.unique);
          assert.equal(thread.author_label, 'Ada Lovelace');
          assert.equal(thread.body, 'Please **check** this');
          assert.ok(
            thread.created_at >= before && thread.created_at <= after,
            `created_at ${thread.created_at}`,
          );
          assert.equal(thread.more_replies, false);
          assert.deepEqual(thread.agent_requests, []);
          assert.equal(thread.replies.length, 1);
          const r = thread.replies[0]!;
          assert.equal(r.comment_id, commentId);
          assert.equal(r.author_label, 'Bob Stone');
          assert.equal(r.body, 'Checked.');
          assert.equal(r.deleted, false);
          assert.ok(
            r.created_at >= thread.created_at && r.created_at <= after,
            `reply created_at ${r.created_at}`,
          );
        });

        it(`lists only open threads on ${target.label} unless include_resolved is true`, async () => {
          const ada = await h.as('ada@acme.test');
          const open = await startThread(ada, ids[target.key]!, 'Still open');
          const done = await startThread(ada, ids[target.key]!, 'Done with');
          ok(
            await ada.call('resolve_comment', {
              document_id: ids[target.key],
              thread_id: done,
              resolved: true,
            }),
          );

          const defaults = await threads(ada, ids[target.key]!);
          assert.deepEqual(
            defaults.map((t) => [t.thread_id, t.status]),
            [[open, 'open']],
          );

          const explicitFalse = ok(
            await ada.call('read_comments', { document_id: ids[target.key], include_resolved: false }),
          ).threads as ThreadView[];
          assert.deepEqual(
            explicitFalse.map((t) => t.thread_id),
            [open],
          );

          const all = await threads(ada, ids[target.key]!, true);
          assert.equal(all.length, 2);
          assert.equal(only(all, open).status, 'open');
          assert.equal(only(all, done).status, 'resolved');
        });
      }

      it('says "No open comment threads." and "No comment threads." when there are none', async () => {
        const ada = await h.as('ada@acme.test');
        for (const key of ['plan', 'landing']) {
          const open = await ada.call('read_comments', { document_id: ids[key] });
          assert.deepEqual(ok(open).threads, []);
          assert.equal(open.text, 'No open comment threads.');
          const all = await ada.call('read_comments', { document_id: ids[key], include_resolved: true });
          assert.deepEqual(ok(all).threads, []);
          assert.equal(all.text, 'No comment threads.');
        }
      });

      it('says "No open comment threads." when every thread is resolved, and lists them with include_resolved', async () => {
        const ada = await h.as('ada@acme.test');
        for (const key of ['plan', 'landing']) {
          const threadId = await startThread(ada, ids[key]!, 'Settled');
          ok(
            await ada.call('resolve_comment', { document_id: ids[key], thread_id: threadId, resolved: true }),
          );
          const open = await ada.call('read_comments', { document_id: ids[key] });
          assert.equal(open.text, 'No open comment threads.');
          const all = await ada.call('read_comments', { document_id: ids[key], include_resolved: true });
          assert.ok(all.text.includes(threadId), all.text);
          assert.ok(all.text.includes('Settled'), all.text);
        }
      });
    });

    describe('resolve_comment', () => {
      for (const target of TARGETS) {
        it(`resolves and reopens a thread on ${target.label}`, async () => {
          const ada = await h.as('ada@acme.test');
          const threadId = await startThread(ada, ids[target.key]!, 'To settle');

          const resolved = await ada.call('resolve_comment', {
            document_id: ids[target.key],
            thread_id: threadId,
            resolved: true,
          });
          assert.equal(resolved.text, `Thread ${threadId} is now resolved.`);
          assert.deepEqual(ok(resolved), {
            document_id: ids[target.key],
            thread_id: threadId,
            status: 'resolved',
          });
          assert.deepEqual(await threads(ada, ids[target.key]!), []);
          assert.equal(only(await threads(ada, ids[target.key]!, true), threadId).status, 'resolved');

          const reopened = await ada.call('resolve_comment', {
            document_id: ids[target.key],
            thread_id: threadId,
            resolved: false,
          });
          assert.equal(reopened.text, `Thread ${threadId} is now open.`);
          assert.deepEqual(ok(reopened), {
            document_id: ids[target.key],
            thread_id: threadId,
            status: 'open',
          });
          assert.equal(only(await threads(ada, ids[target.key]!), threadId).status, 'open');
        });
      }

      it('is idempotent: the same value again gives the same result and changes nothing', async () => {
        const ada = await h.as('ada@acme.test');
        const bob = await h.as('bob@acme.test');
        const threadId = await startThread(ada, ids.plan!, 'Twice');
        const args = { document_id: ids.plan, thread_id: threadId, resolved: true };
        const stored = () =>
          h.services.deps.db
            .selectFrom('threads')
            .select(['status', 'resolved_by', 'resolved_at'])
            .where('id', '=', threadId)
            .executeTakeFirstOrThrow();

        const first = await ada.call('resolve_comment', args);
        const afterFirst = await stored();
        assert.equal(afterFirst.status, 'resolved');
        await new Promise((resolve) => setTimeout(resolve, 5));
        const second = await bob.call('resolve_comment', args);
        assert.equal(second.isError, false, second.text);
        assert.equal(second.text, first.text);
        assert.deepEqual(second.structured, first.structured);
        assert.deepEqual(await stored(), afterFirst, 'resolving a resolved thread must not touch it');

        const reopen = { ...args, resolved: false };
        const open1 = await ada.call('resolve_comment', reopen);
        const open2 = await ada.call('resolve_comment', reopen);
        assert.equal(open2.isError, false, open2.text);
        assert.equal(open2.text, open1.text);
        assert.equal(open2.text, `Thread ${threadId} is now open.`);
        assert.deepEqual(open2.structured, open1.structured);
        assert.equal(only(await threads(ada, ids.plan!), threadId).status, 'open');
      });

      it('refuses a resolved value that is not a boolean, in its own words', async () => {
        const ada = await h.as('ada@acme.test');
        const threadId = await startThread(ada, ids.roadmap!, 'Keep open');
        const base = { document_id: ids.roadmap, thread_id: threadId };
        const variants: [string, Record<string, unknown>][] = [
          ['"true"', { ...base, resolved: 'true' }],
          ['1', { ...base, resolved: 1 }],
          ['0', { ...base, resolved: 0 }],
          ['null', { ...base, resolved: null }],
          ['missing', base],
        ];
        for (const [label, args] of variants) {
          const r = await ada.call('resolve_comment', args);
          assert.equal(r.isError, true, `resolved ${label} should be refused`);
          assert.equal(r.text, NOT_BOOLEAN, `resolved ${label}`);
        }
        assert.equal(only(await threads(ada, ids.roadmap!), threadId).status, 'open');
      });
    });

    describe('who may comment', () => {
      for (const key of ['plan', 'landing']) {
        it(`refuses a viewer's comments, replies and resolutions on ${key}`, async () => {
          const ada = await h.as('ada@acme.test');
          const cy = await h.as('cy@acme.test');
          const threadId = await startThread(ada, ids[key]!, 'Owner thread');

          refused(await cy.call('add_comment', { document_id: ids[key], body_markdown: 'Mine' }), READ_ONLY);
          refused(
            await cy.call('add_comment', {
              document_id: ids[key],
              body_markdown: 'Me too',
              thread_id: threadId,
            }),
            READ_ONLY,
          );
          refused(
            await cy.call('resolve_comment', { document_id: ids[key], thread_id: threadId, resolved: true }),
            READ_ONLY,
          );

          const list = await threads(cy, ids[key]!);
          assert.equal(list.length, 1);
          assert.equal(only(list, threadId).status, 'open');
          assert.deepEqual(only(list, threadId).replies, []);
        });

        it(`lets a commenter comment, reply, resolve and reopen on ${key}`, async () => {
          const ada = await h.as('ada@acme.test');
          const bob = await h.as('bob@acme.test');
          const own = await startThread(bob, ids[key]!, 'From Bob');
          const adas = await startThread(ada, ids[key]!, 'From Ada');
          await reply(bob, ids[key]!, adas, 'Bob answers');

          const r = await bob.call('resolve_comment', {
            document_id: ids[key],
            thread_id: adas,
            resolved: true,
          });
          assert.equal(r.text, `Thread ${adas} is now resolved.`);
          const o = await bob.call('resolve_comment', {
            document_id: ids[key],
            thread_id: own,
            resolved: true,
          });
          assert.equal(o.text, `Thread ${own} is now resolved.`);
          const back = await bob.call('resolve_comment', {
            document_id: ids[key],
            thread_id: own,
            resolved: false,
          });
          assert.equal(back.text, `Thread ${own} is now open.`);

          const all = await threads(ada, ids[key]!, true);
          assert.equal(only(all, own).author_label, 'Bob Stone');
          assert.equal(only(all, own).status, 'open');
          assert.equal(only(all, adas).status, 'resolved');
          assert.deepEqual(
            only(all, adas).replies.map((x) => [x.author_label, x.body]),
            [['Bob Stone', 'Bob answers']],
          );
        });
      }

      for (const key of ['notes', 'archived_page']) {
        it(`refuses comments and resolutions on the archived ${key}, which can still be read`, async () => {
          const ada = await h.as('ada@acme.test');
          refused(
            await ada.call('add_comment', { document_id: ids[key], body_markdown: 'Too late' }),
            ARCHIVED,
          );
          refused(
            await ada.call('add_comment', {
              document_id: ids[key],
              body_markdown: 'Too late',
              anchor_excerpt: 'old',
            }),
            ARCHIVED,
          );
          refused(
            await ada.call('resolve_comment', {
              document_id: ids[key],
              thread_id: 'thr_unknown',
              resolved: true,
            }),
            ARCHIVED,
          );
          const read = await ada.call('read_comments', { document_id: ids[key], include_resolved: true });
          assert.deepEqual(ok(read).threads, []);
          assert.equal(ok(read).role, 'owner');
        });
      }

      it('refuses a thread_id that belongs to another artifact and leaves that thread alone', async () => {
        const ada = await h.as('ada@acme.test');
        const elsewhere = await startThread(ada, ids.roadmap!, 'On the roadmap');

        refusedWithPrefix(
          await ada.call('add_comment', {
            document_id: ids.plan,
            thread_id: elsewhere,
            body_markdown: 'Stray reply',
          }),
        );
        refusedWithPrefix(
          await ada.call('add_comment', {
            document_id: ids.landing,
            thread_id: elsewhere,
            body_markdown: 'Stray reply',
          }),
        );
        refusedWithPrefix(
          await ada.call('resolve_comment', { document_id: ids.plan, thread_id: elsewhere, resolved: true }),
        );

        const roadmap = only(await threads(ada, ids.roadmap!), elsewhere);
        assert.equal(roadmap.status, 'open');
        assert.deepEqual(roadmap.replies, []);
        assert.deepEqual(await threads(ada, ids.plan!, true), []);
        assert.deepEqual(await threads(ada, ids.landing!, true), []);
      });

      it('refuses a made-up thread id', async () => {
        const ada = await h.as('ada@acme.test');
        refusedWithPrefix(
          await ada.call('add_comment', {
            document_id: ids.plan,
            thread_id: 'thr_madeup',
            body_markdown: 'Hello?',
          }),
        );
        refusedWithPrefix(
          await ada.call('resolve_comment', {
            document_id: ids.plan,
            thread_id: 'thr_madeup',
            resolved: true,
          }),
        );
        assert.deepEqual(await threads(ada, ids.plan!, true), []);
      });

      it('answers another workspace, a made-up id and an artifact without a role with the same not-found text', async () => {
        const ada = await h.as('ada@acme.test');
        const eve = await h.as('eve@other.test');
        const dee = await h.as('dee@acme.test');
        const eveDoc = other(h).artifacts.eve_doc!;
        const eveThread = await startThread(eve, eveDoc, 'Eve only');
        const planThread = await startThread(ada, ids.plan!, 'Private');
        const landingThread = await startThread(ada, ids.landing!, 'Private page');

        const cases: [string, ToolCaller, string, string][] = [
          ["another workspace's document", ada, eveDoc, eveThread],
          ['a made-up id', ada, 'doc_doesnotexist0000000000', 'thr_doesnotexist0000000000'],
          ['a document without a role', dee, ids.plan!, planThread],
          ['a page without a role', dee, ids.landing!, landingThread],
        ];
        for (const [label, caller, documentId, threadId] of cases) {
          const read = await caller.call('read_comments', { document_id: documentId });
          assert.equal(read.text, NOT_FOUND, `read_comments on ${label}`);
          assert.equal(read.isError, true);
          const add = await caller.call('add_comment', { document_id: documentId, body_markdown: 'Hi' });
          assert.equal(add.text, NOT_FOUND, `add_comment on ${label}`);
          assert.equal(add.isError, true);
          const replyTo = await caller.call('add_comment', {
            document_id: documentId,
            thread_id: threadId,
            body_markdown: 'Hi',
          });
          assert.equal(replyTo.text, NOT_FOUND, `add_comment reply on ${label}`);
          const resolve = await caller.call('resolve_comment', {
            document_id: documentId,
            thread_id: threadId,
            resolved: true,
          });
          assert.equal(resolve.text, NOT_FOUND, `resolve_comment on ${label}`);
          assert.equal(resolve.isError, true);
        }

        const eveList = await threads(eve, eveDoc);
        assert.deepEqual(
          eveList.map((t) => [t.thread_id, t.status, t.replies.length]),
          [[eveThread, 'open', 0]],
        );
        const planList = await threads(ada, ids.plan!);
        assert.deepEqual(
          planList.map((t) => [t.thread_id, t.status, t.replies.length]),
          [[planThread, 'open', 0]],
        );
      });

      it('refuses an empty comment body', async () => {
        const ada = await h.as('ada@acme.test');
        const threadId = await startThread(ada, ids.roadmap!, 'Existing');
        const bodies: [string, Record<string, unknown>][] = [
          ['empty', { body_markdown: '' }],
          ['blank', { body_markdown: '   \n ' }],
          ['missing', {}],
          ['empty reply', { body_markdown: '', thread_id: threadId }],
        ];
        for (const [label, extra] of bodies) {
          const r = await ada.call('add_comment', { document_id: ids.roadmap, ...extra });
          refusedWithPrefix(r);
          assert.match(r.text, /body_markdown/, label);
        }
        const list = await threads(ada, ids.roadmap!);
        assert.deepEqual(
          list.map((t) => [t.thread_id, t.replies.length]),
          [[threadId, 0]],
        );
      });
    });

    describe('mentions', () => {
      const notificationsOf = (email: string) => h.services.notifications.list(h.actor(email));

      it('notifies a mentioned person who can open the artifact, naming it', async () => {
        const ada = await h.as('ada@acme.test');
        const r = await ada.call('add_comment', {
          document_id: ids.roadmap,
          body_markdown: '@bob can you look?',
        });
        const s = ok(r);
        assert.equal(s.notified, 1);
        assert.match(r.text, /Notified 1 person/);

        const inbox = await notificationsOf('bob@acme.test');
        assert.equal(inbox.length, 1);
        const n = inbox[0]!;
        assert.equal(n.kind, 'mention');
        assert.equal(n.artifact_id, ids.roadmap);
        assert.equal(n.thread_id, s.thread_id);
        assert.equal(n.read, false);
        assert.ok(n.body.includes('Roadmap'), n.body);
        assert.ok(n.body.includes('Ada Lovelace'), n.body);
        assert.deepEqual(await notificationsOf('cy@acme.test'), []);
      });

      it('notifies from a reply and on a page', async () => {
        const ada = await h.as('ada@acme.test');
        const bob = await h.as('bob@acme.test');
        const threadId = await startThread(bob, ids.landing!, 'A thought');
        const r = ok(
          await bob.call('add_comment', {
            document_id: ids.landing,
            thread_id: threadId,
            body_markdown: 'What do you think, @ada?',
          }),
        );
        assert.equal(r.notified, 1);
        const inbox = await notificationsOf('ada@acme.test');
        assert.equal(inbox.length, 1);
        assert.equal(inbox[0]!.artifact_id, ids.landing);
        assert.equal(inbox[0]!.thread_id, threadId);
        assert.ok(inbox[0]!.body.includes('Landing'), inbox[0]!.body);
        assert.equal(ok(await ada.call('read_comments', { document_id: ids.landing })).role, 'owner');
      });

      it('notifies nobody when the mentioned person cannot open the artifact', async () => {
        const ada = await h.as('ada@acme.test');
        const s = ok(
          await ada.call('add_comment', { document_id: ids.plan, body_markdown: '@dee have a look' }),
        );
        assert.equal(s.notified, 0);
        assert.deepEqual(await notificationsOf('dee@acme.test'), []);

        const cross = ok(
          await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: 'cc @eve' }),
        );
        assert.equal(cross.notified, 0);
        assert.deepEqual(await notificationsOf('eve@other.test'), []);
      });

      it('notifies a viewer, who can open the artifact', async () => {
        const bob = await h.as('bob@acme.test');
        const s = ok(await bob.call('add_comment', { document_id: ids.plan, body_markdown: 'FYI @cy' }));
        assert.equal(s.notified, 1);
        const inbox = await notificationsOf('cy@acme.test');
        assert.equal(inbox.length, 1);
        assert.equal(inbox[0]!.artifact_id, ids.plan);
      });

      it('records @Assistant, installed agents and retired handles as agent requests', async () => {
        const ada = await h.as('ada@acme.test');
        const cases: [string, string[]][] = [
          ['@Assistant please summarise', ['Assistant']],
          ['@Builder can you build this?', ['Builder']],
          ['@PM what is the priority?', ['Assistant']],
          ['@Research find sources', ['Assistant']],
          ['@GTM draft the launch note', ['Assistant']],
          ['@PM and @GTM and @Assistant together', ['Assistant']],
          ['@Builder then @Assistant', ['Builder', 'Assistant']],
        ];
        const made: [string, string[]][] = [];
        for (const [body, agents] of cases) {
          const r = await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: body });
          const s = ok(r);
          assert.deepEqual(s.agents_requested, agents, body);
          for (const agent of agents) assert.ok(r.text.includes(`@${agent}`), r.text);
          made.push([s.thread_id as string, agents]);
        }
        const list = await threads(ada, ids.roadmap!);
        for (const [threadId, agents] of made) {
          assert.deepEqual([...only(list, threadId).agent_requests].sort(), [...agents].sort());
        }
      });

      it('records an agent mention made in a reply on its thread', async () => {
        const ada = await h.as('ada@acme.test');
        const threadId = await startThread(ada, ids.landing!, 'Layout question');
        assert.deepEqual(only(await threads(ada, ids.landing!), threadId).agent_requests, []);
        const s = ok(
          await ada.call('add_comment', {
            document_id: ids.landing,
            thread_id: threadId,
            body_markdown: '@Builder fix the heading',
          }),
        );
        assert.deepEqual(s.agents_requested, ['Builder']);
        assert.deepEqual(only(await threads(ada, ids.landing!), threadId).agent_requests, ['Builder']);
      });

      it('treats @Agent and unknown handles as plain text', async () => {
        const ada = await h.as('ada@acme.test');
        const r = await ada.call('add_comment', {
          document_id: ids.roadmap,
          body_markdown: '@Agent and @nobody and @Designer, please help',
        });
        const s = ok(r);
        assert.deepEqual(s.agents_requested, []);
        assert.equal(s.notified, 0);
        assert.doesNotMatch(r.text, /Asked|Notified/);
        const thread = only(await threads(ada, ids.roadmap!), s.thread_id as string);
        assert.deepEqual(thread.agent_requests, []);
        assert.equal(thread.body, '@Agent and @nobody and @Designer, please help');
        for (const email of ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
          assert.deepEqual(await notificationsOf(email), [], email);
        }
      });

      it('does not treat an e-mail address as a mention', async () => {
        const bob = await h.as('bob@acme.test');
        const s = ok(
          await bob.call('add_comment', {
            document_id: ids.roadmap,
            body_markdown: 'Write to ada@acme.test or assistant@acme.test about this',
          }),
        );
        assert.equal(s.notified, 0);
        assert.deepEqual(s.agents_requested, []);
        assert.deepEqual(await notificationsOf('ada@acme.test'), []);
      });

      it('does not notify the author who mentions themselves', async () => {
        const ada = await h.as('ada@acme.test');
        const s = ok(
          await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: 'Note to self, @ada' }),
        );
        assert.equal(s.notified, 0);
        assert.deepEqual(await notificationsOf('ada@acme.test'), []);

        const both = ok(
          await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: '@ada @bob sync' }),
        );
        assert.equal(both.notified, 1);
        assert.deepEqual(await notificationsOf('ada@acme.test'), []);
        assert.equal((await notificationsOf('bob@acme.test')).length, 1);
      });
    });
  });
}
