import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';
import { maskSecrets } from './secrets.ts';

/** What the work being logged is about: the request, the person it acts for and where, the run. */
export interface LogContext {
  request?: string;
  person?: string;
  workspace?: string;
  run?: string;
}

const context = new AsyncLocalStorage<LogContext>();

/** Runs `work` with `extra` added to the context every log line inside it carries. */
export function withLogContext<T>(extra: LogContext, work: () => T): T {
  return context.run({ ...context.getStore(), ...extra }, work);
}

/** Adds to the context of the work under way (a request learns its person once it is checked). */
export function addLogContext(extra: LogContext): void {
  const store = context.getStore();
  if (store) Object.assign(store, extra);
}

/**
 * An error as its own plain fields (type, message, stack, code, …): objects a library hangs on it,
 * such as a database client with its connection settings and statements, are left out.
 */
function plainError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const full = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(full))
    if (value === null || typeof value !== 'object' || key === 'cause') plain[key] = value;
  return plain;
}

type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/**
 * Structured JSON logs on standard error (standard output stays for what a person reads), at
 * `LOG_LEVEL`. Every line carries the request, person and run it belongs to, and fields that hold
 * secrets are never written.
 */
export const log = pino(
  {
    // `info` until the configuration is read (setLogLevel, from LOG_LEVEL).
    level: 'info',
    base: undefined,
    mixin: () => ({ ...context.getStore() }),
    serializers: { err: plainError },
    // Secret values (the model key, connector secrets) never reach a log line, whatever field holds them.
    hooks: { streamWrite: (line) => maskSecrets(line) },
    redact: {
      paths: [
        'token',
        'password',
        'secret',
        'authorization',
        '*.token',
        '*.password',
        '*.secret',
        '*.authorization',
        '*.bot_token',
        '*.smtp_url',
        'headers.authorization',
        'headers.cookie',
      ],
      censor: '[secret]',
    },
  },
  pino.destination({ dest: 2, sync: false }),
);

/** Sets the level after start-up (configuration is parsed once, then applied here). */
export function setLogLevel(next: Level): void {
  log.level = next;
}
