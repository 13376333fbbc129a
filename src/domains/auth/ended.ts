/**
 * Says that credentials ended in this process (a token revoked, a browser signed out, an OAuth
 * grant revoked), so whoever holds connections opened with one (the live socket) checks them at
 * once. `remote` marks news another instance sent, not to be passed on again.
 */
export function credentialEnds() {
  const listeners = new Set<(remote: boolean) => void>();
  return {
    on(listener: (remote: boolean) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    tell(remote = false): void {
      for (const listener of listeners) listener(remote);
    },
  };
}

export type CredentialEnds = ReturnType<typeof credentialEnds>;
