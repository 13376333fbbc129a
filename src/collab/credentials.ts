import { log } from '../observability/log.ts';
import type { Connection } from '@hocuspocus/server';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';

/** The credential a connection opened with, checked again while it is open. */
export interface HeldCredential {
  kind: Credential['kind'];
  credentialId: string;
  expiresAt: number | null;
}

interface Holder {
  actor: Actor;
  credential: HeldCredential | undefined;
}

/**
 * Watches the credentials open connections were opened with: every `everyMs`, and at once when
 * one ends in this process (or another instance says one ended), each is checked — a token
 * revoked or expired, a browser signed out or moved to another workspace, an OAuth grant revoked
 * or its token expired — and `ended` is called for every connection whose credential is gone.
 * One check per distinct credential a round.
 */
export function watchCredentials<C extends Holder>(
  services: Services,
  connections: Set<Connection<C>>,
  options: { everyMs: number; ended: (connection: Connection<C>) => void },
) {
  async function check(): Promise<void> {
    const now = Date.now();
    const verdicts = new Map<string, Promise<boolean>>();
    for (const connection of [...connections]) {
      const { credential, actor } = connection.context;
      if (!credential) continue;
      let alive = credential.expiresAt === null || credential.expiresAt > now;
      if (alive) {
        const key = `${credential.kind} ${credential.credentialId} ${actor.personId}`;
        let verdict = verdicts.get(key);
        if (!verdict) {
          verdict = services.credentials.stillValid(credential.kind, credential.credentialId, actor.personId);
          verdicts.set(key, verdict);
        }
        alive = await verdict;
      }
      if (alive || !connections.has(connection)) continue;
      connections.delete(connection);
      options.ended(connection);
    }
  }

  let checking: Promise<void> | undefined;
  let again = false;
  /** Checks now; a check asked for while one runs (which may have read too early) follows it. */
  function checkSoon(): void {
    if (checking) {
      again = true;
      return;
    }
    checking = check()
      .catch((error: unknown) => log.error({ err: error }, 'could not check live connections’ credentials'))
      .finally(() => {
        checking = undefined;
        if (again) {
          again = false;
          checkSoon();
        }
      });
  }

  const timer = setInterval(checkSoon, options.everyMs);
  timer.unref();
  const stopHearing = services.credentialEnds.on(() => checkSoon());

  return {
    /** Checks every connection's credential; resolves once done. */
    async checkNow(): Promise<void> {
      checkSoon();
      while (checking) await checking;
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      stopHearing();
      while (checking) await checking;
    },
  };
}
