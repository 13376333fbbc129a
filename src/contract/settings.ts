import { z } from 'zod';
import { endpoint } from './endpoint.ts';

/** Settings inside the app: a person's password, apps and tokens; for admins people, agents, connectors, the model. */

const scopes = z.array(z.string());

export const tokenRow = z.object({
  token_id: z.string(),
  name: z.string().nullable(),
  scopes,
  created_at: z.number(),
  expires_at: z.number().nullable(),
  last_used_at: z.number().nullable(),
});
export type TokenRow = z.infer<typeof tokenRow>;

export const listTokens = endpoint({
  method: 'GET',
  path: '/tokens',
  output: z.object({ tokens: z.array(tokenRow) }),
});

/** Makes a personal access token; the token itself is in this answer only. */
export const createToken = endpoint({
  method: 'POST',
  path: '/tokens',
  body: z.object({
    name: z.custom<string>(),
    scopes: z.custom<string[]>(),
    /** Days until it stops working; null: never. */
    expires_in_days: z.custom<number | null>().optional(),
  }),
  output: tokenRow.extend({ token: z.string() }),
});

export const revokeToken = endpoint({
  method: 'DELETE',
  path: '/tokens/:id',
  output: z.object({ revoked: z.string() }),
});

export const listApps = endpoint({
  method: 'GET',
  path: '/apps',
  output: z.object({
    apps: z.array(
      z.object({
        grant_id: z.string(),
        client_id: z.string(),
        client_name: z.string(),
        redirect_host: z.string(),
        scopes,
        created_at: z.number(),
      }),
    ),
  }),
});

export const revokeApp = endpoint({
  method: 'DELETE',
  path: '/apps/:id',
  output: z.object({ revoked: z.string() }),
});

export const changePassword = endpoint({
  method: 'POST',
  path: '/me/password',
  body: z.object({ current_password: z.string(), new_password: z.string() }),
  output: z.object({ changed: z.literal(true) }),
});

export const settingsPeople = endpoint({
  method: 'GET',
  path: '/settings/people',
  output: z.object({
    people: z.array(
      z.object({
        person_id: z.string(),
        name: z.string(),
        email: z.string(),
        handle: z.string(),
        admin: z.boolean(),
      }),
    ),
  }),
});

export const settingsAgents = endpoint({
  method: 'GET',
  path: '/settings/agents',
  output: z.object({
    agents: z.array(z.object({ handle: z.string(), installed: z.boolean(), does: z.string() })),
  }),
});

const connectorField = z.object({
  name: z.string(),
  secret: z.boolean(),
  describe: z.string(),
  required: z.boolean(),
  default: z.string().optional(),
});

/** A provider as an admin configures it: its fields and the workspace's shared connection, if any. */
export const connectorSettings = z.object({
  provider: z.string(),
  name: z.string(),
  fields: z.array(connectorField),
  connected: z.boolean(),
  /** Open settings with their value; secrets only as `set` / `not set` / `unreadable`. */
  settings: z.record(z.string(), z.string().nullable()),
  missing: z.array(z.string()),
  testable: z.boolean(),
});
export type ConnectorSettings = z.infer<typeof connectorSettings>;

export const listConnectors = endpoint({
  method: 'GET',
  path: '/settings/connectors',
  output: z.object({ connectors: z.array(connectorSettings) }),
});

/** Saves a provider's settings (a secret left out stays as it is; "" clears a field) and connects it. */
export const saveConnector = endpoint({
  method: 'PUT',
  path: '/settings/connectors/:provider',
  body: z.object({ settings: z.custom<Record<string, string | null>>() }),
  output: connectorSettings,
});

export const testConnector = endpoint({
  method: 'POST',
  path: '/settings/connectors/:provider/test',
  body: z.object({}),
  output: z.object({ ok: z.boolean(), message: z.string() }),
});

export const disconnectConnector = endpoint({
  method: 'DELETE',
  path: '/settings/connectors/:provider',
  output: connectorSettings,
});

/** The model the assistant, @Builder and agent steps answer through, as an admin sees it (never its key). */
export const modelView = z.object({
  configured: z.boolean(),
  /** Where it comes from: this workspace's Settings, the server's environment, or nowhere yet. */
  source: z.enum(['workspace', 'server', 'none']),
  url: z.string().nullable(),
  model: z.string().nullable(),
  key: z.enum(['set', 'not set']),
  how: z.string(),
});
export type ModelView = z.infer<typeof modelView>;

export const modelSettings = endpoint({
  method: 'GET',
  path: '/settings/model',
  output: modelView,
});

/** Connects the workspace's own model: a key left out or empty keeps the one set; null clears it. */
export const saveModel = endpoint({
  method: 'PUT',
  path: '/settings/model',
  body: z.object({
    url: z.custom<string>(),
    model: z.custom<string>(),
    key: z.custom<string | null>().optional(),
  }),
  output: modelView,
});

export const testModel = endpoint({
  method: 'POST',
  path: '/settings/model/test',
  body: z.object({}),
  output: z.object({ ok: z.boolean(), message: z.string() }),
});

/** Removes the workspace's own model; the server's, if it has one, is used again. */
export const disconnectModel = endpoint({
  method: 'DELETE',
  path: '/settings/model',
  output: modelView,
});
