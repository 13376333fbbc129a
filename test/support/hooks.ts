import { createHmac, randomUUID } from 'node:crypto';

type Json = Record<string, unknown>;

export const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Now, in the Unix seconds of X-Tandem-Timestamp. */
export const unixNow = () => String(Math.floor(Date.now() / 1000));

/** Two more workspaces: Beta with shared github and slack connections, Gamma with github but no secret. */
export const hookFixture = {
  workspaces: [
    {
      name: 'Beta',
      users: [{ email: 'bea@beta.test', name: 'Bea Beta', admin: true }],
      connectors: [
        { provider: 'github', connected: true, personal: false, secret: 'whsec-2' },
        { provider: 'slack', connected: true, personal: false, secret: 's3cret' },
      ],
    },
    {
      name: 'Gamma',
      users: [{ email: 'gus@gamma.test', name: 'Gus Gamma', admin: true }],
      connectors: [{ provider: 'github', connected: true, personal: false }],
    },
  ],
};

export const PR_OPENED = {
  kind: 'github_event',
  event: 'pull_request',
  actions: ['opened'],
  repo: 'acme/web',
};

/** A plan with no writes that echoes what triggered it. */
export const echoPlan = (name: string): Json => ({
  planVersion: 1,
  name,
  description: `${name}.`,
  nodes: [
    {
      id: 'echo',
      kind: 'transform',
      op: 'template',
      input: { what: { kind: 'trigger', path: 'event' } },
      args: { template: 'got {{what}}' },
    },
  ],
  edges: [],
});

let changes = 0;

/** A pull_request delivery; each is its own (GitHub's bodies differ: `updated_at` moves on). */
export const prOpened = (repo = 'acme/web', action = 'opened') => ({
  action,
  number: 7,
  repository: { full_name: repo },
  pull_request: {
    title: 'Add a header',
    updated_at: new Date(Date.UTC(2025, 0, 1) + ++changes * 1000).toISOString(),
  },
});

export interface GithubOptions {
  secret?: string;
  signature?: string | null;
  /** X-GitHub-Delivery; a fresh one unless given, none when null. */
  delivery?: string | null;
}

export interface ConnectorOptions {
  secret?: string;
  signature?: string | null;
  header?: string;
  /** X-Tandem-Timestamp; now unless given, none when null. */
  timestamp?: string | null;
}

/** Signed deliveries to a running server's hooks, as GitHub and a connector send them. */
export function hookSenders(serverUrl: () => string) {
  return {
    github(workspaceId: string, event: string, payload: Json, options: GithubOptions = {}) {
      const body = JSON.stringify(payload);
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': event };
      const delivery = options.delivery === undefined ? randomUUID() : options.delivery;
      if (delivery !== null) headers['x-github-delivery'] = delivery;
      const signature =
        options.signature === undefined ? sign(options.secret ?? 'whsec-1', body) : options.signature;
      if (signature !== null) headers['x-hub-signature-256'] = signature;
      return fetch(new URL(`/hooks/github/${workspaceId}`, serverUrl()), { method: 'POST', headers, body });
    },

    /** The signature covers "<timestamp>.<body>". */
    connector(workspaceId: string, provider: string, payload: unknown, options: ConnectorOptions = {}) {
      const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
      const timestamp = options.timestamp === undefined ? unixNow() : options.timestamp;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (timestamp !== null) headers['x-tandem-timestamp'] = timestamp;
      const signature =
        options.signature === undefined
          ? sign(options.secret ?? 's3cret', `${timestamp}.${body}`)
          : options.signature;
      if (signature !== null) headers[options.header ?? 'x-tandem-signature-256'] = signature;
      return fetch(new URL(`/hooks/connectors/${workspaceId}/${provider}`, serverUrl()), {
        method: 'POST',
        headers,
        body,
      });
    },
  };
}
