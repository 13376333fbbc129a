import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config.ts';
import { SCOPES } from '../domains/workspace/actor.ts';
import { importFixture } from '../domains/import/import.ts';
import { LookupError } from '../domains/workspace/people.ts';
import { DomainError } from '../errors.ts';
import { serveOps } from '../http/ops.ts';
import { serveMcpStdio } from '../mcp/stdio.ts';
import { migrate, openStorage } from '../storage/db.ts';
import { configuredEngine, DEMO_USER, ensureDemo, openConfiguredServices, startServer } from '../server.ts';
import { actorFor, parse, UsageError, withServices } from './args.ts';
import { tokenCommand, userCommand } from './identity.ts';
import { CONNECTOR_USAGE, connectorCommand } from './connector.ts';

const USAGE = `Usage: tandem <command> [options]

Commands:
  serve [--port 8787] [--host 127.0.0.1] [--no-worker]
                                           HTTP: MCP at /mcp, web app, JSON API, run engine (npm start)
  mcp --user EMAIL [--workspace NAME] [--scopes LIST]
                                           MCP over stdio, acting as that person
  import FILE.json                         load a workspace fixture; prints the ids it made
  token create --user EMAIL [--workspace NAME] --scopes LIST [--ttl 30d]
                                           print a personal access token
  token list --user EMAIL [--workspace NAME]
                                           list that person's tokens (ids, scopes, expiry)
  token revoke TOKEN_ID                    revoke a token (every server stops accepting it within 5 s)
  user password --user EMAIL [--workspace NAME]
                                           set a person's password, read from standard input
  migrate                                  apply database migrations
  worker [--health-port N]                 run automations and schedules only (scale-out); with
                                           --health-port, /healthz, /readyz and /metrics on N
  approve APPROVAL_ID --user EMAIL [--workspace NAME] [--reject] [--note TEXT]
                                           decide an approval as that person
${CONNECTOR_USAGE}

Scopes: ${SCOPES.join(', ')}`;

function portOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65534)
    throw new UsageError(`--port ${value} is not a port from 1 to 65534`);
  return port;
}

/**
 * Stops in steps, each taken even when one before it failed (a failure is one line on standard
 * error); exits 1 when any failed, 0 otherwise. Stopping never ends on an uncaught error.
 */
async function stopAll(steps: [what: string, step: () => Promise<unknown> | undefined][]): Promise<void> {
  let failed = false;
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (error) {
      failed = true;
      console.error(`could not ${what} while stopping: ${(error as Error)?.message ?? String(error)}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

async function serveCommand(args: string[]) {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'no-worker': { type: 'boolean' },
  });
  const config = loadConfig(process.env, { port: portOption(values.port), host: values.host });
  const services = await openConfiguredServices(config);
  const demoPassword = await ensureDemo(services);
  const server = await startServer(config, services);
  const engine = values['no-worker'] ? undefined : configuredEngine(config, services);
  await engine?.start();
  console.log(`Tandem is running at ${server.url}`);
  console.log(`  MCP (Streamable HTTP): ${server.url}/mcp`);
  console.log(`  pages are shown from:  ${server.pagesUrl}`);
  console.log(`  data: ${config.databaseUrl ? 'PostgreSQL' : config.sqlitePath}`);
  if (demoPassword) {
    console.log(`Created the demo workspace. Its people (${DEMO_USER}, bob@demo.test, cy@demo.test) sign in`);
    console.log(`  at ${server.url}/login with the password ${demoPassword} (shown this once).`);
    console.log(`Connect an MCP client to ${server.url}/mcp: it signs you in with OAuth. Or over stdio:`);
    console.log(`  npx tandem mcp --user ${DEMO_USER}`);
  }
  const stop = () =>
    stopAll([
      ['stop the engine', () => engine?.stop()],
      ['close the server', () => server.close()],
      ['store pending edits and close the database', () => services.close()],
    ]);
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

async function workerCommand(args: string[]) {
  const { values } = parse(args, { 'health-port': { type: 'string' } });
  const healthPort = portOption(values['health-port']);
  const config = loadConfig();
  const services = await openConfiguredServices(config);
  const engine = configuredEngine(config, services);
  await engine.start();
  const health = healthPort ? await serveOps(services, config, healthPort, config.host) : undefined;
  console.log(
    `Tandem worker ${engine.workerId} is running automations (data: ${config.databaseUrl ? 'PostgreSQL' : config.sqlitePath})`,
  );
  const stop = () =>
    stopAll([
      ['stop answering health checks', async () => health?.close()],
      ['stop the engine', () => engine.stop()],
      ['store pending edits and close the database', () => services.close()],
    ]);
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
    if (values.user === DEMO_USER) {
      const password = await ensureDemo(services);
      // Standard output carries the protocol; the one-time password goes to standard error.
      if (password)
        console.error(`Created the demo workspace; its people sign in with the password ${password}`);
    }
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
  user: userCommand,
  migrate: migrateCommand,
  worker: workerCommand,
  approve: approveCommand,
  connector: connectorCommand,
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
