import type { Transaction } from 'kysely';
import type { z } from 'zod';
import { DomainError, StepError } from '../errors.ts';
import type { EventOrigin } from '../domains/automations/events.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Net } from '../net/guarded-fetch.ts';
import type { Resolver } from '../net/http-fetch.ts';
import type { Services } from '../services.ts';
import type { Database } from '../storage/schema.ts';
import { redact } from './failures.ts';
import type { ProviderSettings } from './settings.ts';

/**
 * A capability is one object, declared like a tool: its key, kind and description, its input and
 * output schemas (what describe_capabilities advertises and the validator checks), and `run`,
 * which does the work. A namespace groups them with what they need: built-in namespaces work
 * through the domain services; a connector's namespace also names the providers that give it,
 * their settings and the events they emit, and each of its capabilities calls the service
 * through the connection the automation's acting person goes through.
 */

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

/** The connection a connector call goes through: its provider and its settings, secrets opened. */
export interface Connection {
  provider: string;
  settings: Readonly<Record<string, string>>;
}

/** One connector capability's call to its service; input is already checked against its schema. */
export type Call = (
  input: Record<string, unknown>,
  connection: Connection,
  net: Net,
) => Promise<Record<string, unknown>>;

/** A namespace's calls, by capability name (`create_issue`). */
export type Transport = Record<string, Call>;

export interface Capability {
  key: string;
  kind: 'read' | 'write';
  describe: string;
  input: z.ZodObject;
  output: z.ZodObject;
  large?: boolean;
  async?: boolean;
  /** What runs it; absent for an outside plugin's capability, whose call the engine is given. */
  run?: Impl;
  /** A connector's call to its service (run goes through the acting person's connection to it). */
  call?: Call;
  /**
   * Sent at most once: after a crash during the call the step fails with outcome unknown. Every
   * call to an outside service is; a built-in one only when it says so (the domain's own writes
   * recognise a repeat).
   */
  atMostOnce?: boolean;
}

/** A namespace of capabilities: built in, or a connector plugin that must be connected to be used. */
export interface ConnectorPlugin {
  namespace: string;
  /** Shown in connector entries. */
  name: string;
  /** Connector providers (as the workspace names them) that give this namespace. */
  providers: string[];
  capabilities: Capability[];
  /** Events its connector_event triggers may name. */
  events: string[];
  builtin: boolean;
  /** Each provider's settings (shipped connectors). */
  settings?: ProviderSettings[];
}

interface Declared<I extends z.ZodObject, O extends z.ZodObject> {
  /** The name inside its namespace: `read_document`. */
  name: string;
  kind: 'read' | 'write';
  describe: string;
  input: I;
  output: O;
  large?: boolean;
  async?: boolean;
  atMostOnce?: boolean;
}

/** A built-in capability: it runs through the domain services as the automation's acting person. */
export interface BuiltinDeclaration<I extends z.ZodObject, O extends z.ZodObject> extends Declared<I, O> {
  run(input: z.output<I>, ctx: CallContext): Promise<Record<string, unknown>>;
}

/** A connector's capability: `call` is its transport, given the connection's settings. */
export interface ConnectorDeclaration<I extends z.ZodObject, O extends z.ZodObject> extends Declared<I, O> {
  call(input: z.output<I>, connection: Connection, net: Net): Promise<Record<string, unknown>>;
}

export interface NamespaceDeclaration {
  namespace: string;
  name: string;
  /** Capabilities made with this namespace's `capability` helper. */
  capabilities: ((namespace: string) => Capability)[];
  /** For a connector: the providers that give it, their settings and the events they emit. */
  connector?: { providers: string[]; settings: ProviderSettings[]; events: string[] };
}

/** Declares a built-in capability of a namespace. */
export function defineCapability<I extends z.ZodObject, O extends z.ZodObject>(
  declared: BuiltinDeclaration<I, O>,
): (namespace: string) => Capability {
  const { name, run, atMostOnce, ...rest } = declared;
  return (namespace) => ({
    key: `${namespace}.${name}`,
    ...rest,
    run: run as unknown as Impl,
    atMostOnce: atMostOnce ?? false,
  });
}

/** Declares a connector capability: its call goes through the acting person's connection. */
export function defineConnectorCapability<I extends z.ZodObject, O extends z.ZodObject>(
  declared: ConnectorDeclaration<I, O>,
): (namespace: string) => Capability {
  const { name, call, atMostOnce: _once, ...rest } = declared;
  return (namespace) => {
    const cap: Capability = {
      key: `${namespace}.${name}`,
      ...rest,
      call: call as unknown as Call,
      atMostOnce: true,
    };
    cap.run = throughConnection(cap, namespace, cap.call as Call);
    return cap;
  };
}

export function defineNamespace(declared: NamespaceDeclaration): ConnectorPlugin {
  return {
    namespace: declared.namespace,
    name: declared.name,
    providers: declared.connector?.providers ?? [],
    builtin: declared.connector === undefined,
    events: declared.connector?.events ?? [],
    capabilities: declared.capabilities.map((make) => make(declared.namespace)),
    ...(declared.connector ? { settings: declared.connector.settings } : {}),
  };
}

/**
 * A domain refusal becomes the step's error in the domain's own words. A document another writer
 * holds (`write_conflict` with when to retry) is `busy`: nothing was done, and the step is tried
 * again after the wait the document named.
 */
export async function domain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const seconds = error.data?.retry_after_seconds;
    if (error.code === 'write_conflict' && typeof seconds === 'number')
      throw new StepError(error.message, { code: 'busy', retryAfterMs: seconds * 1000, nothingDone: true });
    throw new StepError(error.message);
  }
}

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
 * A connector capability's run: the connection the acting person's automation goes through is
 * chosen (domains/connectors), its settings opened, the call made, and its answer held to the
 * output schema describe_capabilities advertises.
 */
function throughConnection(cap: Capability, namespace: string, call: Call): Impl {
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
