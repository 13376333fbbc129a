import type { Transaction } from 'kysely';
import { DomainError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { conversationFor } from '../domains/workspace/access.ts';
import type { Database } from '../storage/schema.ts';
import type { Services } from '../services.ts';
import { StepError } from './values.ts';

/** What a capability call knows about the run it belongs to. */
export interface CallContext {
  services: Services;
  /** The person the automation acts as, with every scope (rights are still checked per object). */
  actor: Actor;
  sessionId: string;
  /** Stores the call's effect in the write's own transaction, so a retried write is recognised. */
  within: (trx: Transaction<Database>, output: Record<string, unknown>) => Promise<void>;
  httpAllow: readonly string[];
  signal: AbortSignal;
}

type Impl = (input: Record<string, unknown>, ctx: CallContext) => Promise<Record<string, unknown>>;

const MAX_BODY_BYTES = 1_000_000;

/** A domain refusal becomes the step's error in the domain's own words. */
async function domain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError) throw new StepError(error.message);
    throw error;
  }
}

function allowed(url: URL, allow: readonly string[]): boolean {
  return allow.some((entry) => entry === url.host || entry === url.hostname);
}

async function http(
  method: 'GET' | 'POST',
  input: Record<string, unknown>,
  ctx: CallContext,
): Promise<Record<string, unknown>> {
  let url: URL;
  try {
    url = new URL(String(input.url));
  } catch {
    throw new StepError(`url ${String(input.url)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new StepError('url must be http or https');
  if (!allowed(url, ctx.httpAllow)) {
    throw new StepError(
      `${url.host} is not on the allow list; add it to TANDEM_HTTP_ALLOW to let automations reach it`,
    );
  }
  const headers: Record<string, string> = {
    ...((input.headers as Record<string, string> | undefined) ?? {}),
  };
  let body: string | undefined;
  if (method === 'POST') {
    if (input.json !== undefined) {
      body = JSON.stringify(input.json);
      headers['content-type'] ??= 'application/json';
    } else if (typeof input.body === 'string') body = input.body;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(15_000)]),
    });
  } catch (error) {
    throw new StepError(`${method} ${url.host} failed: ${(error as Error).message}`, {
      retryable: method === 'GET',
    });
  }
  const buffer = Buffer.from(await response.arrayBuffer());
  if (buffer.byteLength > MAX_BODY_BYTES)
    throw new StepError(`the response is larger than ${MAX_BODY_BYTES} bytes`);
  const text = buffer.toString('utf8');
  let json: unknown;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  if (method === 'GET' && response.status >= 500) {
    throw new StepError(`GET ${url.host} answered ${response.status}`, { retryable: true });
  }
  return {
    status: response.status,
    ...(method === 'GET' ? { headers: Object.fromEntries(response.headers) } : {}),
    body: text,
    ...(json !== undefined ? { json } : {}),
  };
}

/** The built-in capabilities, doing their work through the domain services as the acting person. */
export const BUILTIN_IMPLS: Record<string, Impl> = {
  'documents.read_document': async (input, ctx) => {
    const doc = await domain(() => ctx.services.documents.read(ctx.actor, input));
    return {
      document_id: doc.document_id,
      title: doc.title,
      markdown: doc.markdown,
      version: doc.version,
      size_chars: doc.size_chars,
      truncated: doc.truncated,
    };
  },
  'documents.list_documents': async (input, ctx) => {
    const listed = await domain(() => ctx.services.documents.list(ctx.actor, input));
    return {
      documents: listed.documents.map((d) => ({
        document_id: d.document_id,
        title: d.title,
        type: d.type,
        version: d.version,
        ...(d.characters !== undefined ? { characters: d.characters } : {}),
      })),
      truncated: listed.truncated,
    };
  },
  'documents.create_document': async (input, ctx) => {
    const placement =
      input.scope !== undefined || input.conversation_id !== undefined
        ? {}
        : { conversation_id: ctx.sessionId };
    const output = (r: Record<string, unknown>) => ({
      document_id: r.document_id,
      title: r.title,
      version: r.version ?? 0,
    });
    const doc = await domain(() =>
      ctx.services.documents.create(
        ctx.actor,
        { ...input, ...placement },
        { within: (trx, r) => ctx.within(trx, output(r)) },
      ),
    );
    return output(doc);
  },
  'documents.append_to_document': async (input, ctx) => {
    const output = (r: Record<string, unknown>) => ({
      document_id: r.document_id,
      new_version: r.new_version,
      written_chars: r.written_chars,
    });
    const result = await domain(() =>
      ctx.services.documents.edit(
        ctx.actor,
        { document_id: input.document_id, mode: 'append', content_markdown: input.content_markdown },
        { within: (trx, r) => ctx.within(trx, output(r)) },
      ),
    );
    return output(result);
  },
  'pages.read_page': async (input, ctx) => {
    const page = await domain(() => ctx.services.pages.read(ctx.actor, input.page_id));
    return { page_id: page.page_id, title: page.title, html: page.html, version: page.version };
  },
  'pages.write_page': async (input, ctx) => {
    const output = (r: Record<string, unknown>) => ({
      page_id: r.page_id,
      new_version: r.new_version,
      byte_size: r.byte_size,
    });
    const page = await domain(() =>
      ctx.services.pages.write(ctx.actor, input, { within: (trx, r) => ctx.within(trx, output(r)) }),
    );
    return output(page);
  },
  'comments.add_comment': async (input, ctx) => {
    const result = await domain(() =>
      ctx.services.comments.add(
        ctx.actor,
        {
          document_id: input.document_id,
          body_markdown: input.body,
          anchor_excerpt: input.anchor_excerpt,
          thread_id: input.thread_id,
        },
        { within: (trx, r) => ctx.within(trx, { thread_id: r.thread_id, comment_id: r.comment_id }) },
      ),
    );
    return {
      thread_id: result.thread_id,
      comment_id: 'comment_id' in result ? result.comment_id : result.thread_id,
    };
  },
  'conversations.post_message': async (input, ctx) => {
    const { db } = ctx.services.deps;
    return domain(() =>
      db.transaction().execute(async (trx) => {
        const conversationId =
          input.conversation_id === undefined
            ? ctx.sessionId
            : (await conversationFor(trx, ctx.actor, input.conversation_id)).id;
        const room = await trx
          .selectFrom('conversations')
          .select('archived')
          .where('id', '=', conversationId)
          .executeTakeFirstOrThrow();
        if (room.archived === 1) throw new StepError('That conversation is archived, so nothing was posted.');
        const id = newId('msg');
        await trx
          .insertInto('messages')
          .values({
            id,
            conversation_id: conversationId,
            author_id: ctx.actor.personId,
            kind: 'text',
            body: String(input.text),
            card_json: null,
            created_at: Date.now(),
          })
          .execute();
        const result = { message_id: id, conversation_id: conversationId };
        await ctx.within(trx, result);
        return result;
      }),
    );
  },
  'http.get': (input, ctx) => http('GET', input, ctx),
  'http.post': (input, ctx) => http('POST', input, ctx),
};

/** Calls to outside services that cannot recognise a repeat: sent at most once. */
export function atMostOnce(key: string): boolean {
  return !(key in BUILTIN_IMPLS) || key === 'http.post';
}
