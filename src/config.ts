import { resolve } from 'node:path';
import { z } from 'zod';
import { parseSecretKey } from './domains/connectors/secrets.ts';
import { DEFAULT_BOUNDS, type DocumentBounds } from './domains/documents/bounds.ts';
import { parseTrustProxy, type TrustProxy } from './http/client-address.ts';

const port = z.coerce
  .number({ error: 'must be a port number' })
  .int('must be a whole number')
  .min(1, 'must be 1 to 65535')
  .max(65535, 'must be 1 to 65535');

const url = (what: string) =>
  z.string().refine((v) => {
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }, `must be ${what}`);

const envSchema = z.object({
  TANDEM_DATA: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(
      /^(postgres(ql)?:\/\/|file:|sqlite:)/,
      'must start with postgres://, or be unset for the embedded SQLite',
    )
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  PORT: port.default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: url('an absolute URL such as https://tandem.example.com').optional(),
  PAGES_ORIGIN: url('an origin such as http://127.0.0.1:8788').optional(),
  PAGES_PORT: port.optional(),
  TANDEM_MODEL_URL: url('the base URL of an OpenAI-compatible API').optional(),
  TANDEM_MODEL_KEY: z.string().optional(),
  TANDEM_MODEL: z.string().optional(),
  TANDEM_HTTP_ALLOW: z.string().default(''),
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const trust = parseTrustProxy(v);
      if (typeof trust === 'string') {
        ctx.addIssue({ code: 'custom', message: trust });
        return z.NEVER;
      }
      return trust;
    }),
  TANDEM_SECRET_KEY: z
    .string()
    .refine(
      (v) => parseSecretKey(v) !== undefined,
      'must be 32 random bytes in base64 (openssl rand -base64 32) or as 64 hex digits',
    )
    .optional(),
  TANDEM_METRICS_TOKEN: z.string().min(16, 'TANDEM_METRICS_TOKEN must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  TANDEM_RUN_LEASE_S: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(2, 'must be at least 2 seconds')
    .max(3600, 'must be at most 3600 seconds')
    .default(60),
  TANDEM_RUN_CRASHES: z.coerce
    .number({ error: 'must be a number of worker deaths' })
    .int('must be a whole number of worker deaths')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(3),
  TANDEM_AGENT_CONCURRENCY: z.coerce
    .number({ error: 'must be a number of requests' })
    .int('must be a whole number of requests')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(2),
  TANDEM_LIVE_DOC_CHARS: z.coerce
    .number({ error: 'must be a number of characters' })
    .int('must be a whole number of characters')
    .min(1_000, 'must be at least 1000')
    .max(5_000_000, 'must be at most 5000000')
    .default(DEFAULT_BOUNDS.documentChars),
  TANDEM_LIVE_BLOCK_CHARS: z.coerce
    .number({ error: 'must be a number of characters' })
    .int('must be a whole number of characters')
    .min(100, 'must be at least 100')
    .max(1_000_000, 'must be at most 1000000')
    .default(DEFAULT_BOUNDS.blockChars),
  TANDEM_LIVE_BLOCKS: z.coerce
    .number({ error: 'must be a number of blocks' })
    .int('must be a whole number of blocks')
    .min(10, 'must be at least 10')
    .max(100_000, 'must be at most 100000')
    .default(DEFAULT_BOUNDS.blocks),
  TANDEM_LIVE_DOCS_PER_PERSON: z.coerce
    .number({ error: 'must be a number of documents' })
    .int('must be a whole number of documents')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .default(20),
  TANDEM_AGENT_TIMEOUT_S: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1 second')
    .max(3600, 'must be at most 3600 seconds')
    .default(120),
  TANDEM_VERSIONS_KEEP_DAYS: z.coerce
    .number({ error: 'must be a number of days' })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1 day')
    .max(3650, 'must be at most 3650 days')
    .default(7),
});

/** Every environment variable Tandem reads (deployment files are checked against it). */
export const CONFIG_KEYS: readonly string[] = Object.keys(envSchema.shape);

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  sqlitePath: string;
  redisUrl: string | undefined;
  /** Lets /metrics answer a scraper that is not on loopback. */
  metricsToken: string | undefined;
  port: number;
  host: string;
  publicUrl: string;
  pagesOrigin: string;
  pagesPort: number;
  modelUrl: string | undefined;
  modelKey: string | undefined;
  model: string | undefined;
  httpAllow: string[];
  /** TRUST_PROXY: the proxies whose X-Forwarded-For names the client (none: the peer is the client). */
  trustProxy: TrustProxy;
  /** TANDEM_SECRET_KEY: seals connector secrets; unset, a key made under TANDEM_DATA is used. */
  secretKey: Buffer | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** How long a worker holds a run before another worker may take it over (after a crash). */
  runLeaseMs: number;
  /** Workers that may die in a row while holding a run before it fails as crashed repeatedly. */
  runCrashes: number;
  /** Agent requests of one workspace answered at once; the rest wait their turn. */
  agentConcurrency: number;
  /** How long one model call of an agent answering a mention may take. */
  agentTimeoutMs: number;
  /** How large people may make a document over the live socket. */
  liveBounds: DocumentBounds;
  /** How many documents one person may hold open live on one instance at once. */
  liveDocsPerPerson: number;
  /** Days every automatic document checkpoint is kept before pruning thins them. */
  versionsKeepDays: number;
}

export class ConfigError extends Error {}

/** Reads configuration from the environment once; a bad value stops with one line naming it. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: { port?: number; host?: string } = {},
): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    // A key is never repeated, not even a malformed one.
    const shown = name === 'TANDEM_SECRET_KEY' ? '(not shown)' : JSON.stringify(cleaned[name] ?? '');
    throw new ConfigError(`${name}=${shown} ${issue.message}`);
  }
  const e = parsed.data;
  const dataDir = resolve(e.TANDEM_DATA);
  const portNumber = overrides.port ?? e.PORT;
  const host = overrides.host ?? e.HOST;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const publicUrl = (e.PUBLIC_URL ?? `http://${shownHost}:${portNumber}`).replace(/\/$/, '');
  // Where this process serves pages, and the origin browsers reach them at (a proxy may sit between).
  const pagesPort = e.PAGES_PORT ?? portNumber + 1;
  if (pagesPort === portNumber)
    throw new ConfigError(`PAGES_PORT=${pagesPort} must differ from PORT=${portNumber}`);
  const pagesOrigin = (e.PAGES_ORIGIN ?? `http://${shownHost}:${pagesPort}`).replace(/\/$/, '');
  const pagesUrl = new URL(pagesOrigin);
  if (pagesUrl.origin === new URL(publicUrl).origin) {
    throw new ConfigError(`PAGES_ORIGIN=${pagesOrigin} must differ from the app's own origin ${publicUrl}`);
  }
  let databaseUrl = e.DATABASE_URL;
  let sqlitePath = resolve(dataDir, 'tandem.sqlite');
  if (databaseUrl && !databaseUrl.startsWith('postgres')) {
    sqlitePath = resolve(databaseUrl.replace(/^(file|sqlite):(\/\/)?/, ''));
    databaseUrl = undefined;
  }
  return {
    dataDir,
    databaseUrl,
    sqlitePath,
    redisUrl: e.REDIS_URL,
    metricsToken: e.TANDEM_METRICS_TOKEN,
    port: portNumber,
    host,
    publicUrl,
    pagesOrigin,
    pagesPort,
    modelUrl: e.TANDEM_MODEL_URL,
    modelKey: e.TANDEM_MODEL_KEY,
    model: e.TANDEM_MODEL,
    httpAllow: e.TANDEM_HTTP_ALLOW.split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    trustProxy: e.TRUST_PROXY,
    secretKey: e.TANDEM_SECRET_KEY === undefined ? undefined : parseSecretKey(e.TANDEM_SECRET_KEY),
    logLevel: e.LOG_LEVEL,
    runLeaseMs: e.TANDEM_RUN_LEASE_S * 1000,
    runCrashes: e.TANDEM_RUN_CRASHES,
    agentConcurrency: e.TANDEM_AGENT_CONCURRENCY,
    agentTimeoutMs: e.TANDEM_AGENT_TIMEOUT_S * 1000,
    liveBounds: {
      documentChars: e.TANDEM_LIVE_DOC_CHARS,
      blockChars: e.TANDEM_LIVE_BLOCK_CHARS,
      blocks: e.TANDEM_LIVE_BLOCKS,
    },
    versionsKeepDays: e.TANDEM_VERSIONS_KEEP_DAYS,
    liveDocsPerPerson: e.TANDEM_LIVE_DOCS_PER_PERSON,
  };
}
