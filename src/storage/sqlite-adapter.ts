import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { checkpointsElsewhere } from './sqlite-checkpoints.ts';

type SqlValue = null | number | bigint | string | Uint8Array;

/** Booleans and plain objects are not SQLite values; store them the way the schema declares them. */
function toSqlite(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value as SqlValue;
}

class Statement implements SqliteStatement {
  readonly reader: boolean;
  readonly #stmt: StatementSync;
  readonly #after: (() => void) | undefined;

  constructor(stmt: StatementSync, after?: () => void) {
    this.#stmt = stmt;
    this.#after = after;
    this.reader = stmt.columns().length > 0;
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.#stmt.all(...parameters.map(toSqlite));
  }

  run(parameters: ReadonlyArray<unknown>) {
    const { changes, lastInsertRowid } = this.#stmt.run(...parameters.map(toSqlite));
    this.#after?.();
    return { changes, lastInsertRowid };
  }

  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.#stmt.iterate(...parameters.map(toSqlite));
  }
}

/**
 * How every transaction begins: holding the write lock from its first statement (waiting for it
 * as long as busy_timeout allows), so a transaction that reads before it writes never finds its
 * snapshot overtaken by another process's write, and what it read stays true until it commits.
 * In this process Kysely runs one transaction at a time anyway.
 */
const BEGIN = 'begin immediate';

/**
 * Gives Kysely's SQLite dialect the statement shape it expects, on top of Node's built-in
 * `node:sqlite`, so the embedded default needs no native build step.
 */
export function openSqlite(path: string): SqliteDatabase & { exec(sql: string): void } {
  const db = new DatabaseSync(path);
  // First: switching to the write-ahead log may meet a lock (another connection's checkpoint,
  // one that just closed finishing), and must wait for it like every later statement.
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  const checkpoints = path === ':memory:' ? undefined : checkpointsElsewhere(db, path);
  const cache = new Map<string, Statement>();
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = new Statement(
          db.prepare(sql === 'begin' ? BEGIN : sql),
          sql === 'commit' ? checkpoints?.committed : undefined,
        );
        if (cache.size > 500) cache.clear();
        cache.set(sql, stmt);
      }
      return stmt;
    },
    exec(sql: string) {
      db.exec(sql);
    },
    close() {
      checkpoints?.stop();
      cache.clear();
      db.close();
    },
  };
}
