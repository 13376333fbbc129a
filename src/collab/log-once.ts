/**
 * Logs each kind of trouble once per owner (a socket, a connection): a client that keeps
 * sending what is refused does not flood the log.
 */
export function onceEach() {
  const seen = new WeakMap<object, Set<string>>();
  return (owner: object, kind: string, log: () => void): void => {
    let kinds = seen.get(owner);
    if (!kinds) seen.set(owner, (kinds = new Set()));
    if (kinds.has(kind)) return;
    kinds.add(kind);
    log();
  };
}
