import { HocuspocusProvider } from '@hocuspocus/provider';
import { useEffect, useState } from 'react';
import * as Y from 'yjs';
import { call } from '../api.ts';
import { collabTicket } from '../../../src/contract/documents.ts';
import { me } from '../../../src/contract/people.ts';

/** Someone connected to the document, as awareness shows them (agents included). */
export interface Present {
  clientId: number;
  name: string;
  agent: boolean;
  forName?: string;
  writing: boolean;
  self: boolean;
  cursor?: { anchor: number; head: number };
}

export interface Live {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  /** Connected and holding the document's text. */
  synced: boolean;
  /** What the socket allows: editing or following. */
  scope: 'read-write' | 'readonly' | undefined;
  connected: boolean;
  failed?: string;
  /** Why the document follows read-only although the person may edit it (it is past its size bounds). */
  readOnlyReason?: string;
  /** The person can no longer open the document (its sharing changed): the server closed it. */
  gone?: boolean;
  people: Present[];
}

/** The reason the server gives when the person can no longer open the document. */
const NOT_FOUND = 'Document not found';

/** A colour class for a connected client (c0 … c7; editor.css defines them). */
export const colorOf = (clientId: number) => `c${clientId % 8}`;

/** A one-minute ticket for the live socket (the socket never sees the browser's cookie). */
async function ticket(documentId: string): Promise<string> {
  // Not `call`: a refused ticket is the editor's to show, not a trip to sign-in.
  const response = await fetch(`/api${collabTicket.path}`, {
    method: collabTicket.method,
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ document_id: documentId }),
  });
  if (!response.ok) throw new Error(`no ticket (${response.status})`);
  return collabTicket.output.parse(await response.json()).ticket;
}

function peopleOf(provider: HocuspocusProvider): Present[] {
  const awareness = provider.awareness;
  if (!awareness) return [];
  const out: Present[] = [];
  for (const [clientId, state] of awareness.getStates()) {
    const user = (state as { user?: { name?: unknown; agent?: unknown; for?: unknown } }).user;
    if (!user || typeof user.name !== 'string') continue;
    const cursor = (state as { cursor?: { anchor?: unknown; head?: unknown } }).cursor;
    const writing = (state as { writing?: unknown }).writing;
    out.push({
      clientId,
      name: user.name,
      agent: user.agent === true,
      ...(typeof user.for === 'string' ? { forName: user.for } : {}),
      writing: Array.isArray(writing) && writing.length > 0,
      self: clientId === awareness.clientID,
      ...(cursor && typeof cursor.anchor === 'number' && typeof cursor.head === 'number'
        ? { cursor: { anchor: cursor.anchor, head: cursor.head } }
        : {}),
    });
  }
  return out.sort((a, b) => Number(b.self) - Number(a.self) || a.name.localeCompare(b.name));
}

/**
 * The document's shared state over the live socket, for as long as the page shows it; nothing
 * (and no socket) without a document id: tables and pages are not live documents.
 */
export function useLive(documentId: string | undefined): Live | undefined {
  const [live, setLive] = useState<Live | undefined>();
  useEffect(() => {
    if (documentId === undefined) return;
    const doc = new Y.Doc();
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/collab`;
    let current: Live | undefined;
    const update = (patch: Partial<Live>) => {
      if (!current) return;
      current = { ...current, ...patch };
      setLive(current);
    };
    const provider = new HocuspocusProvider({
      url,
      name: documentId,
      document: doc,
      token: () => ticket(documentId),
      onSynced: () => update({ synced: true, scope: provider.authorizedScope, failed: undefined }),
      onStatus: ({ status }) => update({ connected: status === 'connected' }),
      onAuthenticationFailed: () =>
        update({ failed: 'The live document could not be opened; reload the page to try again.' }),
      onAwarenessChange: () => update({ people: peopleOf(provider) }),
      // The server says why a document is read-only, why it refused a change (and closed), or
      // that sharing gave or took away editing while connected.
      onStateless: ({ payload }) => {
        let said: { readOnly?: unknown; refused?: unknown; access?: unknown } = {};
        try {
          said = JSON.parse(payload) as typeof said;
        } catch {
          return;
        }
        if (typeof said.readOnly === 'string') update({ readOnlyReason: said.readOnly });
        if (typeof said.refused === 'string') {
          update({ failed: `Your last change was refused (${said.refused}); reload the page to go on.` });
        }
        if (said.access === 'readonly' || said.access === 'read-write') update({ scope: said.access });
      },
      onClose: ({ event }) => {
        if (event.reason !== NOT_FOUND) return;
        update({ gone: true, synced: false, connected: false });
        // Not from inside the provider's own handler; nothing reconnects to it.
        setTimeout(() => provider.destroy(), 0);
      },
    });
    current = { doc, provider, synced: false, scope: undefined, connected: false, people: [] };
    // The server names everyone by who they signed in as; this editor says so of itself too
    // (its own state is not sent back to it).
    call(me, {}).then(
      (person) => {
        if (current) provider.setAwarenessField('user', { name: person.name });
      },
      () => undefined,
    );
    // The provider opens a socket, so it is made here and shown once made.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setLive(current);
    return () => {
      current = undefined;
      provider.destroy();
      doc.destroy();
    };
  }, [documentId]);
  return documentId === undefined ? undefined : live;
}
