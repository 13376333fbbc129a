import { DomainError, invalid, notFound } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { personName } from '../workspace/artifacts.ts';
import { roleRank } from '../policies/roles.ts';
import type { LiveDoc } from './live-doc.ts';
import { refusePersonUpdate } from './person-update.ts';
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
export function liveDocuments(deps: Deps, store: DocumentStore) {
  const { db } = deps;

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
    const refusal = refusePersonUpdate(live.doc, update);
    if (refusal) throw invalid(`The change was refused: ${refusal}.`);
    store.applyPersonChange(live, personId, update);
  }

  async function session(actor: Actor, documentId: unknown): Promise<LiveSession> {
    let current = await access(actor, documentId);
    const id = current.documentId;
    const name = await personName(db, actor.personId);
    return {
      documentId: id,
      personId: actor.personId,
      name,
      get mayEdit() {
        return current.mayEdit;
      },
      open: () => store.open(id),
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

  return { access, session, applyChecked };
}
