import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';
import { log } from '../observability/log.ts';

/** Commits between two asks to the checkpointing thread. */
const COMMITS_PER_CHECKPOINT = 32;
/**
 * The write-ahead log's size, in pages, at which a commit of this process checkpoints it itself:
 * only when the thread falls behind or is gone (SQLite's own default is 1,000).
 */
const BACKSTOP_PAGES = 10_000;
const OWN_PAGES = 1_000;

/**
 * The thread's whole program: its own connection, a passive checkpoint each time it is asked (it
 * copies what the log holds into the database file and syncs it, never waiting for a writer).
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 1000');
db.exec('PRAGMA cache_size = -256');
const step = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (m) => {
  if (m === 'stop') { db.close(); parentPort.close(); return; }
  try { step.get(); } catch {}
  parentPort.postMessage('done');
});
`;

/**
 * Moves the checkpoints of a SQLite database's write-ahead log off this thread. A commit that
 * finds the log past 1,000 pages checkpoints it before it returns, syncing the database file to
 * disk: a few milliseconds in one request of every few dozen writes. Once a connection has
 * committed 32 times, a thread of its own does that work every 32 commits, and this connection
 * checkpoints only past 10,000 pages (when the thread falls behind, or failed).
 */
export function checkpointsElsewhere(db: DatabaseSync, path: string) {
  let commits = 0;
  let worker: Worker | undefined;
  let busy = false;
  let failed = false;
  let stopped = false;
  const start = () => {
    worker = new Worker(PROGRAM, { eval: true, workerData: { path } });
    worker.unref();
    worker.on('message', () => (busy = false));
    worker.on('error', (error) => {
      if (stopped) return;
      log.warn(
        { err: error },
        'the thread that checkpoints the SQLite log stopped; commits checkpoint it again',
      );
      failed = true;
      worker = undefined;
      db.exec(`PRAGMA wal_autocheckpoint = ${OWN_PAGES}`);
    });
    db.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  };
  return {
    committed() {
      if (failed || stopped || ++commits % COMMITS_PER_CHECKPOINT !== 0 || busy) return;
      if (!worker) start();
      busy = true;
      worker!.postMessage('checkpoint');
    },
    stop() {
      stopped = true;
      worker?.postMessage('stop');
      worker = undefined;
    },
  };
}
