import { SCOPES } from '../../domains/workspace/actor.ts';
import { DomainError } from '../../errors.ts';
import { clientAddress } from '../client-address.ts';
import { defineRoute } from '../route.ts';
import { me, switchWorkspace } from '../../contract/people.ts';
import { changePassword, listApps, listTokens, revokeApp, revokeToken } from '../../contract/settings.ts';

/** A person's own account: who they are, which workspace they act in, their credentials. */
export const accountRoutes = [
  defineRoute({
    ...me,
    description: 'who the caller is, the workspace they act in and every workspace they belong to',
    scopes: [],
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
    ...switchWorkspace,
    description: 'switch the signed-in browser to another workspace of the same account: {workspace_id}',
    scopes: [],
    credentials: 'session',
    bodyHint: 'Send JSON: {"workspace_id": "ws_…"}',
    handler: async ({ services, credential, body }) => {
      const target = await services.sessions.switchWorkspace(credential.credentialId, body.workspace_id);
      return { workspace: { workspace_id: target.workspaceId, name: target.workspace } };
    },
  }),
  defineRoute({
    ...changePassword,
    description: 'change the password: {current_password, new_password}; other browsers are signed out',
    scopes: [],
    credentials: 'session',
    bodyHint: 'Send JSON: {"current_password": "…", "new_password": "…"}',
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
    ...revokeToken,
    description: 'revoke one of the caller’s personal access tokens',
    scopes: [],
    credentials: 'session',
    handler: async ({ services, actor, params }) => {
      await services.tokens.revoke(params.id!, actor.personId);
      return { revoked: params.id! };
    },
  }),
  defineRoute({
    ...listApps,
    description: 'the apps the caller connected over OAuth in this workspace, with the scopes granted',
    scopes: [],
    credentials: 'session',
    handler: async ({ services, actor }) => ({ apps: await services.grants.list(actor.personId) }),
  }),
  defineRoute({
    ...revokeApp,
    description: 'disconnect an app: its grant and every token issued under it stop working',
    scopes: [],
    credentials: 'session',
    handler: async ({ services, actor, params }) => {
      if (!params.id) throw new DomainError('not_found', 'Connected app not found');
      await services.grants.revoke(params.id, actor.personId);
      return { revoked: params.id };
    },
  }),
];
