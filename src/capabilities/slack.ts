import { z } from 'zod';
import {
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
  type Logger,
} from '@slack/web-api';
import { StepError } from '../errors.ts';
import { answerFailure, connectionFailure, outcomeFailure, type Attempt, type Outcome } from './failures.ts';
import { ConnectionError, guardedFetch, type Net } from '../net/guarded-fetch.ts';
import { defineConnectorCapability, defineNamespace, type Connection } from './capability.ts';
import { httpUrl, WEBHOOK_SECRET } from './settings.ts';

/** Slack through its Web API client; `api_url` stands for https://slack.com/api/. */

export const SLACK_API_URL = 'https://slack.com/api/';

const quiet: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

function client(connection: Connection, net: Net): WebClient {
  return new WebClient(connection.settings.bot_token, {
    slackApiUrl: connection.settings.api_url ?? SLACK_API_URL,
    fetch: guardedFetch('Slack', net),
    logger: quiet,
    // Rate limits and retries are the run's: its node retry policy waits as long as Slack asks.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    allowAbsoluteUrls: false,
  });
}

/** Slack's error codes that are not a refusal of the request itself. */
const PLATFORM_OUTCOMES: Record<string, Outcome> = {
  ratelimited: 'rate_limited',
  service_unavailable: 'unavailable',
  fatal_error: 'server_error',
  internal_error: 'server_error',
  request_timeout: 'server_error',
};

function failure(a: Attempt, error: unknown): StepError {
  if (error instanceof StepError) return error;
  if (error instanceof WebAPIRateLimitedError)
    return outcomeFailure(a, 'rate_limited', ' (429 Too Many Requests)', error.retryAfter * 1000);
  if (error instanceof WebAPIPlatformError) {
    const code = error.data.error;
    return outcomeFailure(a, PLATFORM_OUTCOMES[code] ?? 'refused', `: ${code}`);
  }
  if (error instanceof WebAPIHTTPError) {
    const body = typeof error.body === 'string' ? error.body : '';
    let message = error.statusMessage;
    try {
      message = String((JSON.parse(body) as { error?: unknown }).error ?? message);
    } catch {
      // Not JSON: the status line says enough.
    }
    return answerFailure(a, { status: error.statusCode, message });
  }
  if (error instanceof WebAPIRequestError) {
    if (error.original instanceof StepError) return error.original;
    if (error.original instanceof ConnectionError) return connectionFailure(a, error.original);
  }
  return new StepError(`Slack ${a.action} failed: ${(error as Error).message}`);
}

async function attempt<T>(a: Attempt, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw failure(a, error);
  }
}

export const slack = defineNamespace({
  namespace: 'slack',
  name: 'Slack',
  connector: {
    providers: ['slack'],
    events: ['message', 'reaction_added', 'channel_created'],
    settings: [
      {
        provider: 'slack',
        name: 'Slack',
        fields: [
          {
            name: 'api_url',
            secret: false,
            describe: 'The Web API root; https://slack.com/api/ unless a proxy stands between.',
            parse: httpUrl('api_url'),
          },
          { name: 'bot_token', secret: true, describe: 'The app’s bot token (xoxb-…).' },
          WEBHOOK_SECRET,
        ],
        required: ['bot_token'],
        defaults: {},
        async check(connection, net) {
          const result = await attempt(
            { service: 'Slack', action: 'a test of the connection', write: false },
            () => client(connection, net).auth.test(),
          );
          return `Slack answered: the bot token signs in as ${String(result.user ?? 'a bot')} in ${String(result.team ?? 'its workspace')}.`;
        },
      },
    ],
  },
  capabilities: [
    defineConnectorCapability({
      name: 'list_channels',
      kind: 'read',
      describe: 'List channels the connection can see.',
      input: z.strictObject({ limit: z.number().int().min(1).max(1000).optional() }),
      output: z.object({ channels: z.array(z.object({ id: z.string(), name: z.string() })) }),
      async call(input, connection, net) {
        const result = await attempt({ service: 'Slack', action: 'list_channels', write: false }, () =>
          client(connection, net).conversations.list({
            limit: (input.limit as number | undefined) ?? 200,
            exclude_archived: true,
            types: 'public_channel,private_channel',
          }),
        );
        return {
          channels: (result.channels ?? []).map((c) => ({ id: c.id ?? '', name: c.name ?? '' })),
        };
      },
    }),
    defineConnectorCapability({
      name: 'post_message',
      kind: 'write',
      describe: 'Post a message to a channel.',
      input: z.strictObject({
        channel: z.string().min(1).describe('A channel id or #name.'),
        text: z.string().min(1).max(40_000),
      }),
      output: z.object({ ts: z.string(), channel: z.string() }),
      async call(input, connection, net) {
        const result = await attempt({ service: 'Slack', action: 'post_message', write: true }, () =>
          client(connection, net).chat.postMessage({
            channel: String(input.channel),
            text: String(input.text),
          }),
        );
        return { ts: result.ts ?? '', channel: result.channel ?? String(input.channel) };
      },
    }),
    defineConnectorCapability({
      name: 'post_to_thread',
      kind: 'write',
      describe: 'Reply in a message’s thread (broadcast also shows the reply in the channel).',
      input: z.strictObject({
        channel: z.string().min(1).describe('The channel id of the message.'),
        thread_ts: z.string().regex(/^\d+\.\d+$/, 'must be a message ts such as 1700000000.000100'),
        text: z.string().min(1).max(40_000),
        broadcast: z.boolean().optional(),
      }),
      output: z.object({ ts: z.string(), channel: z.string(), thread_ts: z.string() }),
      async call(input, connection, net) {
        const result = await attempt({ service: 'Slack', action: 'post_to_thread', write: true }, () =>
          client(connection, net).chat.postMessage({
            channel: String(input.channel),
            thread_ts: String(input.thread_ts),
            text: String(input.text),
            reply_broadcast: input.broadcast === true,
          }),
        );
        return {
          ts: result.ts ?? '',
          channel: result.channel ?? String(input.channel),
          thread_ts: String(input.thread_ts),
        };
      },
    }),
  ],
});
