import { DomainError, invalid, StepError } from '../../errors.ts';
import { chat, ModelError, type ModelConfig } from '../../model/model.ts';
import { SealError } from '../connectors/secrets.ts';
import { checkedAddresses } from '../../net/http-address.ts';
import { urlProblem } from '../../net/hops.ts';
import { holdSecrets, maskSecrets } from '../../observability/secrets.ts';
import type { Db } from '../../storage/schema.ts';
import type { TestNet } from '../connectors/test-connection.ts';
import type { Deps } from '../deps.ts';
import { isAdmin } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';

/**
 * The model the assistant, @Builder and agent steps answer through. An admin sets a workspace's
 * own in Settings (its key sealed as connectors' secrets are, never shown again: only `set`); it
 * takes effect at the next call, no restart. Without one the server's TANDEM_MODEL_* is used.
 */

export interface ModelSettingsView {
  configured: boolean;
  /** Where the model in use comes from: this workspace's settings, the server's, or nowhere. */
  source: 'workspace' | 'server' | 'none';
  url: string | null;
  model: string | null;
  key: 'set' | 'not set';
  how: string;
}

/** A sealed key belongs to its workspace's row: it opens nowhere else. */
const contextOf = (workspaceId: string) => `workspace_models:${workspaceId}`;

const MAX_FIELD = 2000;
/** How long `Test connection` waits for the model's answer. */
const TEST_SECONDS = 20;

/** Whether a workspace has a model of its own (an automation's health: a model step can run). */
export async function hasWorkspaceModel(db: Db, workspaceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('workspace_models')
    .select('workspace_id')
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row !== undefined;
}

function checkUrl(value: unknown): URL {
  if (value !== undefined && value !== null && typeof value !== 'string')
    throw invalid('url must be a string');
  if (typeof value !== 'string' || value.trim() === '')
    throw invalid('url is required: the endpoint’s base URL, such as https://api.openai.com/v1');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid('url is not an absolute URL; give one that starts with http:// or https://');
  }
  const problem = urlProblem(url);
  if (problem) throw invalid(`url ${problem}`);
  return url;
}

function checkText(name: string, value: unknown, required: boolean): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalid(`${name} is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw invalid(`${name} must be a string`);
  if (value.length > MAX_FIELD) throw invalid(`${name} must be at most ${MAX_FIELD} characters`);
  return value.trim();
}

/** `server`: the model from the server's environment, used where a workspace has none. */
export function modelSettingsService(deps: Deps, server?: ModelConfig) {
  const { db, secrets: box } = deps;

  async function requireAdmin(on: Db, actor: Actor) {
    if (!(await isAdmin(on, actor)))
      throw new DomainError('forbidden', 'Only workspace admins can change the assistant’s model');
  }

  async function row(on: Db, workspaceId: string) {
    return on
      .selectFrom('workspace_models')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
  }

  /** The workspace's own model, its key opened; undefined when it has none. */
  async function own(workspaceId: string): Promise<ModelConfig | undefined> {
    const stored = await row(db, workspaceId);
    if (!stored) return undefined;
    let key: string | undefined;
    if (stored.sealed_key !== null) {
      try {
        key = box.open(stored.sealed_key, contextOf(workspaceId));
      } catch (error) {
        if (!(error instanceof SealError)) throw error;
        throw new ModelError(
          'the model’s key set in Settings cannot be read with this server’s key; an admin sets it again',
        );
      }
      holdSecrets([key]);
    }
    return { url: stored.url, model: stored.model, key };
  }

  /** The refusal, when a host is inside and not on TANDEM_HTTP_ALLOW (as the http capabilities refuse it). */
  async function reachable(url: URL, net: TestNet) {
    try {
      await checkedAddresses(url, net.allow, net.resolve, `The model at ${url.host}`);
    } catch (error) {
      if (error instanceof StepError) throw invalid(error.message);
      throw error;
    }
  }

  async function view(actor: Actor): Promise<ModelSettingsView> {
    await requireAdmin(db, actor);
    const stored = await row(db, actor.workspaceId);
    if (stored)
      return {
        configured: true,
        source: 'workspace',
        url: stored.url,
        model: stored.model,
        key: stored.sealed_key === null ? 'not set' : 'set',
        how: `Set in this workspace’s Settings; it takes effect at once. ${
          server
            ? 'Disconnect to go back to the model whoever runs this server set.'
            : 'Disconnect and the assistant tells people it is not set up yet.'
        }`,
      };
    if (server)
      return {
        configured: true,
        source: 'server',
        url: server.url,
        model: server.model,
        key: server.key ? 'set' : 'not set',
        how: 'Set by whoever runs this server (TANDEM_MODEL_URL, TANDEM_MODEL, TANDEM_MODEL_KEY). Saving a model here uses it for this workspace instead.',
      };
    return {
      configured: false,
      source: 'none',
      url: null,
      model: null,
      key: 'not set',
      how: 'Connect an OpenAI-compatible endpoint here (its base URL, such as https://api.openai.com/v1, the model’s name and, if it needs one, a key); it takes effect at once.',
    };
  }

  return {
    /** The model a workspace answers through: its own, else `fallback` (the server's by default). */
    async configFor(workspaceId: string, fallback: ModelConfig | undefined = server) {
      return (await own(workspaceId)) ?? fallback;
    },

    view,

    /**
     * Saves the workspace's model: {url, model, key?}. A key left out or empty keeps the one set;
     * null clears it. Refused for an inside address not on TANDEM_HTTP_ALLOW.
     */
    async save(actor: Actor, body: unknown, net: TestNet): Promise<ModelSettingsView> {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalid('send {url, model, key?}');
      const input = body as Record<string, unknown>;
      const url = checkUrl(input.url);
      const model = checkText('model', input.model, true)!;
      const key = input.key === null ? null : checkText('key', input.key, false);
      // Asked before the address is looked up, and again where the row is written.
      await requireAdmin(db, actor);
      await reachable(url, net);
      const href = url.href.replace(/\/$/, '');
      await db.transaction().execute(async (trx) => {
        await requireAdmin(trx, actor);
        const current = await row(trx, actor.workspaceId);
        const sealed =
          key === null
            ? null
            : key === undefined
              ? (current?.sealed_key ?? null)
              : box.seal(key, contextOf(actor.workspaceId));
        const values = {
          url: href,
          model,
          sealed_key: sealed,
          updated_by: actor.personId,
          updated_at: Date.now(),
        };
        if (current)
          await trx
            .updateTable('workspace_models')
            .set(values)
            .where('workspace_id', '=', actor.workspaceId)
            .execute();
        else
          await trx
            .insertInto('workspace_models')
            .values({ workspace_id: actor.workspaceId, ...values })
            .execute();
      });
      return view(actor);
    },

    /** Removes the workspace's own model (the server's, if any, is used again). */
    async disconnect(actor: Actor): Promise<ModelSettingsView> {
      await db.transaction().execute(async (trx) => {
        await requireAdmin(trx, actor);
        await trx.deleteFrom('workspace_models').where('workspace_id', '=', actor.workspaceId).execute();
      });
      return view(actor);
    },

    /** `Test connection`: one short question to the model in use, answered in a sentence; never the key. */
    async test(actor: Actor, net: TestNet): Promise<{ ok: boolean; message: string }> {
      await requireAdmin(db, actor);
      let config: ModelConfig | undefined;
      try {
        config = await own(actor.workspaceId);
      } catch {
        return { ok: false, message: 'The model’s key cannot be read with this server’s key; set it again.' };
      }
      const mine = config !== undefined;
      config ??= server;
      if (!config)
        return { ok: false, message: 'No model is connected yet; fill in its settings and save them first.' };
      const hide = (text: string) => maskSecrets(text, config.key ? [config.key] : []);
      try {
        if (mine) await reachable(new URL(config.url), net);
        await chat(config, {
          instructions: 'This is a connection test. Answer with the single word OK.',
          messages: [{ role: 'user', content: 'Are you there?' }],
          timeoutMs: TEST_SECONDS * 1000,
        });
        return { ok: true, message: `${config.model} at ${new URL(config.url).host} answered.` };
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return { ok: false, message: hide(`The test failed: ${why.replace(/\.$/, '')}.`) };
      }
    },
  };
}

export type ModelSettingsService = ReturnType<typeof modelSettingsService>;
