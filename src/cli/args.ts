import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { parseScopes, type Actor } from '../domains/workspace/actor.ts';
import { openConfiguredServices } from '../server.ts';
import type { Services } from '../services.ts';

/** A mistake in how Tandem was called: one line, exit code 2. */
export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  positionals = 0,
) {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message.split('\n')[0]!.replace(/\. To specify.*$/, ''));
  }
}

export async function withServices<T>(config: Config, fn: (services: Services) => Promise<T>) {
  const services = await openConfiguredServices(config);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

export async function actorFor(
  services: Services,
  email: string | undefined,
  workspace: string | undefined,
  scopes: string,
): Promise<Actor> {
  if (!email) throw new UsageError('--user EMAIL is required');
  const person = await services.people.byEmail(email, workspace);
  return { personId: person.id, workspaceId: person.workspace_id, scopes: new Set(parseScopes(scopes)) };
}
