import { DomainError } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import { SCOPES, type Scope } from '../workspace/actor.ts';
import type { OAuthRecords } from './oauth-records.ts';

/**
 * What a person read about a connected app when they allowed it: the client's own name and the
 * redirect URI it sends people back to. A grant holds for that redirect URI only.
 */
export interface GrantLabel {
  client_name: string;
  redirect_host: string;
  redirect_uri: string;
}

const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

/**
 * What a consent covers of a redirect URI: all of it, except the port of a native app's loopback
 * IP address, which RFC 8252 lets change from one sign-in to the next (it is this machine either way).
 */
export function redirectTarget(uri: string): string {
  const url = URL.parse(uri);
  if (!url || url.protocol !== 'http:' || !LOOPBACK_IPS.has(url.hostname) || url.port === '') return uri;
  url.port = '';
  return url.href;
}

/** An app a person connected (an OAuth grant for one client in one workspace). */
export interface ConnectedApp extends GrantLabel {
  grant_id: string;
  client_id: string;
  scopes: Scope[];
  created_at: number;
}

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** The scopes a grant holds for a resource, in the order the scopes are listed everywhere. */
export function grantedScopes(payload: Record<string, unknown>, resource?: string): Scope[] {
  const resources = (payload.resources ?? {}) as Record<string, string>;
  const lists = resource === undefined ? Object.values(resources) : [resources[resource] ?? ''];
  const held = new Set(lists.flatMap((l) => l.split(' ')));
  return SCOPES.filter((s) => held.has(s) && isScope(s));
}

export const appNotFound = () => new DomainError('not_found', 'Connected app not found');

export function grantsService(deps: Deps, records: OAuthRecords) {
  const { db } = deps;

  /** The apps a person connected, newest first. */
  async function list(personId: string): Promise<ConnectedApp[]> {
    const rows = await db
      .selectFrom('oauth_records')
      .select(['id', 'client_id', 'payload', 'label', 'created_at'])
      .where('model', '=', 'Grant')
      .where('account_id', '=', personId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]))
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((r) => {
      const label = r.label ? (JSON.parse(r.label) as GrantLabel) : undefined;
      return {
        grant_id: r.id,
        client_id: r.client_id ?? '',
        client_name: label?.client_name ?? r.client_id ?? '',
        redirect_host: label?.redirect_host ?? '',
        redirect_uri: label?.redirect_uri ?? '',
        scopes: grantedScopes(JSON.parse(r.payload) as Record<string, unknown>),
        created_at: r.created_at,
      };
    });
  }

  /**
   * The grant a person gave a client for a redirect URI, if any (the newest, should two have been
   * made at once). A grant for another of the client's redirect URIs is no grant for this one.
   */
  async function find(personId: string, clientId: string, redirectUri: string): Promise<string | undefined> {
    const rows = await db
      .selectFrom('oauth_records')
      .select(['id', 'label'])
      .where('model', '=', 'Grant')
      .where('account_id', '=', personId)
      .where('client_id', '=', clientId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]))
      .orderBy('created_at', 'desc')
      .execute();
    const target = redirectTarget(redirectUri);
    return rows.find((r) => {
      const label = r.label ? (JSON.parse(r.label) as Partial<GrantLabel>) : {};
      return typeof label.redirect_uri === 'string' && redirectTarget(label.redirect_uri) === target;
    })?.id;
  }

  /** Records the name and redirect URI a person saw when they allowed the grant. */
  async function label(grantId: string, label: GrantLabel): Promise<void> {
    await db
      .updateTable('oauth_records')
      .set({ label: JSON.stringify(label) })
      .where('model', '=', 'Grant')
      .where('id', '=', grantId)
      .execute();
  }

  /**
   * Disconnects an app: the grant and every code and token issued under it, at once. Only the
   * person it was granted by may; anyone else's grant is not found.
   */
  async function revoke(grantId: string, personId: string): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const removed = await trx
        .deleteFrom('oauth_records')
        .where('model', '=', 'Grant')
        .where('id', '=', grantId)
        .where('account_id', '=', personId)
        .executeTakeFirst();
      if (Number(removed.numDeletedRows) !== 1) throw appNotFound();
      await trx.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
    });
    records.forgetGrant(grantId);
  }

  return { list, find, label, revoke };
}

export type GrantsService = ReturnType<typeof grantsService>;
