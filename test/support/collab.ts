import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import * as Y from 'yjs';
import { projection } from '../../src/domains/documents/model.ts';
import type { Scope } from '../../src/domains/workspace/actor.ts';
import type { RunningServer } from '../../src/server.ts';
import type { ServiceOptions, Services } from '../../src/services.ts';
import type { TestDatabase } from './databases.ts';
import { setup, type Harness } from './harness.ts';
import { until } from './instances.ts';
import { startOnFreePorts } from './raw-http.ts';

export { until };

/** A person's editor connected to the live socket: its replica and its provider. */
export interface Editor {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  /** Resolves once the first sync is done; rejects with the refusal's reason. */
  ready: Promise<void>;
  /** The markdown the editor shows. */
  text(): string;
  /** No change of its own waits for the server's acknowledgement. */
  acknowledged(): boolean;
  close(): void;
}

/** A provider on `url` for `name`, as a browser's editor makes one. */
export function connectEditor(url: string, name: string, token: string, doc = new Y.Doc()): Editor {
  let fail: (reason: Error) => void = () => undefined;
  let done: () => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  // One socket per editor, as separate browsers have; it does not come back on its own.
  const socket = new HocuspocusProviderWebsocket({ url, maxAttempts: 1 });
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name,
    token,
    document: doc,
    onSynced: () => done(),
    onAuthenticationFailed: ({ reason }) => fail(new Error(reason)),
  });
  provider.attach();
  ready.catch(() => undefined);
  return {
    doc,
    provider,
    ready,
    text: () => projection(doc),
    acknowledged: () => provider.synced && !provider.hasUnsyncedChanges,
    close() {
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
}

/** The real server over the test fixture, with the live socket and a way to connect editors. */
export async function openLive(db: TestDatabase, options: ServiceOptions = {}) {
  const h: Harness = await setup(db, options);
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-collab-'));
  const server: RunningServer = await startOnFreePorts(h.services, dataDir);
  const url = `${server.url.replace(/^http/, 'ws')}/collab`;
  const editors: Editor[] = [];
  return {
    h,
    server,
    url,
    services: (): Services => h.services,
    async tokenFor(email: string, scopes?: Scope[]): Promise<string> {
      const actor = h.actor(email);
      const made = await h.services.tokens.create(
        actor.personId,
        actor.workspaceId,
        scopes ?? [...actor.scopes],
        3_600_000,
      );
      return made.token;
    },
    editor(name: string, token: string, doc?: Y.Doc): Editor {
      const editor = connectEditor(url, name, token, doc);
      editors.push(editor);
      return editor;
    },
    async close() {
      for (const e of editors) e.close();
      await server.close();
      await h.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The Y.Text of the first block of an editor's replica whose text contains `containing`. */
export function blockTextIn(doc: Y.Doc, containing: string): Y.Text {
  for (const map of doc.getArray<Y.Map<unknown>>('blocks').toArray()) {
    const text = map.get('text') as Y.Text;
    if (map.get('deleted') !== true && text.toString().includes(containing)) return text;
  }
  throw new Error(`no block containing ${JSON.stringify(containing)}`);
}
