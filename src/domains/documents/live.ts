import { DomainError, invalid, notFound } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { personName } from '../workspace/artifacts.ts';
import { roleRank } from '../policies/roles.ts';
import { storedOverBound, type DocumentBounds } from './bounds.ts';
import type { LiveDoc } from './live-doc.ts';
import { personGate } from './person-gate.ts';
import type { DocumentStore } from './store.ts';

/** What a person may do with a document live: edit it, or follow it read-only. */
export interface LiveAccess {
  documentId: string;
  /** An editor or owner, and the document is not archived. */
  mayEdit: boolean;
}

/** A person connected to one live document (the live socket holds one per connection). */
export interface LiveSession {
  documentId: string;
  personId: string;
  /** Their name, as the people connected see it. */
  name: string;
  mayEdit: boolean;
  /** Why they follow read-only although their role lets them edit (the document is past its bounds). */
  readOnlyReason: string | undefined;
  /** The live document: the one agents write to. */
  open(): Promise<LiveDoc>;
  /** Applies their change, or refuses it (read-only, or not the document's shape) changing nothing. */
  apply(live: LiveDoc, update: Uint8Array): void;
  /** Asks again what they may do (their role or the document changed); null once they cannot open it. */
  recheck(): Promise<LiveAccess | null>;
}

/**
 * The documents people follow live. Anything that cannot be opened live — no role, another
 * workspace, a made-up id, an artifact that is not a document — is the same `not_found`.
 */
export function liveDocuments(deps: Deps, store: DocumentStore, bounds?: Partial<DocumentBounds>) {
  const { db } = deps;
  const gate = personGate({ bounds });
  /** Documents found past their bounds when they were opened: people follow them read-only. */
  const overBound = new WeakMap<LiveDoc, string | null>();

  function overBoundReason(live: LiveDoc): string | null {
    let reason = overBound.get(live);
    if (reason === undefined) overBound.set(live, (reason = storedOverBound(live.doc, gate.bounds)));
    return reason;
  }

  async function access(actor: Actor, documentId: unknown): Promise<LiveAccess> {
    const { artifact, role } = await artifactFor(db, actor, documentId);
    if (artifact.type !== 'document') throw notFound();
    return {
      documentId: artifact.id,
      mayEdit: roleRank(role) >= roleRank('editor') && artifact.status !== 'archived',
    };
  }

  /** Checks and applies a person's change to a live document. */
  function applyChecked(live: LiveDoc, personId: string, mayEdit: boolean, update: Uint8Array): void {
    if (!mayEdit) throw new DomainError('read_only', 'This document is read-only for you');
    const past = overBoundReason(live);
    if (past) throw new DomainError('read_only', past);
    const refusal = gate.check(live.doc, update);
    if (refusal) throw invalid(`The change was refused: ${refusal}.`);
    try {
      store.applyPersonChange(live, personId, update);
    } catch (error) {
      gate.forget(live.doc);
      throw error;
    }
  }

  async function session(actor: Actor, documentId: unknown): Promise<LiveSession> {
    let current = await access(actor, documentId);
    const id = current.documentId;
    const name = await personName(db, actor.personId);
    let readOnlyReason: string | undefined;
    return {
      documentId: id,
      personId: actor.personId,
      name,
      get mayEdit() {
        return current.mayEdit && readOnlyReason === undefined;
      },
      get readOnlyReason() {
        return readOnlyReason;
      },
      async open() {
        const live = await store.open(id);
        readOnlyReason = overBoundReason(live) ?? undefined;
        return live;
      },
      apply(live, update) {
        applyChecked(live, actor.personId, current.mayEdit, update);
      },
      async recheck() {
        try {
          current = await access(actor, id);
          return current;
        } catch (error) {
          if (error instanceof DomainError && error.code === 'not_found') {
            current = { documentId: id, mayEdit: false };
            return null;
          }
          throw error;
        }
      },
    };
  }

  return { access, session, applyChecked, gate };
}
