import { createHash } from 'node:crypto';
import pg from 'pg';

/** Uses of one statement's text before it is prepared under a name. */
const USES_BEFORE_NAMING = 3;
/** Distinct texts named per process, so a server holds a bounded number of plans per connection. */
const NAMED_MAX = 500;
/** Texts counted at most; past it the counts start over (one-off texts never grow it for long). */
const COUNTED_MAX = 5_000;
const QUERY = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Which statements a Postgres pool prepares. Every statement Tandem sends through Kysely is a
 * fixed text with parameters, and the hot ones (claiming and ending a run, queueing one, reading
 * an automation) repeat thousands of times; sent under a name, the server parses and plans each
 * once per connection instead of every time. One-off texts, transaction control and statements
 * past the cap are sent as before.
 */
export class PreparedStatements {
  private readonly uses = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private readonly refused = new Set<string>();

  /** The name to send `text` under, or undefined to send it unnamed. */
  nameFor(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= NAMED_MAX || this.refused.has(text) || text.length > 8_000 || !QUERY.test(text))
      return undefined;
    const used = (this.uses.get(text) ?? 0) + 1;
    if (used < USES_BEFORE_NAMING) {
      if (this.uses.size >= COUNTED_MAX) this.uses.clear();
      this.uses.set(text, used);
      return undefined;
    }
    this.uses.delete(text);
    const name = `t_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    this.names.set(text, name);
    return name;
  }

  /**
   * A table another process changed (a newer version's migration) can make a prepared statement's
   * result no longer match: its text is sent unnamed from then on (says whether that was the case).
   */
  failed(text: string, error: unknown): boolean {
    if ((error as { code?: unknown }).code !== '0A000') return false;
    this.names.delete(text);
    this.refused.add(text);
    return true;
  }
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** A pg client class that sends repeated statements as prepared ones (see PreparedStatements). */
export function preparingClient(statements: PreparedStatements): typeof pg.Client {
  const query = pg.Client.prototype.query as unknown as Query;
  const inTransaction = new WeakSet<pg.Client>();
  class PreparingClient extends pg.Client {}
  // pg's many overloads of query cannot be restated one by one; the arguments pass through.
  (PreparingClient.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args) {
    const [text, values, callback] = args;
    if (typeof text === 'string') {
      if (/^\s*(begin|start\s+transaction)\b/i.test(text)) inTransaction.add(this);
      else if (/^\s*(commit|rollback|end)\s*;?\s*$/i.test(text)) inTransaction.delete(this);
    }
    const name = typeof text === 'string' && Array.isArray(values) ? statements.nameFor(text) : undefined;
    if (name === undefined || callback !== undefined) return query.apply(this, args);
    const sent = query.call(this, { text, values, name }) as Promise<unknown>;
    return sent.catch((error: unknown) => {
      if (!statements.failed(text as string, error)) throw error;
      // Outside a transaction the statement is sent again, unnamed; inside, the transaction failed.
      if (inTransaction.has(this)) throw error;
      return query.call(this, text, values);
    });
  };
  return PreparingClient;
}
