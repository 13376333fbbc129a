import { z } from 'zod';
import { Octokit } from '@octokit/rest';
import { StepError } from '../errors.ts';
import { answerFailure, connectionFailure, retryAfterMs, type Attempt } from './failures.ts';
import { ConnectionError, guardedFetch, type Net } from '../net/guarded-fetch.ts';
import { defineConnectorCapability, defineNamespace, type Connection } from './capability.ts';
import { httpUrl, WEBHOOK_SECRET } from './settings.ts';

/** GitHub through Octokit's REST client; `api_url` points it at GitHub Enterprise (…/api/v3). */

export const GITHUB_API_URL = 'https://api.github.com';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function client(connection: Connection, net: Net): Octokit {
  return new Octokit({
    auth: connection.settings.token,
    baseUrl: (connection.settings.api_url ?? GITHUB_API_URL).replace(/\/+$/, ''),
    userAgent: 'Tandem',
    log: quiet,
    request: { fetch: guardedFetch('GitHub', net) },
  });
}

interface OctokitFailure {
  status: number;
  message: string;
  response?: { headers: Record<string, string | undefined>; data: unknown };
  cause?: unknown;
}

/** GitHub's answer or the connection's failure, as the node's error. */
function failure(a: Attempt, error: unknown): StepError {
  if (error instanceof StepError) return error;
  const e = error as OctokitFailure;
  if (e.cause instanceof StepError) return e.cause;
  if (e.cause instanceof ConnectionError) return connectionFailure(a, e.cause);
  if (e.response && typeof e.status === 'number') {
    const { headers, data } = e.response;
    const message =
      typeof (data as { message?: unknown } | null)?.message === 'string'
        ? (data as { message: string }).message
        : typeof data === 'string'
          ? data.slice(0, 300)
          : '';
    // GitHub's primary limit answers 403 with no requests remaining; its secondary limit says Retry-After.
    const spent = headers['x-ratelimit-remaining'] === '0';
    let wait = retryAfterMs(headers['retry-after']);
    if (wait === undefined && spent && headers['x-ratelimit-reset'])
      wait = Math.max(0, Number(headers['x-ratelimit-reset']) * 1000 - Date.now());
    const rateLimited = (e.status === 403 || e.status === 429) && (spent || wait !== undefined);
    return answerFailure(a, { status: e.status, message, retryAfterMs: wait, rateLimited });
  }
  return new StepError(`GitHub ${a.action} failed: ${(error as Error).message}`);
}

function repoOf(input: Record<string, unknown>) {
  const [owner = '', repo = ''] = String(input.repo).split('/');
  return { owner, repo };
}

/** Runs one call; every failure becomes the node's error. */
async function attempt<T>(a: Attempt, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw failure(a, error);
  }
}

const read = (action: string): Attempt => ({ service: 'GitHub', action, write: false });
const write = (action: string): Attempt => ({ service: 'GitHub', action, write: true });

const repo = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be owner/name')
  .describe('owner/name');

export const github = defineNamespace({
  namespace: 'github',
  name: 'GitHub',
  connector: {
    providers: ['github'],
    events: ['push', 'pull_request', 'issues', 'issue_comment', 'release', 'workflow_run'],
    settings: [
      {
        provider: 'github',
        name: 'GitHub',
        fields: [
          {
            name: 'api_url',
            secret: false,
            describe:
              'The REST API root; https://api.github.com unless GitHub Enterprise (https://HOST/api/v3).',
            parse: httpUrl('api_url'),
          },
          { name: 'token', secret: true, describe: 'A personal access token or an app installation token.' },
          WEBHOOK_SECRET,
        ],
        required: ['token'],
        defaults: {},
        async check(connection, net) {
          const { data } = await attempt(read('a test of the connection'), () =>
            client(connection, net).rest.users.getAuthenticated(),
          );
          return `GitHub answered: the token signs in as ${data.login}.`;
        },
      },
    ],
  },
  capabilities: [
    defineConnectorCapability({
      name: 'get_issue',
      kind: 'read',
      describe: 'Read an issue or pull request.',
      input: z.strictObject({ repo, number: z.number().int().min(1) }),
      output: z.object({
        number: z.number(),
        title: z.string(),
        body: z.string(),
        state: z.string(),
        url: z.string(),
        labels: z.array(z.string()),
      }),
      async call(input, connection, net) {
        const { data } = await attempt(read('get_issue'), () =>
          client(connection, net).rest.issues.get({ ...repoOf(input), issue_number: Number(input.number) }),
        );
        return {
          number: data.number,
          title: data.title,
          body: data.body ?? '',
          state: data.state,
          url: data.html_url,
          labels: data.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
        };
      },
    }),
    defineConnectorCapability({
      name: 'list_pull_requests',
      kind: 'read',
      describe: 'List pull requests of a repository.',
      input: z.strictObject({
        repo,
        state: z.enum(['open', 'closed', 'all']).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
      output: z.object({
        pull_requests: z.array(
          z.object({ number: z.number(), title: z.string(), author: z.string(), url: z.string() }),
        ),
      }),
      async call(input, connection, net) {
        const { data } = await attempt(read('list_pull_requests'), () =>
          client(connection, net).rest.pulls.list({
            ...repoOf(input),
            state: (input.state as 'open' | 'closed' | 'all' | undefined) ?? 'open',
            per_page: (input.limit as number | undefined) ?? 30,
          }),
        );
        return {
          pull_requests: data.map((pr) => ({
            number: pr.number,
            title: pr.title,
            author: pr.user?.login ?? '',
            url: pr.html_url,
          })),
        };
      },
    }),
    defineConnectorCapability({
      name: 'create_issue',
      kind: 'write',
      describe: 'Open an issue.',
      input: z.strictObject({
        repo,
        title: z.string().min(1).max(256),
        body: z.string().max(65_536).optional(),
        labels: z.array(z.string()).optional(),
      }),
      output: z.object({ number: z.number(), url: z.string() }),
      async call(input, connection, net) {
        const { data } = await attempt(write('create_issue'), () =>
          client(connection, net).rest.issues.create({
            ...repoOf(input),
            title: String(input.title),
            ...(input.body !== undefined ? { body: String(input.body) } : {}),
            ...(input.labels !== undefined ? { labels: input.labels as string[] } : {}),
          }),
        );
        return { number: data.number, url: data.html_url };
      },
    }),
    defineConnectorCapability({
      name: 'comment_on_issue',
      kind: 'write',
      describe: 'Comment on an issue or pull request.',
      input: z.strictObject({ repo, number: z.number().int().min(1), body: z.string().min(1).max(65_536) }),
      output: z.object({ comment_id: z.number(), url: z.string() }),
      async call(input, connection, net) {
        const { data } = await attempt(write('comment_on_issue'), () =>
          client(connection, net).rest.issues.createComment({
            ...repoOf(input),
            issue_number: Number(input.number),
            body: String(input.body),
          }),
        );
        return { comment_id: data.id, url: data.html_url };
      },
    }),
    defineConnectorCapability({
      name: 'get_file',
      kind: 'read',
      describe: 'Read a text file of a repository, up to 1 MB, at the default branch or at ref.',
      input: z.strictObject({
        repo,
        path: z.string().min(1).max(1024).describe('The file’s path in the repository: docs/README.md'),
        ref: z.string().min(1).max(256).optional().describe('A branch, tag or commit SHA.'),
      }),
      output: z.object({
        path: z.string(),
        sha: z.string(),
        size: z.number(),
        text: z.string(),
        url: z.string(),
      }),
      large: true,
      async call(input, connection, net) {
        const path = String(input.path).replace(/^\/+/, '');
        const { data } = await attempt(read('get_file'), () =>
          client(connection, net).rest.repos.getContent({
            ...repoOf(input),
            path,
            ...(input.ref !== undefined ? { ref: String(input.ref) } : {}),
          }),
        );
        if (Array.isArray(data) || data.type !== 'file')
          throw new StepError(
            `${path} in ${String(input.repo)} is not a file (it is a ${Array.isArray(data) ? 'directory' : data.type})`,
          );
        if (data.encoding !== 'base64' || typeof data.content !== 'string')
          throw new StepError(
            `${path} in ${String(input.repo)} is ${data.size.toLocaleString('en-US')} bytes; GitHub returns the text of files up to 1 MB`,
          );
        return {
          path: data.path,
          sha: data.sha,
          size: data.size,
          text: Buffer.from(data.content, 'base64').toString('utf8'),
          url: data.html_url ?? '',
        };
      },
    }),
  ],
});
