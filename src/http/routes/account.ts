import { z } from 'zod';
import { SCOPES } from '../../domains/workspace/actor.ts';
import { DomainError } from '../../errors.ts';
import { clientAddress } from '../client-address.ts';
import { defineRoute } from '../route.ts';
import { listTokens } from '../../contract/settings.ts';

const workspace = z.object({ workspace_id: z.string(), name: z.string() });
const scopes = z.array(z.enum(SCOPES));

/** A person's own account: who they are, which workspace they act in, their credentials. */
export const accountRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    description: 'who the caller is, the workspace they act in and every workspace they belong to',
    scopes: [],
    output: z.object({
      person_id: z.string(),
      name: z.string(),
      email: z.string(),
      workspace,
      workspaces: z.array(workspace),
      scopes,
      /** Whether they are an admin of this workspace (Settings shows more). */
      admin: z.boolean(),
    }),
    handler: async ({ services, actor }) => {
      const { me, workspaces } = await services.accounts.whoIs(actor.personId);
      return {
        person_id: me.personId,
        name: me.name,
        email: me.email,
        workspace: { workspace_id: me.workspaceId, name: me.workspace },
        workspaces: workspaces.map((w) => ({ workspace_id: w.workspaceId, name: w.workspace })),
        scopes: SCOPES.filter((s) => actor.scopes.has(s)),
        admin: await services.directory.isAdmin(actor),
      };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/me/workspace',
    description: 'switch the signed-in browser to another workspace of the same account: {workspace_id}',
    scopes: [],
    credentials: 'session',
    body: z.object({ workspace_id: z.string().min(1) }),
    bodyHint: 'Send JSON: {"workspace_id": "ws_…"}',
    output: z.object({ workspace }),
    handler: async ({ services, credential, body }) => {
      const target = await services.sessions.switchWorkspace(credential.credentialId, body.workspace_id);
      return { workspace: { workspace_id: target.workspaceId, name: target.workspace } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/me/password',
    description: 'change the password: {current_password, new_password}; other browsers are signed out',
    scopes: [],
    credentials: 'session',
    body: z.object({ current_password: z.string(), new_password: z.string() }),
    bodyHint: 'Send JSON: {"current_password": "…", "new_password": "…"}',
    output: z.object({ changed: z.literal(true) }),
    handler: async ({ services, credential, body, c }) => {
      const email = credential.email!;
      await services.accounts.changePassword(
        email,
        body.current_password,
        body.new_password,
        clientAddress(c),
      );
      await services.sessions.revokeOthers(email, credential.credentialId);
      return { changed: true as const };
    },
  }),
  defineRoute({
    ...listTokens,
    description:
      'the caller’s personal access tokens that still work, named, with when each was last used (never the tokens themselves)',
    scopes: [],
    credentials: 'session',
    handler: async ({ services, actor }) => ({ tokens: await services.tokens.list(actor.personId) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tokens/:id',
    description: 'revoke one of the caller’s personal access tokens',
    scopes: [],
    credentials: 'session',
    output: z.object({ revoked: z.string() }),
    handler: async ({ services, actor, params }) => {
      await services.tokens.revoke(params.id!, actor.personId);
      return { revoked: params.id! };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/apps',
    description: 'the apps the caller connected over OAuth in this workspace, with the scopes granted',
    scopes: [],
    credentials: 'session',
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
    handler: async ({ services, actor }) => ({ apps: await services.grants.list(actor.personId) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/apps/:id',
    description: 'disconnect an app: its grant and every token issued under it stop working',
    scopes: [],
    credentials: 'session',
    output: z.object({ revoked: z.string() }),
    handler: async ({ services, actor, params }) => {
      if (!params.id) throw new DomainError('not_found', 'Connected app not found');
      await services.grants.revoke(params.id, actor.personId);
      return { revoked: params.id };
    },
  }),
];
