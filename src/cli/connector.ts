import { loadConfig } from '../config.ts';
import { parse, UsageError, withServices } from './args.ts';

export const CONNECTOR_USAGE = `  connector set PROVIDER [--workspace NAME] [--owner EMAIL] [--connect | --disconnect]
                [--stdin FIELD] [FIELD=VALUE …]
                                           set a connector's settings (FIELD= clears one); --owner
                                           for that person's own; a secret read with --stdin
                                           stays out of the shell's history`;

/** The first line of standard input, without its line end. */
async function firstLine(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 65_536) break;
  }
  return text.split(/\r?\n/, 1)[0] ?? '';
}

/** `tandem connector set`: prints the connector's settings, secrets as "set" or "not set". */
export async function connectorCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub !== 'set')
    throw new UsageError(`unknown connector command "${sub ?? ''}"; use: tandem connector set`);
  const { values, positionals } = parse(
    rest,
    {
      workspace: { type: 'string' },
      owner: { type: 'string' },
      connect: { type: 'boolean' },
      disconnect: { type: 'boolean' },
      stdin: { type: 'string' },
    },
    100,
  );
  const [provider, ...pairs] = positionals;
  if (!provider) throw new UsageError('connector set needs a provider: tandem connector set github token=…');
  if (values.connect && values.disconnect) throw new UsageError('give --connect or --disconnect, not both');
  const settings: Record<string, string | null> = {};
  for (const [i, pair] of pairs.entries()) {
    const at = pair.indexOf('=');
    // Not repeated: it may be a token given without its field name.
    if (at < 1) throw new UsageError(`setting ${i + 1} is not FIELD=VALUE`);
    const value = pair.slice(at + 1);
    settings[pair.slice(0, at)] = value === '' ? null : value;
  }
  if (values.stdin !== undefined) {
    if (values.stdin in settings) throw new UsageError(`${values.stdin} is given twice`);
    settings[values.stdin] = await firstLine();
  }
  const view = await withServices(loadConfig(), async (services) => {
    const { workspaceId, ownerId } = await services.connectors.target(values.workspace, values.owner);
    return services.connectors.configure(workspaceId, provider, ownerId, {
      settings,
      ...(values.connect ? { connected: true } : values.disconnect ? { connected: false } : {}),
    });
  });
  console.log(JSON.stringify(view, null, 2));
}
