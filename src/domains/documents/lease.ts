import { DomainError } from '../../errors.ts';
import { compiled } from '../../storage/compiled.ts';
import type { Transaction } from 'kysely';
import type { Database, Db } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';

/** Writers queue this long for a document before they are told to come back later. */
export const LEASE_WAIT_MS = 12_000;
/** A lease lapses on its own this long after it was taken, should its holder die. */
export const LEASE_TTL_MS = 30_000;

export interface Lease {
  /**
   * Deletes the lease's row inside the transaction that stores the write it guarded. Once that
   * transaction commits (`stored`), `release` only frees this process's queue.
   */
  dropIn(trx: Transaction<Database>): Promise<void>;
  /** The transaction `dropIn` ran in committed: the row is gone. */
  stored(): void;
  release(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true when `turn` settles first, false after `ms`; the timer never outlives the race. */
async function within(turn: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([turn.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const byDeps = new WeakMap<Deps, Leases>();

/**
 * One writer per document at a time (an agent's write, a person's restore), across every server
 * process: the lease is a row with an expiry. Writers in this process also queue in order, so
 * they do not race each other: every caller with the same deps shares one queue.
 */
export function leases(deps: Deps): Leases {
  let made = byDeps.get(deps);
  if (!made) byDeps.set(deps, (made = documentLeases(deps)));
  return made;
}

export type Leases = ReturnType<typeof documentLeases>;

function documentLeases(deps: Deps) {
  const local = new Map<string, Promise<void>>();
  /** Writers of this process holding or waiting for each document's lease. */
  const writers = new Map<string, number>();
  const count = (artifactId: string, by: 1 | -1) => {
    const n = (writers.get(artifactId) ?? 0) + by;
    if (n > 0) writers.set(artifactId, n);
    else writers.delete(artifactId);
  };

  async function takeRow(artifactId: string, holder: string): Promise<boolean> {
    const now = Date.now();
    const result = await takeLease(deps.db, artifactId, holder, now + LEASE_TTL_MS, now);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async function retryAfter(artifactId: string): Promise<number> {
    const row = await deps.db
      .selectFrom('doc_leases')
      .select('expires_at')
      .where('artifact_id', '=', artifactId)
      .executeTakeFirst();
    return Math.max(1, Math.min(30, Math.ceil(((row?.expires_at ?? Date.now()) - Date.now()) / 1000)));
  }

  function busy(seconds: number): DomainError {
    return new DomainError(
      'write_conflict',
      `write_conflict: another agent is writing to this document; retry in ${seconds} s`,
      { data: { error: 'write_conflict', retry_after_seconds: seconds } },
    );
  }

  /** Waits in line for the document's lease, or fails with `write_conflict` and when to retry. */
  async function acquire(artifactId: string, holder: string, waitMs = LEASE_WAIT_MS): Promise<Lease> {
    count(artifactId, 1);
    try {
      return await queue(artifactId, holder, waitMs);
    } catch (error) {
      count(artifactId, -1);
      throw error;
    }
  }

  async function queue(artifactId: string, holder: string, waitMs: number): Promise<Lease> {
    const deadline = Date.now() + waitMs;
    const before = local.get(artifactId) ?? Promise.resolve();
    let releaseLocal!: () => void;
    const mine = new Promise<void>((resolve) => (releaseLocal = resolve));
    const tail = before.then(() => mine);
    local.set(artifactId, tail);
    const done = () => {
      releaseLocal();
      if (local.get(artifactId) === tail) local.delete(artifactId);
    };
    const turn = await within(before, waitMs);
    if (!turn) {
      // Leave the queue in order: the next in line waits for the one ahead of us, not for us.
      void before.then(done);
      throw busy(await retryAfter(artifactId));
    }
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      if (await takeRow(artifactId, holder)) break;
      if (Date.now() + pause > deadline) {
        done();
        throw busy(await retryAfter(artifactId));
      }
      await sleep(pause);
    }
    const drop = (db: Db) => dropLease(db, artifactId, holder);
    let gone = false;
    return {
      dropIn: async (trx) => void (await drop(trx)),
      stored: () => void (gone = true),
      async release() {
        try {
          if (!gone) await drop(deps.db);
        } finally {
          done();
          count(artifactId, -1);
        }
      },
    };
  }

  return {
    acquire,
    /** How many writers of this process hold or wait for a document's lease. */
    writers: (artifactId: string) => writers.get(artifactId) ?? 0,
  };
}

/** The lease row taken when free or run out (compiled once: every agent write takes one). */
const takeLease = compiled((db, artifactId: string, holder: string, until: number, now: number) =>
  db
    .insertInto('doc_leases')
    .values({ artifact_id: artifactId, holder, expires_at: until })
    .onConflict((oc) =>
      oc
        .column('artifact_id')
        .doUpdateSet({ holder, expires_at: until })
        .where('doc_leases.expires_at', '<', now),
    ),
);
const dropLease = compiled((db, artifactId: string, holder: string) =>
  db.deleteFrom('doc_leases').where('artifact_id', '=', artifactId).where('holder', '=', holder),
);
