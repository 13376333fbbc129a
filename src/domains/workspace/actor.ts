import { invalid } from '../../errors.ts';

/** Who is acting: a person of one workspace, with the scopes their credential carries. */
export interface Actor {
  personId: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /**
   * `agent` when an agent acts for the person, as the way the call came in says: the MCP adapter
   * (HTTP or stdio) and a mention's agent set it. Absent when the person acts themselves (the
   * app's session, the JSON API, the CLI, their automations' runs).
   */
  by?: ActedBy;
  /** What the call came through, for the activity history: a token, an app, the command line. */
  via?: Via;
}

/** The credential a call came through: a personal access token, an OAuth app (its client id), the command line. */
export interface Via {
  kind: 'token' | 'oauth' | 'session' | 'local';
  id: string | null;
}

/** Whether a person did something themselves or an agent did it for them. */
export type ActedBy = 'person' | 'agent';

export const actedBy = (actor: Pick<Actor, 'by'>): ActedBy => actor.by ?? 'person';

export const SCOPES = ['automations:read', 'automations:write', 'documents:read', 'documents:write'] as const;
export type Scope = (typeof SCOPES)[number];

export function parseScopes(list: string): Scope[] {
  const parts = list
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0) throw invalid(`no scopes given; use any of ${SCOPES.join(', ')}`);
  for (const p of parts) {
    if (!(SCOPES as readonly string[]).includes(p)) {
      throw invalid(`unknown scope "${p}"; use any of ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(parts)] as Scope[];
}
