import type { Net } from './net.ts';

/** The connection a call goes through: its provider and its settings, secrets opened. */
export interface Connection {
  provider: string;
  settings: Readonly<Record<string, string>>;
}

/** One capability's call to its service; input is already checked against its schema. */
export type Call = (
  input: Record<string, unknown>,
  connection: Connection,
  net: Net,
) => Promise<Record<string, unknown>>;

/** A namespace's calls, by capability name (`create_issue`). */
export type Transport = Record<string, Call>;
