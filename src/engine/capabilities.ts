import { postMessage } from '../domains/workspace/messages.ts';
import type { Transaction } from 'kysely';
import { DomainError, StepError } from '../errors.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { EventOrigin } from '../domains/automations/events.ts';
import { conversationFor } from '../domains/policies/artifacts.ts';
import type { Database } from '../storage/schema.ts';
import type { Services } from '../services.ts';
import { redact } from '../connectors/failures.ts';
import { transportCall } from '../connectors/index.ts';
import { CONNECTOR_PLUGINS, type Capability } from '../domains/automations/catalogue.ts';
import { httpCall, type Resolver } from '../net/http-fetch.ts';

/** What a capability call knows about the run it belongs to. */
export interface CallContext {
  services: Services;
  /** The person the automation acts as, with every scope (rights are still checked per object). */
  actor: Actor;
  sessionId: string;
  /** Stores the call's effect in the write's own transaction, so a retried write is recognised. */
  within: (trx: Transaction<Database>, output: Record<string, unknown>) => Promise<void>;
  httpAllow: readonly string[];
  /** How host names become addresses for http and connector calls (the system's unless a test stands in). */
  resolve?: Resolver | undefined;
  signal: AbortSignal;
  /** The run making the call: events its writes cause carry it (no loops, hops counted). */
  origin: EventOrigin;
}

export type Impl = (input: Record<string, unknown>, ctx: CallContext) => Promise<Record<string, unknown>>;

/** A domain refusal becomes the step's error in the domain's own words. */
async function domain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError) throw new StepError(error.message);
    throw error;
  }
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
        { within: (trx, r) => ctx.within(trx, output(r)), origin: ctx.origin },
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
        { within: (trx, r) => ctx.within(trx, output(r)), origin: ctx.origin },
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
      ctx.services.pages.write(ctx.actor, input, {
        within: (trx, r) => ctx.within(trx, output(r)),
        origin: ctx.origin,
      }),
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
        {
          within: (trx, r) => ctx.within(trx, { thread_id: r.thread_id, comment_id: r.comment_id }),
          origin: ctx.origin,
        },
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
        const id = await postMessage(trx, {
          conversationId,
          authorId: ctx.actor.personId,
          body: String(input.text),
        });
        const result = { message_id: id, conversation_id: conversationId };
        await ctx.within(trx, result);
        return result;
      }),
    );
  },
  'http.get': (input, ctx) =>
    httpCall('GET', input, { allow: ctx.httpAllow, signal: ctx.signal, resolve: ctx.resolve }),
  'http.post': (input, ctx) =>
    httpCall('POST', input, { allow: ctx.httpAllow, signal: ctx.signal, resolve: ctx.resolve }),
};

/** The same error with every secret of the connection taken out of its text. */
function withoutSecrets(error: unknown, secrets: readonly string[]): Error {
  if (error instanceof StepError)
    return new StepError(redact(error.message, secrets), {
      retryable: error.retryable,
      code: error.code,
      retryAfterMs: error.retryAfterMs,
      nothingDone: error.nothingDone,
    });
  // Not a failure the transport knows: reported as unexpected, without the object that may hold a token.
  return new Error(redact(error instanceof Error ? error.message : String(error), secrets));
}

/**
 * A shipped connector's capability: the connection the acting person's automation goes through
 * is chosen (domains/connectors), its settings opened, the transport called, and its answer held
 * to the output schema describe_capabilities advertises.
 */
function connectorImpl(cap: Capability): Impl | undefined {
  const call = transportCall(cap.key);
  if (!call) return undefined;
  const namespace = cap.key.split('.')[0]!;
  return async (input, ctx) => {
    const connection = await domain(() =>
      ctx.services.connectors.connectionFor(ctx.actor, namespace, ctx.origin.automationId),
    );
    let output: Record<string, unknown>;
    try {
      output = await call(input, connection, {
        allow: ctx.httpAllow,
        signal: ctx.signal,
        resolve: ctx.resolve,
      });
    } catch (error) {
      throw withoutSecrets(error, connection.secrets);
    }
    const shaped = cap.output.safeParse(output);
    if (!shaped.success)
      throw new StepError(
        `${cap.key}: the service's answer does not have the advertised shape (${shaped.error.issues.map((i) => `${i.path.join('.') || 'output'} ${i.message}`).join('; ')})`,
      );
    return output;
  };
}

const CONNECTOR_IMPLS: Record<string, Impl> = Object.fromEntries(
  CONNECTOR_PLUGINS.flatMap((p) => p.capabilities).flatMap((cap) => {
    const impl = connectorImpl(cap);
    return impl ? [[cap.key, impl]] : [];
  }),
);

/**
 * What runs a capability: a built-in, a call given to the engine (tests, outside plugins), or a
 * shipped connector's transport.
 */
export function implementationOf(key: string, given?: Record<string, Impl>): Impl | undefined {
  if (Object.hasOwn(BUILTIN_IMPLS, key)) return BUILTIN_IMPLS[key];
  if (given && Object.hasOwn(given, key)) return given[key];
  return Object.hasOwn(CONNECTOR_IMPLS, key) ? CONNECTOR_IMPLS[key] : undefined;
}

/** Calls to outside services that cannot recognise a repeat: sent at most once. */
export function atMostOnce(key: string): boolean {
  return !(key in BUILTIN_IMPLS) || key === 'http.post';
}
