import { z } from 'zod';
import type { Db } from '../../storage/schema.ts';
import { HTTP_CAPS } from '../../net/http-fetch.ts';
import { WORKSPACE_EVENTS } from '../../flowplan/plan.ts';

/**
 * Capabilities are grouped in namespaces. The built-in namespaces need no outside service; the
 * others come from connector plugins and can be used only where the workspace connected them.
 */
export interface Capability {
  key: string;
  kind: 'read' | 'write';
  describe: string;
  input: z.ZodObject;
  output: z.ZodObject;
  large?: boolean;
  async?: boolean;
}

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
}

const id = (what: string) => z.string().min(1).describe(what);
const documentId = id('A document id.');
const pageId = id('A page id.');
const markdown = z.string().max(60_000);

function capability(
  namespace: string,
  name: string,
  kind: 'read' | 'write',
  describe: string,
  input: z.ZodObject,
  output: z.ZodObject,
  flags: { large?: boolean; async?: boolean } = {},
): Capability {
  return { key: `${namespace}.${name}`, kind, describe, input, output, ...flags };
}

const documentRow = z.object({
  document_id: z.string(),
  title: z.string(),
  type: z.enum(['document', 'html_app', 'table']),
  version: z.number(),
  characters: z.number().optional(),
});

const HTTP_RULES =
  'Inside addresses (loopback, private, link-local, cloud metadata, multicast, broadcast, ' +
  'unspecified) are refused, checked after DNS resolution and again on each redirect ' +
  `(at most ${HTTP_CAPS.redirects} are followed), unless the host is listed in TANDEM_HTTP_ALLOW. ` +
  `The response body may be at most ${HTTP_CAPS.bodyBytes.toLocaleString('en-US')} bytes and the ` +
  `call may take at most ${HTTP_CAPS.seconds} s.`;

export const BUILTIN_PLUGINS: ConnectorPlugin[] = [
  {
    namespace: 'documents',
    name: 'Documents',
    providers: [],
    builtin: true,
    events: [],
    capabilities: [
      capability(
        'documents',
        'read_document',
        'read',
        'Read a document’s markdown (an html_app gives its HTML, a table its markdown table).',
        z.strictObject({
          document_id: documentId,
          offset: z.number().int().min(0).optional(),
          window: z.number().int().min(1).max(24_000).optional(),
        }),
        z.object({
          document_id: z.string(),
          title: z.string(),
          markdown: z.string(),
          version: z.number(),
          size_chars: z.number(),
          truncated: z.boolean(),
        }),
        { large: true },
      ),
      capability(
        'documents',
        'list_documents',
        'read',
        'List documents the automation’s person can open, newest first.',
        z.strictObject({
          scope: z.enum(['mine', 'shared', 'pod', 'org']).optional(),
          pod_id: z.string().optional(),
          query: z.string().optional(),
          limit: z.number().int().min(1).max(50).optional(),
        }),
        z.object({ documents: z.array(documentRow), truncated: z.boolean() }),
      ),
      capability(
        'documents',
        'create_document',
        'write',
        'Create a markdown document (in the automation’s session unless a scope or conversation is given).',
        z.strictObject({
          title: z.string().min(1).max(500),
          content_markdown: markdown.optional(),
          conversation_id: z.string().optional(),
          scope: z.enum(['user', 'pod', 'org']).optional(),
          pod_id: z.string().optional(),
        }),
        z.object({ document_id: z.string(), title: z.string(), version: z.number() }),
      ),
      capability(
        'documents',
        'append_to_document',
        'write',
        'Append markdown to the end of a document as a new block.',
        z.strictObject({ document_id: documentId, content_markdown: markdown.min(1) }),
        z.object({ document_id: z.string(), new_version: z.number(), written_chars: z.number() }),
      ),
    ],
  },
  {
    namespace: 'pages',
    name: 'Pages',
    providers: [],
    builtin: true,
    events: [],
    capabilities: [
      capability(
        'pages',
        'read_page',
        'read',
        'Read an HTML page’s source and version.',
        z.strictObject({ page_id: pageId }),
        z.object({ page_id: z.string(), title: z.string(), html: z.string(), version: z.number() }),
        { large: true },
      ),
      capability(
        'pages',
        'write_page',
        'write',
        'Replace a page’s HTML; expected_version (from pages.read_page) must be the current version.',
        z.strictObject({
          page_id: pageId,
          html: z.string().min(1),
          expected_version: z.number().int().min(0),
        }),
        z.object({ page_id: z.string(), new_version: z.number(), byte_size: z.number() }),
      ),
    ],
  },
  {
    namespace: 'comments',
    name: 'Comments',
    providers: [],
    builtin: true,
    events: [],
    capabilities: [
      capability(
        'comments',
        'add_comment',
        'write',
        'Start a comment thread on a document or page (anchored when anchor_excerpt is given), or reply to one.',
        z.strictObject({
          document_id: documentId,
          body: z.string().min(1).max(20_000),
          anchor_excerpt: z.string().optional(),
          thread_id: z.string().optional(),
        }),
        z.object({ thread_id: z.string(), comment_id: z.string() }),
      ),
    ],
  },
  {
    namespace: 'conversations',
    name: 'Conversations',
    providers: [],
    builtin: true,
    events: [],
    capabilities: [
      capability(
        'conversations',
        'post_message',
        'write',
        'Post a message to a conversation; the automation’s session by default.',
        z.strictObject({
          text: z.string().min(1).max(20_000),
          conversation_id: z.string().optional(),
        }),
        z.object({ message_id: z.string(), conversation_id: z.string() }),
      ),
    ],
  },
  {
    namespace: 'http',
    name: 'HTTP',
    providers: [],
    builtin: true,
    events: [],
    capabilities: [
      capability(
        'http',
        'get',
        'read',
        `GET an http or https URL. ${HTTP_RULES}`,
        z.strictObject({
          url: z.url(),
          headers: z.record(z.string(), z.string()).optional(),
        }),
        z.object({
          status: z.number(),
          headers: z.record(z.string(), z.string()),
          body: z.string(),
          json: z.unknown().optional(),
        }),
        { large: true },
      ),
      capability(
        'http',
        'post',
        'write',
        `POST to an http or https URL. ${HTTP_RULES} Sent at most once: after a crash during the call the step fails with outcome unknown.`,
        z.strictObject({
          url: z.url(),
          json: z.unknown().optional(),
          body: z.string().optional(),
          headers: z.record(z.string(), z.string()).optional(),
        }),
        z.object({ status: z.number(), body: z.string(), json: z.unknown().optional() }),
      ),
    ],
  },
];

const repo = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be owner/name')
  .describe('owner/name');

export const CONNECTOR_PLUGINS: ConnectorPlugin[] = [
  {
    namespace: 'github',
    name: 'GitHub',
    providers: ['github'],
    builtin: false,
    events: ['push', 'pull_request', 'issues', 'issue_comment', 'release', 'workflow_run'],
    capabilities: [
      capability(
        'github',
        'get_issue',
        'read',
        'Read an issue or pull request.',
        z.strictObject({ repo, number: z.number().int().min(1) }),
        z.object({
          number: z.number(),
          title: z.string(),
          body: z.string(),
          state: z.string(),
          url: z.string(),
          labels: z.array(z.string()),
        }),
      ),
      capability(
        'github',
        'list_pull_requests',
        'read',
        'List pull requests of a repository.',
        z.strictObject({
          repo,
          state: z.enum(['open', 'closed', 'all']).optional(),
          limit: z.number().int().min(1).max(100).optional(),
        }),
        z.object({
          pull_requests: z.array(
            z.object({ number: z.number(), title: z.string(), author: z.string(), url: z.string() }),
          ),
        }),
      ),
      capability(
        'github',
        'create_issue',
        'write',
        'Open an issue.',
        z.strictObject({
          repo,
          title: z.string().min(1).max(256),
          body: z.string().max(65_536).optional(),
          labels: z.array(z.string()).optional(),
        }),
        z.object({ number: z.number(), url: z.string() }),
      ),
      capability(
        'github',
        'comment_on_issue',
        'write',
        'Comment on an issue or pull request.',
        z.strictObject({ repo, number: z.number().int().min(1), body: z.string().min(1).max(65_536) }),
        z.object({ comment_id: z.number(), url: z.string() }),
      ),
      capability(
        'github',
        'get_file',
        'read',
        'Read a text file of a repository, up to 1 MB, at the default branch or at ref.',
        z.strictObject({
          repo,
          path: z.string().min(1).max(1024).describe('The file’s path in the repository: docs/README.md'),
          ref: z.string().min(1).max(256).optional().describe('A branch, tag or commit SHA.'),
        }),
        z.object({ path: z.string(), sha: z.string(), size: z.number(), text: z.string(), url: z.string() }),
        { large: true },
      ),
    ],
  },
  {
    namespace: 'slack',
    name: 'Slack',
    providers: ['slack'],
    builtin: false,
    events: ['message', 'reaction_added', 'channel_created'],
    capabilities: [
      capability(
        'slack',
        'list_channels',
        'read',
        'List channels the connection can see.',
        z.strictObject({ limit: z.number().int().min(1).max(1000).optional() }),
        z.object({ channels: z.array(z.object({ id: z.string(), name: z.string() })) }),
      ),
      capability(
        'slack',
        'post_message',
        'write',
        'Post a message to a channel.',
        z.strictObject({
          channel: z.string().min(1).describe('A channel id or #name.'),
          text: z.string().min(1).max(40_000),
        }),
        z.object({ ts: z.string(), channel: z.string() }),
      ),
      capability(
        'slack',
        'post_to_thread',
        'write',
        'Reply in a message’s thread (broadcast also shows the reply in the channel).',
        z.strictObject({
          channel: z.string().min(1).describe('The channel id of the message.'),
          thread_ts: z.string().regex(/^\d+\.\d+$/, 'must be a message ts such as 1700000000.000100'),
          text: z.string().min(1).max(40_000),
          broadcast: z.boolean().optional(),
        }),
        z.object({ ts: z.string(), channel: z.string(), thread_ts: z.string() }),
      ),
    ],
  },
  {
    namespace: 'email',
    name: 'Email',
    providers: ['email', 'gmail', 'outlook'],
    builtin: false,
    events: ['received'],
    capabilities: [
      capability(
        'email',
        'send',
        'write',
        'Send a plain-text e-mail from the connection’s address (over its SMTP server).',
        z.strictObject({
          to: z.array(z.email()).min(1).max(50),
          subject: z.string().min(1).max(998),
          body: z.string().max(100_000),
        }),
        z.object({ message_id: z.string() }),
      ),
    ],
  },
];

const PROVIDER_NAMES: Record<string, string> = {
  github: 'GitHub',
  slack: 'Slack',
  email: 'Email',
  gmail: 'Gmail',
  outlook: 'Outlook',
  workspace: 'This workspace',
};

export function providerName(provider: string): string {
  return PROVIDER_NAMES[provider] ?? provider.charAt(0).toUpperCase() + provider.slice(1);
}

export interface ConnectorEntry {
  provider: string;
  name: string;
  personal: boolean;
  namespace: string;
  /** Whether the caller can use it: another person's personal connection is not theirs. */
  connected: boolean;
}

export interface NamespaceState {
  plugin: ConnectorPlugin;
  /** Usable by the person the catalogue was built for. */
  connected: boolean;
  /** Usable only through that person's own personal connection. */
  personalOnly: boolean;
  /** Providers whose connection makes it usable. */
  providers: string[];
}

/** What one person of one workspace may use: namespaces, capabilities, connectors. */
export class Catalogue {
  readonly namespaces: Map<string, NamespaceState>;
  readonly connectors: ConnectorEntry[];
  private readonly byKey = new Map<string, Capability>();

  constructor(namespaces: Map<string, NamespaceState>, connectors: ConnectorEntry[]) {
    this.namespaces = namespaces;
    this.connectors = connectors;
    for (const state of namespaces.values()) {
      for (const cap of state.plugin.capabilities) this.byKey.set(cap.key, cap);
    }
  }

  capability(key: string): Capability | undefined {
    return this.byKey.get(key);
  }

  namespaceOf(key: string): NamespaceState | undefined {
    return this.namespaces.get(key.split('.')[0] ?? '');
  }

  /** Providers a connector_event trigger may name, with their events. */
  eventProviders(): Map<string, { connected: boolean; personalOnly: boolean; events: readonly string[] }> {
    const providers = new Map<
      string,
      { connected: boolean; personalOnly: boolean; events: readonly string[] }
    >();
    providers.set('workspace', { connected: true, personalOnly: false, events: WORKSPACE_EVENTS });
    for (const state of this.namespaces.values()) {
      if (state.plugin.builtin) continue;
      for (const provider of new Set([...state.plugin.providers, ...state.providers])) {
        const usable = this.connectors.filter((c) => c.provider === provider && c.connected);
        providers.set(provider, {
          connected: usable.length > 0,
          personalOnly: usable.length > 0 && usable.every((c) => c.personal),
          events: state.plugin.events,
        });
      }
    }
    return providers;
  }
}

export interface CatalogueOptions {
  /** Extra connector plugins (outside providers), beside the ones Tandem ships. */
  plugins?: ConnectorPlugin[];
}

/** The connector plugin a provider's connection gives (`gmail` gives `email`). */
export function pluginOfProvider(plugins: ConnectorPlugin[], provider: string): ConnectorPlugin | undefined {
  return plugins.find((p) => !p.builtin && (p.providers.includes(provider) || p.namespace === provider));
}

export function allPlugins(options: CatalogueOptions = {}): ConnectorPlugin[] {
  return [...BUILTIN_PLUGINS, ...CONNECTOR_PLUGINS, ...(options.plugins ?? [])];
}

/**
 * The catalogue as one person sees it. Built-in namespaces are always connected; a plugin's
 * namespace is connected when the workspace has a shared connection for one of its providers or
 * the person has a personal one.
 */
export async function loadCatalogue(
  db: Db,
  workspaceId: string,
  personId: string,
  plugins: ConnectorPlugin[],
): Promise<Catalogue> {
  const rows = await db
    .selectFrom('connectors')
    .select(['provider', 'connected', 'personal', 'owner_id'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('provider')
    .orderBy('created_at')
    .execute();
  const pluginFor = (provider: string) => pluginOfProvider(plugins, provider);
  const connectors: ConnectorEntry[] = rows.map((row) => {
    const personal = row.personal === 1;
    return {
      provider: row.provider,
      name: providerName(row.provider),
      personal,
      namespace: pluginFor(row.provider)?.namespace ?? row.provider,
      connected: row.connected === 1 && (!personal || row.owner_id === personId),
    };
  });
  const namespaces = new Map<string, NamespaceState>();
  for (const plugin of plugins) {
    if (plugin.builtin) {
      namespaces.set(plugin.namespace, { plugin, connected: true, personalOnly: false, providers: [] });
      continue;
    }
    const mine = connectors.filter((c) => c.namespace === plugin.namespace);
    const usable = mine.filter((c) => c.connected);
    namespaces.set(plugin.namespace, {
      plugin,
      connected: usable.length > 0,
      personalOnly: usable.length > 0 && usable.every((c) => c.personal),
      providers: [...new Set(mine.map((c) => c.provider))],
    });
  }
  return new Catalogue(namespaces, connectors);
}
