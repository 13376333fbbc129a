import { email } from './email.ts';
import { github } from './github.ts';
import { slack } from './slack.ts';
import type { Call, Transport } from './transport.ts';

/** The transports Tandem ships, by namespace: every capability of the shipped connector plugins. */
export const TRANSPORTS: Readonly<Record<string, Transport>> = { github, slack, email };

/** The call behind a capability key (`github.create_issue`), if a transport ships it. */
export function transportCall(key: string): Call | undefined {
  const [namespace = '', name = ''] = key.split('.');
  const transport = Object.hasOwn(TRANSPORTS, namespace) ? TRANSPORTS[namespace] : undefined;
  return transport && Object.hasOwn(transport, name) ? transport[name] : undefined;
}

export type { Call, Connection, Transport } from './transport.ts';
export type { Net } from './net.ts';
