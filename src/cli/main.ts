import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { parseTtl } from '../domains/auth/tokens.ts';
import { parseScopes, SCOPES, type Actor } from '../domains/workspace/actor.ts';
import { importFixture } from '../domains/workspace/import.ts';
import { LookupError } from '../domains/workspace/people.ts';
import { DomainError } from '../errors.ts';
import { serveMcpStdio } from '../mcp/stdio.ts';
import { migrate, openStorage } from '../storage/db.ts';
import { configuredEngine, DEMO_USER, ensureDemo, openConfiguredServices, startServer } from '../server.ts';

const USAGE = `Usage: tandem <command> [options]

Commands:
  serve [--port 8787] [--host 127.0.0.1] [--no-worker]
                                           HTTP: MCP at /mcp, web app, JSON API, run engine (npm start)
  mcp --user EMAIL [--workspace NAME] [--scopes LIST]
                                           MCP over stdio, acting as that person
  import FILE.json                         load a workspace fixture; prints the ids it made
  token create --user EMAIL [--workspace NAME] --scopes LIST [--ttl 30d]
                                           print a personal access token
  migrate                                  apply database migrations
  worker                                   run automations and schedules only (scale-out)
  approve APPROVAL_ID --user EMAIL [--workspace NAME] [--reject] [--note TEXT]
                                           decide an approval as that person

Scopes: ${SCOPES.join(', ')}`;

/** A mistake in how Tandem was called: one line, exit code 2. */
class UsageError extends Error {}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(
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

function portOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65534)
    throw new UsageError(`--port ${value} is not a port from 1 to 65534`);
  return port;
}

async function serveCommand(args: string[]) {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'no-worker': { type: 'boolean' },
  });
  const config = loadConfig(process.env, { port: portOption(values.port), host: values.host });
  const services = await openConfiguredServices(config);
  const seeded = await ensureDemo(services);
  const server = await startServer(config, services);
  const engine = values['no-worker'] ? undefined : configuredEngine(config, services);
  engine?.start();
  console.log(`Tandem is running at ${server.url}`);
  console.log(`  MCP (Streamable HTTP): ${server.url}/mcp`);
  console.log(`  pages are shown from:  ${server.pagesUrl}`);
  console.log(`  data: ${config.databaseUrl ? 'PostgreSQL' : config.sqlitePath}`);
  if (seeded) {
    console.log(`Created the demo workspace. Try it over stdio:`);
    console.log(`  npx tandem mcp --user ${DEMO_USER}`);
    console.log(
      `or make a token for HTTP: npx tandem token create --user ${DEMO_USER} --scopes automations:read,automations:write,documents:read,documents:write`,
    );
  }
  const stop = async () => {
    await engine?.stop();
    await server.close();
    await services.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

async function workerCommand(args: string[]) {
  parse(args, {});
  const config = loadConfig();
  const services = await openConfiguredServices(config);
  const engine = configuredEngine(config, services);
  engine.start();
  console.log(
    `Tandem worker ${engine.workerId} is running automations (data: ${config.databaseUrl ? 'PostgreSQL' : config.sqlitePath})`,
  );
  const stop = async () => {
    await engine.stop();
    await services.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

async function approveCommand(args: string[]) {
  const { values, positionals } = parse(
    args,
    {
      user: { type: 'string' },
      workspace: { type: 'string' },
      reject: { type: 'boolean' },
      note: { type: 'string' },
    },
    1,
  );
  const approvalId = positionals[0];
  if (!approvalId)
    throw new UsageError('approve needs an approval id: tandem approve APPROVAL_ID --user EMAIL');
  if (!values.user) throw new UsageError('--user EMAIL is required');
  const result = await withServices(loadConfig(), async (services) => {
    const actor = await actorFor(services, values.user, values.workspace, SCOPES.join(','));
    return services.automations.decideApproval(actor, approvalId, {
      decision: values.reject ? 'reject' : 'approve',
      note: values.note,
    });
  });
  console.log(`${result.status} ${result.approval_id} (run ${result.run_id})`);
}

async function withServices<T>(
  config: Config,
  fn: (services: Awaited<ReturnType<typeof openConfiguredServices>>) => Promise<T>,
) {
  const services = await openConfiguredServices(config);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

async function actorFor(
  services: Awaited<ReturnType<typeof openConfiguredServices>>,
  email: string | undefined,
  workspace: string | undefined,
  scopes: string,
): Promise<Actor> {
  if (!email) throw new UsageError('--user EMAIL is required');
  const person = await services.people.byEmail(email, workspace);
  return { personId: person.id, workspaceId: person.workspace_id, scopes: new Set(parseScopes(scopes)) };
}

async function mcpCommand(args: string[]) {
  const { values } = parse(args, {
    user: { type: 'string' },
    workspace: { type: 'string' },
    scopes: { type: 'string' },
  });
  if (!values.user) throw new UsageError('--user EMAIL is required');
  const config = loadConfig();
  const services = await openConfiguredServices(config);
  try {
    // A first run for the demo person seeds the demo workspace; anyone else must be imported first.
    if (values.user === DEMO_USER) await ensureDemo(services);
    const actor = await actorFor(services, values.user, values.workspace, values.scopes ?? SCOPES.join(','));
    await serveMcpStdio(services, actor);
  } finally {
    await services.close();
  }
}

async function importCommand(args: string[]) {
  const { positionals } = parse(args, {}, 1);
  const file = positionals[0];
  if (!file) throw new UsageError('import needs a file: tandem import FILE.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const result = await withServices(loadConfig(), (services) => importFixture(services.deps, raw));
  console.log(JSON.stringify(result, null, 2));
}

async function tokenCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub !== 'create')
    throw new UsageError(`unknown token command "${sub ?? ''}"; use: tandem token create`);
  const { values } = parse(rest, {
    user: { type: 'string' },
    workspace: { type: 'string' },
    scopes: { type: 'string' },
    ttl: { type: 'string' },
  });
  if (!values.user) throw new UsageError('--user EMAIL is required');
  if (!values.scopes) throw new UsageError(`--scopes LIST is required, e.g. --scopes ${SCOPES.join(',')}`);
  const ttl = parseTtl(values.ttl ?? '30d');
  const token = await withServices(loadConfig(), async (services) => {
    const actor = await actorFor(services, values.user, values.workspace, values.scopes!);
    return services.tokens.create(actor.personId, actor.workspaceId, [...actor.scopes], ttl);
  });
  console.log(token.token);
}

async function migrateCommand(args: string[]) {
  parse(args, {});
  const config = loadConfig();
  const storage = await openStorage({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath });
  const applied = await migrate(storage).finally(() => storage.close());
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve: serveCommand,
  mcp: mcpCommand,
  import: importCommand,
  token: tokenCommand,
  migrate: migrateCommand,
  worker: workerCommand,
  approve: approveCommand,
};

export async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command "${command}"; run "tandem --help" for the list`);
    await run(args);
  } catch (error) {
    const known = [UsageError, ConfigError, LookupError, DomainError].some((k) => error instanceof k);
    const message = error instanceof Error ? error.message : String(error);
    if (known || isConnectionError(error)) {
      console.error(`tandem ${command}: ${message.split('\n').join('\n  ')}`);
      process.exit(error instanceof UsageError ? 2 : 1);
    }
    throw error;
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EADDRINUSE' ||
    code === '28P01' ||
    code === '3D000'
  );
}
