import type { Deps } from '../deps.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { allPlugins, type Catalogue } from '../../capabilities/catalogue.ts';
import { loadCatalogue } from './catalogue.ts';
import type { ConnectorPlugin } from '../../capabilities/capability.ts';

export interface AutomationOptions {
  /** Base of the `url` fields (the web app). */
  publicUrl?: string;
  /** Whether an OpenAI-compatible model is configured for agent nodes. */
  modelConfigured?: boolean;
  plugins?: ConnectorPlugin[];
}

export type Scope = 'personal' | 'workspace';
export type Notify = 'off' | 'problems' | 'everyRun';

/** What the parts of the automations service share: storage, connectors, links and the engine's wake-up. */
export interface AutomationsContext {
  deps: Deps;
  db: Deps['db'];
  options: AutomationOptions;
  plugins: ConnectorPlugin[];
  /** An automation's page in the web app. */
  urlOf(id: string): string;
  /** An approval's card on its session page, where a person decides it. */
  approvalUrlOf(sessionId: string, approvalId: string): string;
  /** The capabilities and events a person can use, as connected for them. */
  catalogueFor(actor: Pick<Actor, 'workspaceId' | 'personId'>, on?: Db): Promise<Catalogue>;
  /** Tells the engine that a transaction which queued or woke runs has committed. */
  queued(): void;
  /** Listens for `queued` (the engine does); returns the way to stop listening. */
  onQueued(listener: () => void): () => void;
}

export function automationsContext(deps: Deps, options: AutomationOptions): AutomationsContext {
  const { db } = deps;
  const plugins = allPlugins(options);
  const publicUrl = (options.publicUrl ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const listeners = new Set<() => void>();
  return {
    deps,
    db,
    options,
    plugins,
    urlOf: (id) => `${publicUrl}/automations/${id}`,
    approvalUrlOf: (sessionId, approvalId) => `${publicUrl}/sessions/${sessionId}#approval-${approvalId}`,
    catalogueFor: (actor, on = db) => loadCatalogue(on, actor.workspaceId, actor.personId, plugins),
    queued() {
      for (const listener of listeners) listener();
    },
    onQueued(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
