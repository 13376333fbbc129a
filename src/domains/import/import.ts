import { DomainError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { accountKey, storePasswordHash } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Deps } from '../deps.ts';
import { applySettings } from '../connectors/settings.ts';
import { settingsColumns } from '../connectors/store.ts';
import type { SecretBox } from '../connectors/secrets.ts';
import { insertArtifact, type ArtifactType } from '../workspace/artifacts.ts';
import { describeFixtureErrors, fixtureSchema, type FixtureWorkspace } from './fixture.ts';
import type { Db } from '../../storage/schema.ts';

export interface ImportedWorkspace {
  id: string;
  users: Record<string, string>;
  pods: Record<string, string>;
  conversations: Record<string, string>;
  artifacts: Record<string, string>;
}

export type ImportResult = { workspaces: Record<string, ImportedWorkspace> };

function fail(message: string): never {
  throw new DomainError('invalid_argument', message);
}

/** Loads a workspace fixture in one transaction: all of it, or nothing. */
export async function importFixture(deps: Deps, raw: unknown): Promise<ImportResult> {
  const parsed = fixtureSchema.safeParse(raw);
  if (!parsed.success) fail(describeFixtureErrors(parsed.error));
  // Hashing is slow on purpose, so it happens before the transaction opens.
  const passwords = await passwordHashes(parsed.data.workspaces);
  return deps.db.transaction().execute(async (trx) => {
    const out: ImportResult = { workspaces: {} };
    for (const [i, ws] of parsed.data.workspaces.entries()) {
      out.workspaces[ws.name] = await importWorkspace(trx, deps.secrets, ws, `workspaces.${i}`);
    }
    for (const [email, hash] of passwords) await storePasswordHash(trx, email, hash);
    return out;
  });
}

/** One password per account: the same e-mail given two different passwords is an error. */
async function passwordHashes(workspaces: FixtureWorkspace[]): Promise<Map<string, string>> {
  const given = new Map<string, { password: string; at: string }>();
  for (const [i, ws] of workspaces.entries()) {
    for (const [j, u] of ws.users.entries()) {
      if (u.password === undefined) continue;
      const at = `workspaces.${i}.users.${j}.password`;
      const before = given.get(accountKey(u.email));
      if (before && before.password !== u.password) {
        fail(`${at}: ${u.email} has another password at ${before.at}; one e-mail signs in with one password`);
      }
      given.set(accountKey(u.email), { password: u.password, at });
    }
  }
  const hashes = new Map<string, string>();
  for (const [email, { password }] of given) hashes.set(email, await hashPassword(password));
  return hashes;
}

async function importWorkspace(
  trx: Db,
  secrets: SecretBox,
  ws: FixtureWorkspace,
  at: string,
): Promise<ImportedWorkspace> {
  const now = Date.now();
  const existing = await trx
    .selectFrom('workspaces')
    .select('id')
    .where('name', '=', ws.name)
    .executeTakeFirst();
  if (existing) fail(`${at}.name: a workspace named "${ws.name}" exists already`);
  const id = newId('ws');
  await trx.insertInto('workspaces').values({ id, name: ws.name, created_at: now }).execute();
  const out: ImportedWorkspace = { id, users: {}, pods: {}, conversations: {}, artifacts: {} };

  const agentHandles = new Set(['assistant', ...ws.agents.map((a) => a.toLowerCase())]);
  const handles = new Set<string>();
  for (const [j, u] of ws.users.entries()) {
    if (out.users[u.email]) fail(`${at}.users.${j}.email: "${u.email}" is listed twice`);
    const handle = u.handle ?? u.email.split('@')[0]!.replace(/[^A-Za-z0-9_.-]/g, '');
    if (handles.has(handle.toLowerCase()))
      fail(`${at}.users.${j}.handle: "${handle}" is used by another person`);
    if (agentHandles.has(handle.toLowerCase()))
      fail(`${at}.users.${j}.handle: "${handle}" is an agent's handle`);
    handles.add(handle.toLowerCase());
    const pid = newId('usr');
    out.users[u.email] = pid;
    await trx
      .insertInto('people')
      .values({
        id: pid,
        workspace_id: id,
        email: u.email,
        name: u.name,
        handle,
        admin: u.admin ? 1 : 0,
        created_at: now,
      })
      .execute();
  }
  const person = (email: string, where: string): string =>
    out.users[email] ?? fail(`${where}: "${email}" is not a user of ${ws.name}`);

  for (const agent of new Set(ws.agents))
    await trx.insertInto('agents').values({ workspace_id: id, handle: agent }).execute();

  for (const [j, p] of ws.pods.entries()) {
    if (out.pods[p.key]) fail(`${at}.pods.${j}.key: "${p.key}" is used twice`);
    const podId = newId('pod');
    out.pods[p.key] = podId;
    await trx
      .insertInto('pods')
      .values({ id: podId, workspace_id: id, name: p.name, created_at: now })
      .execute();
    for (const [k, m] of [...new Set(p.members)].entries()) {
      await trx
        .insertInto('pod_members')
        .values({ pod_id: podId, person_id: person(m, `${at}.pods.${j}.members.${k}`) })
        .execute();
    }
  }

  for (const [j, c] of ws.conversations.entries()) {
    if (out.conversations[c.key]) fail(`${at}.conversations.${j}.key: "${c.key}" is used twice`);
    const cid = newId('cnv');
    out.conversations[c.key] = cid;
    await trx
      .insertInto('conversations')
      .values({
        id: cid,
        workspace_id: id,
        title: c.title,
        kind: 'room',
        archived: c.archived ? 1 : 0,
        created_at: now,
      })
      .execute();
    for (const [k, m] of [...new Set(c.participants)].entries()) {
      await trx
        .insertInto('conversation_participants')
        .values({ conversation_id: cid, person_id: person(m, `${at}.conversations.${j}.participants.${k}`) })
        .execute();
    }
  }

  for (const [j, c] of ws.connectors.entries()) {
    if (c.personal && !c.owner) fail(`${at}.connectors.${j}.owner: a personal connector needs an owner`);
    const connectorId = newId('con');
    let settings;
    try {
      settings = applySettings(
        c.provider,
        {},
        { ...c.config, ...(c.secret !== undefined ? { secret: c.secret } : {}) },
      );
    } catch (error) {
      if (error instanceof DomainError) fail(`${at}.connectors.${j}.config: ${error.message}`);
      throw error;
    }
    await trx
      .insertInto('connectors')
      .values({
        id: connectorId,
        workspace_id: id,
        provider: c.provider,
        connected: c.connected ? 1 : 0,
        personal: c.personal ? 1 : 0,
        owner_id: c.owner ? person(c.owner, `${at}.connectors.${j}.owner`) : null,
        created_at: now,
        updated_at: now,
        ...settingsColumns(secrets, connectorId, c.provider, settings),
      })
      .execute();
  }

  for (const [j, a] of ws.artifacts.entries()) {
    const where = `${at}.artifacts.${j}`;
    if (out.artifacts[a.key]) fail(`${where}.key: "${a.key}" is used twice`);
    if (a.conversation && a.scope) fail(`${where}: give either conversation or scope, not both`);
    const scope = a.conversation ? 'user' : (a.scope ?? (a.pod ? 'pod' : 'user'));
    if (scope === 'pod' && !a.pod) fail(`${where}.pod: an artifact with scope pod needs a pod`);
    if (scope !== 'pod' && a.pod) fail(`${where}.pod: only an artifact with scope pod sits in a pod`);
    const podId = a.pod ? (out.pods[a.pod] ?? fail(`${where}.pod: no pod with key "${a.pod}"`)) : null;
    const conversationId = a.conversation
      ? (out.conversations[a.conversation] ??
        fail(`${where}.conversation: no conversation with key "${a.conversation}"`))
      : null;
    const type: ArtifactType = a.type;
    let content: string | null = null;
    let tableJson: string | null = null;
    if (a.type === 'document') content = a.markdown === undefined ? '' : a.markdown.replace(/\r\n?/g, '\n');
    if (a.type === 'html_app') content = a.html ?? null;
    if (a.type === 'table') {
      for (const [k, row] of a.rows.entries()) {
        if (row.length > a.columns.length) fail(`${where}.rows.${k}: has more cells than there are columns`);
      }
      tableJson = JSON.stringify({ columns: a.columns, rows: a.rows });
    }
    const hasContent = a.type === 'table' || (content !== null && content.trim() !== '');
    const artifact = await insertArtifact(trx, id, {
      type,
      title: a.title,
      ownerId: person(a.owner, `${where}.owner`),
      placement: { scope, podId, conversationId },
      content,
      tableJson,
      version: hasContent ? 1 : 0,
      status: a.archived ? 'archived' : 'active',
    });
    out.artifacts[a.key] = artifact.id;
    for (const [email, r] of Object.entries(a.roles ?? {})) {
      await trx
        .insertInto('artifact_roles')
        .values({ artifact_id: artifact.id, person_id: person(email, `${where}.roles`), role: r })
        .execute();
    }
  }
  return out;
}
