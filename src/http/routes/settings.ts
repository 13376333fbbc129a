import type { Config } from '../../config.ts';
import { invalid } from '../../errors.ts';
import { parseScopes, SCOPES } from '../../domains/workspace/actor.ts';
import { tokenName } from '../../domains/auth/tokens.ts';
import * as contract from '../../contract/settings.ts';
import { defineRoute, type AnyRoute } from '../route.ts';

const DAY_MS = 86_400_000;

/** A new token's scopes: a non-empty list of the four. */
function tokenScopes(value: unknown) {
  if (!Array.isArray(value) || value.length === 0 || !value.every((s) => typeof s === 'string'))
    throw invalid(`scopes must list at least one of ${SCOPES.join(', ')}`);
  const unknown = value.filter((s) => !(SCOPES as readonly string[]).includes(s as string));
  if (unknown.length) throw invalid(`unknown scope ${String(unknown[0])}; choose from ${SCOPES.join(', ')}`);
  return parseScopes(value.join(' '));
}

function tokenTtl(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 3650)
    throw invalid('expires_in_days must be a whole number of days from 1 to 3650, or null for never');
  return value * DAY_MS;
}

/** Settings' routes that need the server's configuration (the http allow list). */
export function settingsRoutes(config: Pick<Config, 'httpAllow'>): AnyRoute[] {
  return [
    defineRoute({
      ...contract.createToken,
      description: 'make a personal access token: {name, scopes, expires_in_days?}; the token is shown once',
      scopes: [],
      credentials: 'session',
      bodyHint: 'Send JSON: {"name": "Laptop scripts", "scopes": ["documents:read"], "expires_in_days": 30}',
      handler: async ({ services, actor, body }) => {
        const name = tokenName(body.name);
        const scopes = tokenScopes(body.scopes);
        const ttl = tokenTtl(body.expires_in_days);
        const made = await services.tokens.create(actor.personId, actor.workspaceId, scopes, ttl, name);
        return {
          token_id: made.tokenId,
          token: made.token,
          name,
          scopes,
          created_at: Date.now(),
          expires_at: made.expiresAt,
          last_used_at: null,
        };
      },
    }),
    defineRoute({
      ...contract.settingsPeople,
      description: 'the workspace’s people (admins)',
      scopes: [],
      credentials: 'session',
      handler: async ({ services, actor }) => ({ people: await services.directory.people(actor) }),
    }),
    defineRoute({
      ...contract.settingsAgents,
      description: 'the agents people can mention in this workspace (admins)',
      scopes: [],
      credentials: 'session',
      handler: async ({ services, actor }) => ({ agents: await services.directory.agents(actor) }),
    }),
    defineRoute({
      ...contract.listConnectors,
      description: 'the workspace’s shared connectors with their fields; secrets only as set (admins)',
      scopes: [],
      credentials: 'session',
      handler: async ({ services, actor }) => ({ connectors: await services.connectorSettings.list(actor) }),
    }),
    defineRoute({
      ...contract.saveConnector,
      description: 'save a shared connector’s settings and connect it: {settings} (admins)',
      scopes: [],
      credentials: 'session',
      bodyHint: 'Send JSON: {"settings": {"token": "…"}}',
      handler: ({ services, actor, params, body }) =>
        services.connectorSettings.save(actor, params.provider!, body.settings),
    }),
    defineRoute({
      ...contract.testConnector,
      description:
        'one read call to the service through the shared connection, answered in a sentence (admins)',
      scopes: [],
      credentials: 'session',
      handler: ({ services, actor, params }) =>
        services.connectorSettings.test(actor, { provider: params.provider }, { allow: config.httpAllow }),
    }),
    defineRoute({
      ...contract.disconnectConnector,
      description: 'disconnect a shared connector; its settings are kept (admins)',
      scopes: [],
      credentials: 'session',
      handler: ({ services, actor, params }) =>
        services.connectorSettings.disconnect(actor, params.provider!),
    }),
    defineRoute({
      ...contract.modelSettings,
      description:
        'the model the assistant answers through: the workspace’s own or the server’s; its key only as set (admins)',
      scopes: [],
      credentials: 'session',
      handler: ({ services, actor }) => services.models.view(actor),
    }),
    defineRoute({
      ...contract.saveModel,
      description:
        'connect the workspace’s own model: {url, model, key?}; takes effect at once; the key is sealed and never shown (admins)',
      scopes: [],
      credentials: 'session',
      bodyHint: 'Send JSON: {"url": "https://api.openai.com/v1", "model": "gpt-4o-mini", "key": "sk-…"}',
      handler: ({ services, actor, body }) => services.models.save(actor, body, { allow: config.httpAllow }),
    }),
    defineRoute({
      ...contract.testModel,
      description: 'ask the model in use one short question, answered in a sentence (admins)',
      scopes: [],
      credentials: 'session',
      handler: ({ services, actor }) => services.models.test(actor, { allow: config.httpAllow }),
    }),
    defineRoute({
      ...contract.disconnectModel,
      description: 'remove the workspace’s own model; the server’s, if any, is used again (admins)',
      scopes: [],
      credentials: 'session',
      handler: ({ services, actor }) => services.models.disconnect(actor),
    }),
  ];
}
