import { DomainError, StepError } from '../../errors.ts';
import { providerName } from '../../capabilities/catalogue.ts';
import type { Resolver } from '../../net/http-fetch.ts';
import { holdSecrets, maskSecrets } from '../../observability/secrets.ts';
import type { Deps } from '../deps.ts';
import { isAdmin } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';
import { effectiveSettings, missingSettings, settingsOf } from './settings.ts';
import { readSettings } from './store.ts';

/** How long `Test connection` waits for the service. */
const TEST_SECONDS = 15;

export interface TestNet {
  /** TANDEM_HTTP_ALLOW, as the run engine has it. */
  allow: readonly string[];
  resolve?: Resolver | undefined;
}

/**
 * `Test connection`: one read call to the service through a connection (the workspace's shared one,
 * for admins, or the person's own), answered in one sentence whether it worked. Nothing is written
 * and the answer never carries a secret.
 */
export async function testConnection(
  deps: Deps,
  actor: Actor,
  args: { provider?: unknown; personal?: unknown },
  net: TestNet,
): Promise<{ ok: boolean; message: string }> {
  const provider = typeof args.provider === 'string' ? args.provider : '';
  const personal = args.personal === true;
  if (!personal && !(await isAdmin(deps.db, actor)))
    throw new DomainError('forbidden', 'Only workspace admins can test shared connectors');
  let query = deps.db
    .selectFrom('connectors')
    .selectAll()
    .where('workspace_id', '=', actor.workspaceId)
    .where('provider', '=', provider)
    .where('personal', '=', personal ? 1 : 0);
  if (personal) query = query.where('owner_id', '=', actor.personId);
  const row = await query.orderBy('created_at').orderBy('id').executeTakeFirst();
  const name = providerName(provider);
  if (!row)
    return { ok: false, message: `${name} is not set up yet; fill in its settings and save them first.` };
  const { settings: stored, unreadable } = readSettings(deps.secrets, row);
  if (unreadable)
    return { ok: false, message: `${name}’s secrets cannot be read with this server’s key; set them again.` };
  const missing = missingSettings(provider, stored);
  if (missing.length > 0)
    return { ok: false, message: `${name} has no ${missing.join(' or ')} yet; set it and save first.` };
  const spec = settingsOf(provider);
  if (!spec.check) return { ok: false, message: `Tandem has no test for ${name}.` };
  const settings = effectiveSettings(provider, stored);
  const secrets = spec.fields
    .filter((f) => f.secret && settings[f.name])
    .map((f) => settings[f.name] as string);
  holdSecrets(secrets);
  const hide = (text: string) => maskSecrets(text, secrets);
  try {
    const message = await spec.check(
      { provider, settings },
      { allow: net.allow, resolve: net.resolve, signal: AbortSignal.timeout(TEST_SECONDS * 1000) },
    );
    return { ok: true, message: hide(message) };
  } catch (error) {
    const why = error instanceof StepError || error instanceof Error ? error.message : String(error);
    return { ok: false, message: hide(`The test failed: ${why.replace(/\.$/, '')}.`) };
  }
}
