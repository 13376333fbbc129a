import { isIP } from 'node:net';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import { z } from 'zod';
import { checkedAddresses } from '../net/http-address.ts';
import { invalid, StepError } from '../errors.ts';
import { CONNECTOR_CAPS, type Net } from '../net/guarded-fetch.ts';
import { defineConnectorCapability, defineNamespace, type Connection } from './capability.ts';
import { outcomeFailure, type Attempt } from './failures.ts';
import { nonEmpty, WEBHOOK_SECRET, type Field, type ProviderSettings } from './settings.ts';

/**
 * E-mail through Nodemailer over SMTP (`smtp_url`: `smtps://host:465` for TLS from the start,
 * `smtp://host:587` upgrading with STARTTLS). The host is resolved and checked like any address a
 * run reaches, and Nodemailer connects to the checked address. A password goes over TLS only:
 * with a username set, `smtp://` requires STARTTLS, except to a relay on this machine (`localhost`,
 * `127.x.x.x`, `[::1]`), where nothing leaves it.
 */

interface SmtpFailure {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message: string;
}

/** Commands before the message itself: a failure there leaves nothing sent. */
const BEFORE_MESSAGE = /^(CONN|EHLO|HELO|LHLO|STARTTLS|AUTH|MAIL FROM|RCPT TO)/;

/** Whether smtp_url names this machine (`localhost`, a loopback address) and its address is one. */
function loopback(host: string, address: string): boolean {
  const named = host === 'localhost' || isIP(host) !== 0;
  return named && (/^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address));
}

/** The node's error for a failed send; `tlsFor` is smtp_url's host when STARTTLS was required. */
function failure(a: Attempt, error: unknown, tlsFor?: string): StepError {
  if (error instanceof StepError) return error;
  const e = error as SmtpFailure;
  // STARTTLS was required (a password is to be sent) and the server does not offer it.
  const noStartTls =
    (e.command === 'STARTTLS' && typeof e.responseCode === 'number') ||
    (e.command === 'EHLO' && /STARTTLS/.test(e.message));
  if (tlsFor !== undefined && noStartTls)
    return new StepError(
      `${a.service} does not offer STARTTLS, so its password would be sent unencrypted; set smtp_url to smtps://${tlsFor}:465 (TLS from the start) or to a server that offers STARTTLS`,
      { retryable: false, nothingDone: true },
    );
  if (typeof e.responseCode === 'number') {
    const words = (e.response ?? '').replace(/^\d{3}[ -]?/, '').trim();
    const said = ` (${e.responseCode})${words ? `: ${words}` : ''}`;
    // 4xx replies are temporary ("try again later"), 5xx ones final; either way nothing was accepted.
    return outcomeFailure(a, e.responseCode < 500 ? 'unavailable' : 'refused', said);
  }
  const said = `: ${e.message}`;
  if (e.command === undefined || BEFORE_MESSAGE.test(e.command))
    return new StepError(`${a.service} could not be reached for ${a.action}${said}`, {
      retryable: true,
      nothingDone: true,
    });
  return outcomeFailure(a, 'server_error', ` (the connection failed during ${e.command})${said}`);
}

/** Sends one message through the connection's SMTP server. */
function send(connection: Connection, net: Net, message: SendMailOptions) {
  return withTransport(connection, net, 'send', (transport) => transport.sendMail(message));
}

/** `Test connection`: connects, says hello and signs in (when a login is set), sending nothing. */
async function check(connection: Connection, net: Net): Promise<string> {
  await withTransport(connection, net, 'a test of the connection', (transport) => transport.verify());
  const host = new URL(connection.settings.smtp_url ?? '').hostname;
  return connection.settings.username
    ? `The SMTP server ${host} accepted the login ${connection.settings.username}.`
    : `The SMTP server ${host} answered and takes mail without a login.`;
}

/** A Nodemailer transport to the connection's checked SMTP address, for one piece of work. */
async function withTransport<T>(
  connection: Connection,
  net: Net,
  action: string,
  work: (transport: Transporter) => Promise<T>,
): Promise<T> {
  const { settings } = connection;
  const url = new URL(settings.smtp_url ?? '');
  const secure = url.protocol === 'smtps:';
  const port = Number(url.port || (secure ? 465 : 587));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const a: Attempt = { service: `SMTP server ${host}`, action, write: action === 'send' };
  // Checked as an http URL would be, so every spelling of an address is read as a browser reads it.
  const probe = new URL(`http://${url.hostname}:${port}/`);
  let addresses;
  try {
    addresses = await checkedAddresses(probe, net.allow, net.resolve, `SMTP ${probe.host}`, net.signal);
  } catch (error) {
    if (error instanceof StepError) throw new StepError(error.message, { nothingDone: true });
    throw new StepError(`SMTP ${probe.host} could not be resolved: ${(error as Error).message}`, {
      retryable: true,
      nothingDone: true,
    });
  }
  const address = addresses[0]!.address;
  const auth = settings.username ? { user: settings.username, pass: settings.password ?? '' } : undefined;
  // A password is never sent in the clear: without TLS from the start, STARTTLS is required.
  const requireTLS = auth !== undefined && !secure && !loopback(host, address);
  const transport = nodemailer.createTransport({
    host: address,
    port,
    secure,
    requireTLS,
    ...(isIP(host) ? {} : { servername: host }),
    ...(auth ? { auth } : {}),
    connectionTimeout: CONNECTOR_CAPS.seconds * 1000,
    greetingTimeout: CONNECTOR_CAPS.seconds * 1000,
    socketTimeout: CONNECTOR_CAPS.seconds * 1000,
    logger: false,
    debug: false,
  });
  // Nodemailer takes no signal: a run that stops closes the connection.
  let stop = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(new StepError(`${a.service} was stopped with its run`, { code: 'outcome_unknown' }));
  });
  net.signal.addEventListener('abort', stop, { once: true });
  if (net.signal.aborted) stop();
  try {
    return await Promise.race([work(transport), stopped]);
  } catch (error) {
    throw failure(a, error, requireTLS ? url.hostname : undefined);
  } finally {
    net.signal.removeEventListener('abort', stop);
    transport.close();
  }
}

/** `smtp://host[:port]` or `smtps://host[:port]`, credentials taken out (they are settings of their own). */
export function splitSmtpUrl(value: string): { url: string; username?: string; password?: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('smtp_url must be a URL such as smtps://smtp.example.com:465');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw invalid('smtp_url must start with smtp:// (STARTTLS) or smtps:// (TLS)');
  if (url.hostname === '') throw invalid('smtp_url must name a host');
  if (url.port !== '' && !/^\d+$/.test(url.port)) throw invalid('smtp_url has a port that is not a number');
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    url: `${url.protocol}//${url.host}`,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

const sender = z.union([z.email(), z.string().regex(/^[^<>]*<[^<>\s]+@[^<>\s]+>$/)]);
function from(value: string) {
  if (!sender.safeParse(value.trim()).success)
    throw invalid('from must be an e-mail address, or a name and one: Ada <ada@example.com>');
  return value.trim();
}

const smtpFields = (passwordWords: string): Field[] => [
  {
    name: 'smtp_url',
    secret: false,
    describe:
      'smtps://host:465 (TLS) or smtp://host:587 (STARTTLS, which a password needs unless the host is localhost); a user and password in it become username and password.',
    parse: (value) => splitSmtpUrl(value).url,
    carries: (value) => {
      const { username, password } = splitSmtpUrl(value);
      return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
    },
  },
  {
    name: 'from',
    secret: false,
    describe: 'The sender: ada@example.com or Ada <ada@example.com>.',
    parse: from,
  },
  {
    name: 'username',
    secret: false,
    describe: 'The SMTP login; defaults to the from address.',
    parse: nonEmpty('username'),
  },
  { name: 'password', secret: true, describe: passwordWords },
  WEBHOOK_SECRET,
];

/** Plain SMTP, or a preset of a known host that signs in with the person's app password. */
const emailLike = (
  provider: string,
  name: string,
  passwordWords: string,
  presetUrl?: string,
): ProviderSettings => ({
  provider,
  name,
  fields: smtpFields(passwordWords),
  required: presetUrl ? ['smtp_url', 'from', 'password'] : ['smtp_url', 'from'],
  defaults: presetUrl ? { smtp_url: presetUrl } : {},
  // The SMTP login defaults to the sender's address.
  fill: (settings) => {
    if (settings.smtp_url && settings.password && !settings.username && settings.from)
      settings.username = /<([^<>]+)>/.exec(settings.from)?.[1] ?? settings.from;
  },
  check,
});

export const email = defineNamespace({
  namespace: 'email',
  name: 'Email',
  connector: {
    providers: ['email', 'gmail', 'outlook'],
    events: ['received'],
    settings: [
      emailLike('email', 'Email', 'The SMTP password, if the server asks for one.'),
      emailLike(
        'gmail',
        'Gmail',
        'A Google app password (Google Account → Security → App passwords).',
        'smtps://smtp.gmail.com:465',
      ),
      emailLike(
        'outlook',
        'Outlook',
        'The account’s app password (Microsoft account → Security → App passwords).',
        'smtp://smtp.office365.com:587',
      ),
    ],
  },
  capabilities: [
    defineConnectorCapability({
      name: 'send',
      kind: 'write',
      describe: 'Send a plain-text e-mail from the connection’s address (over its SMTP server).',
      input: z.strictObject({
        to: z.array(z.email()).min(1).max(50),
        subject: z.string().min(1).max(998),
        body: z.string().max(100_000),
      }),
      output: z.object({ message_id: z.string() }),
      async call(input, connection, net) {
        const info = await send(connection, net, {
          from: connection.settings.from,
          to: input.to as string[],
          subject: String(input.subject),
          text: String(input.body),
        });
        return { message_id: String(info.messageId ?? '') };
      },
    }),
  ],
});
