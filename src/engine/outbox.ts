import { deliverEvent, pendingEvents } from '../domains/automations/events.ts';
import type { Db } from '../storage/schema.ts';

/** Events delivered per pass; the next tick takes the rest. */
const BATCH = 100;

/**
 * Delivers the outbox's waiting events, oldest first, each in its own transaction (see
 * deliverEvent); `breathe` lets other work in between. Returns how many runs were queued.
 */
export async function deliverPending(db: Db, breathe: () => Promise<void>): Promise<number> {
  let queued = 0;
  for (const id of await pendingEvents(db, BATCH)) {
    queued += (await deliverEvent(db, id)).length;
    await breathe();
  }
  return queued;
}
