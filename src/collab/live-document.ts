import { Document, isTransactionOrigin, type Connection } from '@hocuspocus/server';
import type { LiveDoc, LiveDocHooks } from '../domains/documents/store.ts';

/** What the socket knows of a connection: who is connected (see socket.ts). */
export interface ConnectionContext {
  name: string;
}

/** The most one person's awareness state may hold, as JSON. */
const MAX_AWARENESS_CHARS = 4096;
/** Awareness clients one connection may have (a provider has one). */
const MAX_CLIENTS_PER_CONNECTION = 4;

/**
 * What a person's editor says of them (cursor, selection, colour) reaches the others, under
 * the name they signed in with: nobody poses as someone else or as an agent, or speaks for
 * another connection's clients.
 */
function checkAwareness(doc: Document, states: Map<number, Record<string, unknown>>, origin: unknown) {
  if (!isTransactionOrigin(origin) || origin.source !== 'connection') return Promise.resolve();
  const connection: Connection = origin.connection;
  const own = doc.getClients(connection);
  const name = (connection.context as ConnectionContext).name;
  let room = MAX_CLIENTS_PER_CONNECTION - own.size;
  for (const [client, state] of states) {
    // A client no one here speaks for and no state stands for (another instance's people have
    // theirs): a new editor, or one that came back after its connection dropped.
    const free =
      client !== doc.clientID &&
      !doc.awareness.getStates().has(client) &&
      !doc.getConnections().some((c) => c !== connection && doc.getClients(c).has(client));
    if (!own.has(client) && !(free && room-- > 0)) {
      states.delete(client);
      continue;
    }
    const { writing: _writing, user, ...rest } = state;
    const said = typeof user === 'object' && user !== null ? (user as Record<string, unknown>) : {};
    const { agent: _agent, for: _for, ...others } = said;
    const checked = { ...rest, user: { ...others, name } };
    if (JSON.stringify(checked).length > MAX_AWARENESS_CHARS) {
      states.delete(client);
      continue;
    }
    states.set(client, checked);
  }
  return Promise.resolve();
}

/**
 * Documents as the live socket holds them: each store document is a Hocuspocus document, so the
 * one Yjs document agents write to is the one connections sync with and see awareness on.
 */
export const liveDocumentHooks: LiveDocHooks = {
  newDoc(id) {
    const doc = new Document(id);
    doc.isLoading = false;
    doc.beforeHandleAwareness((_doc, states, origin) => checkAwareness(doc, states, origin));
    return doc;
  },
  inUse: (live: LiveDoc) => live.doc instanceof Document && live.doc.getConnectionsCount() > 0,
  writing(live, writer) {
    if (!(live.doc instanceof Document)) return;
    const { awareness } = live.doc;
    if (writer) {
      awareness.setLocalState({
        user: { name: writer.name, agent: true, for: writer.for },
        writing: writer.blocks,
      });
    } else if (awareness.getLocalState() !== null) {
      awareness.setLocalState(null);
    }
  },
};
