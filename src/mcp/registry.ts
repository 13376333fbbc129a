import { log } from '../observability/log.ts';
import { toolCalls, toolSeconds } from '../observability/metrics.ts';
import { McpServer, type ScopeChallenge, type ScopeChallengeHandler } from '@modelcontextprotocol/server';
import { DomainError } from '../errors.ts';
import { newId } from '../ids.ts';
import { targetIds } from '../domains/activity/activity.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';
import { failure, scopeFailure, unexpectedFailure } from './errors.ts';
import { checkFields, checkShape } from './arguments.ts';
import { advertised, describeArgumentErrors, inputFields, type AnyTool, type FieldRule } from './tool.ts';
import { automationTools } from './tools/automations.ts';
import { commentTools } from './tools/comments.ts';
import { documentTools } from './tools/documents.ts';
import { pageTools } from './tools/pages.ts';
import { toolIcons, type IconKind } from './icons.ts';
import { createdTask, declaresTasks, serveTasks } from './tasks.ts';

/** Every implemented tool, in the order tools/list shows them (always this order), with its icon. */
const GROUPS: [IconKind, readonly AnyTool[]][] = [
  ['automation', automationTools],
  ['page', pageTools],
  ['document', documentTools],
  ['comment', commentTools],
];
export const TOOLS: readonly AnyTool[] = GROUPS.flatMap(([, tools]) => tools);
const iconOf = new Map<AnyTool, IconKind>(
  GROUPS.flatMap(([kind, tools]) => tools.map((t) => [t, kind] as const)),
);

/** How long a client may keep tools/list: the list changes only with a new release of Tandem. */
export const TOOL_LIST_TTL_MS = 3_600_000;

export const SERVER_INFO = { name: 'tandem', version: '0.1.0' };

const INSTRUCTIONS =
  'Tandem workspace tools. Everything you do is attributed to the person you act for; what they cannot open reads as not found. Pages and documents carry versions: pass the version you read as expected_version when writing.';

interface Prepared {
  tool: AnyTool;
  /** How the tool is registered, apart from its icons (which name the server's origin). */
  config: {
    title: string;
    description: string;
    inputSchema: ReturnType<typeof advertised>;
    outputSchema: ReturnType<typeof advertised>;
    annotations: Record<string, boolean>;
    scopeChallenge: ScopeChallengeHandler;
  };
  /** The registration with icons, by origin (one origin per process in practice). */
  withIcons: Map<string, Prepared['config'] & { icons: ReturnType<typeof toolIcons> }>;
}

/** Each tool's argument rules, rendered once per process. */
const fieldsOf = new Map<AnyTool, Record<string, FieldRule>>(TOOLS.map((tool) => [tool, inputFields(tool)]));

// Rendered once per process; each connection or request only binds them to its caller.
const prepared: Prepared[] = TOOLS.map((tool) => ({
  tool,
  config: {
    title: tool.title,
    description: tool.description,
    inputSchema: advertised(tool.input, 'input'),
    outputSchema: advertised(tool.output, 'output'),
    annotations: wireAnnotations(tool),
    scopeChallenge: scopeChallenge(tool),
  },
  withIcons: new Map(),
}));

function registration({ tool, config, withIcons }: Prepared, iconOrigin: string | undefined) {
  if (iconOrigin === undefined) return config;
  let made = withIcons.get(iconOrigin);
  if (!made) {
    made = { ...config, icons: toolIcons(iconOf.get(tool)!, iconOrigin) };
    if (withIcons.size < 8) withIcons.set(iconOrigin, made);
  }
  return made;
}

const preparedByName = new Map(prepared.map((p) => [p.tool.name, [p]]));

/**
 * The hints as sent: the title once (at the top of the tool), and idempotentHint only on writes,
 * where it says something (a read changes nothing however often it runs; false is the default).
 */
function wireAnnotations(tool: AnyTool): Record<string, boolean> {
  const { idempotentHint, ...rest } = tool.annotations;
  return rest.readOnlyHint ? rest : { ...rest, idempotentHint };
}

/**
 * A call outside the token's scopes is answered 403 before the tool runs; the challenge's
 * error_description names the tool and the scope it needs, which SDK clients show as the error.
 */
function scopeChallenge(tool: AnyTool): ScopeChallengeHandler {
  const answer: ScopeChallenge = {
    scopes: [tool.scope],
    errorDescription: `${tool.name} needs the ${tool.scope} scope`,
  };
  return ({ authInfo }) => (!authInfo || authInfo.scopes.includes(tool.scope) ? undefined : answer);
}

/**
 * U+0000 becomes U+FFFD in every string argument, as CommonMark and HTML parsers read it, so
 * text stores the same on every database (PostgreSQL text cannot hold NUL). Arguments reach
 * this only after `checkShape`, so the recursion is at most MAX_DEPTH deep.
 */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string')
    return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNul(v)]));
  }
  return value;
}

/**
 * Runs one tool call for one caller: scope check, domain call, wire result, activity row. With
 * `asTask` (the client declared the MCP Tasks extension), a call that starts long work answers
 * with the task that follows it (`tasks.ts`), the usual answer riding along.
 */
export async function callTool(
  services: Services,
  actor: Actor,
  tool: AnyTool,
  args: Record<string, unknown>,
  options: { asTask?: boolean } = {},
) {
  const started = performance.now();
  let outcome: 'ok' | 'error' = 'ok';
  let errorCode: string | undefined;
  let resultIds: unknown;
  try {
    if (!actor.scopes.has(tool.scope)) {
      outcome = 'error';
      errorCode = 'insufficient_scope';
      return scopeFailure(tool.name, tool.scope);
    }
    // Depth and size first, before anything walks the arguments or the tool does any work.
    checkShape(args);
    // Clients with strict function calling send null for arguments they leave out.
    const given = Object.fromEntries(
      Object.entries(args)
        .filter(([, value]) => value !== null)
        .map(([key, value]) => [key, withoutNul(value)]),
    );
    checkFields(fieldsOf.get(tool) ?? inputFields(tool), given);
    const parsed = tool.input.safeParse(given);
    if (!parsed.success)
      throw new DomainError('invalid_argument', describeArgumentErrors(parsed.error, given));
    const result = await tool.run({ actor, services }, parsed.data);
    resultIds = result.structured;
    const answer = {
      content: [{ type: 'text' as const, text: result.text }],
      structuredContent: result.structured as Record<string, unknown>,
    };
    const taskId = options.asTask ? tool.startsTask?.(result.structured) : undefined;
    if (taskId) return createdTask(await services.automations.runProgress(actor, taskId), answer);
    return answer;
  } catch (error) {
    outcome = 'error';
    if (error instanceof DomainError) {
      errorCode = error.code;
      resultIds = error.data;
      return failure(error);
    }
    const reference = newId('err');
    errorCode = 'internal';
    log.error({ err: error, reference, tool: tool.name }, 'a tool call failed unexpectedly');
    return unexpectedFailure(reference);
  } finally {
    const seconds = (performance.now() - started) / 1000;
    toolSeconds.observe({ tool: tool.name }, seconds);
    toolCalls.inc({
      tool: tool.name,
      outcome: errorCode === 'internal' ? 'error' : errorCode ? 'refused' : 'ok',
    });
    // Written off the call's path (see activityService); the history reads it back in order.
    services.activity.record(actor, {
      tool: tool.name,
      targets: targetIds(args, resultIds),
      outcome,
      errorCode,
      durationMs: performance.now() - started,
    });
  }
}

/**
 * An MCP server bound to one caller, serving every implemented tool. Whoever calls through MCP
 * (over HTTP or stdio, with a token or an OAuth client) is an agent acting for the person, and
 * the domain records it so (a plan version an agent drafted, say).
 */
export function buildMcpServer(
  services: Services,
  person: Actor,
  options: {
    iconOrigin?: string;
    /**
     * The one tool a request calls (`tools/call`, read from its body before the server is
     * built): a server built for one call registers that tool alone.
     */
    only?: string | undefined;
  } = {},
): McpServer {
  const actor: Actor = { ...person, by: 'agent' };
  const server = new McpServer(SERVER_INFO, {
    instructions: INSTRUCTIONS,
    cacheHints: { 'tools/list': { ttlMs: TOOL_LIST_TTL_MS, cacheScope: 'public' } },
  });
  const serving = (options.only && preparedByName.get(options.only)) || prepared;
  for (const entry of serving) {
    const { tool } = entry;
    server.registerTool(tool.name, registration(entry, options.iconOrigin), (args: unknown, ctx) =>
      callTool(services, actor, tool, (args ?? {}) as Record<string, unknown>, {
        asTask: declaresTasks(ctx),
      }),
    );
  }
  // A server built for one tools/call answers nothing else; every other one serves tasks/*.
  if (!options.only) serveTasks(server, services, actor);
  return server;
}
