import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createEngine, type Engine, type EngineOptions } from '../../src/engine/engine.ts';
import type { Resolver } from '../../src/net/http-fetch.ts';
import {
  automationHelpers,
  capability,
  plan,
  type Json,
  type Published,
  type RunInfo,
} from './automations.ts';
import {
  githubStandIn,
  slackStandIn,
  smtpStandIn,
  type ServiceStandIn,
  type SmtpStandIn,
} from './connector-stand-ins.ts';
import type { TestDatabase } from './databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './harness.ts';

/** Secret values no table, answer, error or log line may ever show. */
export function secretValues() {
  const mark = randomBytes(9).toString('hex');
  return {
    githubToken: `ghp_${mark}Gh`,
    slackToken: `xoxb-${mark}-Sl`,
    smtpPassword: `pw-${mark}-Mail`,
    webhookSecret: `whsec-${mark}`,
    slackSigningSecret: `sign-${mark}`,
  };
}

export type Secrets = ReturnType<typeof secretValues>;

/** Answers for host names the tests make up; every other name goes to the system's resolver. */
export function resolverWith(answers: Record<string, string[]>): Resolver {
  return async (name) =>
    answers[name]?.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) ??
    lookup(name, { all: true, order: 'verbatim' });
}

export interface ConnectorWorld {
  h: Harness;
  engine: Engine;
  ada: ToolCaller;
  github: ServiceStandIn;
  slack: ServiceStandIn;
  smtp: SmtpStandIn;
  secrets: Secrets;
  helpers: ReturnType<typeof automationHelpers>;
  /** Sets Acme's shared connection to a provider (made when missing). */
  configure(provider: string, settings: Record<string, string | null>): Promise<void>;
  /** Publishes a plan that writes unattended, as Ada. */
  publish(planJson: Json): Promise<Published>;
  /** Runs it and waits (draining the engine) until the run ends, retries and their waits included. */
  runToEnd(automation: Published, dryRun?: boolean): Promise<RunInfo>;
  close(): Promise<void>;
}

/**
 * The test fixture with Acme's shared GitHub, Slack and e-mail connections pointed at local
 * stand-ins (listed in the engine's allow list), and an engine to run automations.
 */
export async function connectorWorld(
  db: TestDatabase,
  engineOptions: EngineOptions = {},
): Promise<ConnectorWorld> {
  const secrets = secretValues();
  const github = await githubStandIn(secrets.githubToken);
  const slack = await slackStandIn(secrets.slackToken);
  const smtp = await smtpStandIn('robot@acme.test', secrets.smtpPassword);
  const h = await setup(db);
  const configure = async (provider: string, settings: Record<string, string | null>) => {
    await h.services.connectors.configure(acme(h).id, provider, null, { connected: true, settings });
  };
  await configure('github', {
    api_url: github.url('/api/v3'),
    token: secrets.githubToken,
    secret: secrets.webhookSecret,
  });
  await configure('slack', {
    api_url: slack.url('/api/'),
    bot_token: secrets.slackToken,
    secret: secrets.slackSigningSecret,
  });
  await configure('email', {
    smtp_url: `smtp://robot%40acme.test:${secrets.smtpPassword}@127.0.0.1:${smtp.port}`,
    from: 'Acme Robot <robot@acme.test>',
  });
  const engine = createEngine(h.services, {
    leaseMs: 5000,
    ...engineOptions,
    // The stand-ins, and any more hosts a test names.
    httpAllow: [github.host, slack.host, smtp.host, ...(engineOptions.httpAllow ?? [])],
  });
  const ada = await h.as('ada@acme.test');
  const helpers = automationHelpers(
    () => h,
    () => engine,
  );
  const terminal = new Set(['succeeded', 'failed', 'cancelled']);
  return {
    h,
    engine,
    ada,
    github,
    slack,
    smtp,
    secrets,
    helpers,
    configure,
    publish: (planJson) => helpers.publish(ada, planJson, { write_approval: 'automatic' }),
    async runToEnd(automation, dryRun) {
      const runId = await helpers.run(ada, automation, dryRun);
      const deadline = Date.now() + 20_000;
      for (;;) {
        await engine.drain();
        const run = await helpers.readRun(ada, automation, runId);
        if (terminal.has(run.status) || Date.now() > deadline) return run;
        // A retry waits for its time: look again shortly.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await engine.stop();
      await h.close();
      await Promise.all([github.close(), slack.close(), smtp.close()]);
    },
  };
}

/** One capability step in a plan of its own. */
export const single = (name: string, key: string, input: Json, extra: Json = {}) =>
  plan(name, [capability('call', key, input, extra)]);
