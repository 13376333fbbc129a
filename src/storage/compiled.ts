import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import { onPostgres } from './db.ts';
import type { Db } from './schema.ts';

/** Stands for a statement's `i`-th value while it is built; no value a caller passes looks like it. */
const standIn = (i: number) => `\uFDD0value-${i}\uFDD1`;
const STAND_IN = /\uFDD0value-(\d+)\uFDD1/;

interface Template {
  sql: string;
  /** Per parameter: the index of the caller's value it takes, or -1 for a value fixed in the statement. */
  slots: number[];
  fixed: readonly unknown[];
}

/**
 * A statement of one shape, built and compiled once per dialect, then sent with each call's values:
 * the hot paths (an artifact's head, a document's log, the lease, a run queued) pay the query
 * builder's work once, not on every call. `build` receives stand-ins for the values, in order, and
 * must use each as a plain value (compared with, or stored in a column), never branch on one; a
 * stand-in that does not reach the parameters as it was given fails the first call.
 */
export function compiled<A extends unknown[], R>(
  build: (db: Db, ...values: A) => Compilable<R>,
): (db: Db, ...values: A) => Promise<QueryResult<R>> {
  const send = sender(build.length - 1, (db, standIns) => build(db, ...(standIns as A)));
  return (db, ...values) => send(db, values);
}

/**
 * As `compiled`, for a statement that takes a row of named values (an insert's columns): `build`
 * receives a row of stand-ins under the names given (each must be one of the row's), and each call
 * a row whose values under those names are sent.
 */
export function compiledRow<V extends object, R>(
  names: readonly (keyof V & string)[],
  build: (db: Db, row: V) => Compilable<R>,
): (db: Db, row: V) => Promise<QueryResult<R>> {
  const send = sender(names.length, (db, standIns) =>
    build(db, Object.fromEntries(names.map((name, i) => [name, standIns[i]])) as V),
  );
  return (db, row) =>
    send(
      db,
      names.map((name) => row[name]),
    );
}

/**
 * As `compiledRow`, for a statement that takes several rows (a multi-row insert): compiled once
 * per number of rows, up to `most` rows a call.
 */
export function compiledRows<V extends object, R>(
  names: readonly (keyof V & string)[],
  most: number,
  build: (db: Db, rows: V[]) => Compilable<R>,
): (db: Db, rows: readonly V[]) => Promise<QueryResult<R>> {
  const senders = new Map<number, ReturnType<typeof sender<R>>>();
  const senderFor = (n: number) => {
    let send = senders.get(n);
    if (!send) {
      send = sender(n * names.length, (db, standIns) =>
        build(
          db,
          Array.from(
            { length: n },
            (_, r) => Object.fromEntries(names.map((name, i) => [name, standIns[r * names.length + i]])) as V,
          ),
        ),
      );
      senders.set(n, send);
    }
    return send;
  };
  return (db, rows) => {
    if (rows.length === 0 || rows.length > most)
      throw new Error(`a compiled statement takes 1 to ${most} rows, not ${rows.length}`);
    return senderFor(rows.length)(
      db,
      rows.flatMap((row) => names.map((name) => row[name])),
    );
  };
}

function sender<R>(count: number, build: (db: Db, standIns: string[]) => Compilable<R>) {
  const templates = new Map<boolean, Template>();
  const template = (db: Db): Template => {
    const made = build(
      db,
      Array.from({ length: count }, (_, i) => standIn(i)),
    ).compile();
    const slots = made.parameters.map((p) => {
      const match = typeof p === 'string' ? STAND_IN.exec(p) : null;
      if (match && match[0] !== p) throw new Error(`a compiled statement changed its value ${match[1]}`);
      return match ? Number(match[1]) : -1;
    });
    const used = new Set(slots.filter((s) => s >= 0));
    if (used.size !== count || STAND_IN.test(made.sql))
      throw new Error(
        `a compiled statement must send each of its ${count} values as a parameter: ${made.sql}`,
      );
    return { sql: made.sql, slots, fixed: made.parameters };
  };
  return async (db: Db, values: readonly unknown[]): Promise<QueryResult<R>> => {
    const postgres = onPostgres(db);
    let t = templates.get(postgres);
    if (!t) templates.set(postgres, (t = template(db)));
    const { slots, fixed } = t;
    const parameters = slots.map((slot, i) => (slot >= 0 ? values[slot] : fixed[i]));
    return db.executeQuery<R>(CompiledQuery.raw(t.sql, parameters));
  };
}
