import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiFailure } from './api.ts';

export interface Resource<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  loading: boolean;
  /** Loads again; the data shown stays until the new answer arrives. */
  reload: () => Promise<void>;
}

const asFailure = (error: unknown) =>
  error instanceof ApiFailure
    ? error
    : new ApiFailure(0, 'internal', 'Something went wrong on this page; reload it.');

/**
 * Data from the API for a page: loaded when `key` changes, and again on `reload`. An answer that
 * arrives after the page moved on to another key is dropped.
 */
export function useResource<T>(key: string, load: () => Promise<T>): Resource<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: ApiFailure }>({ key });
  const latest = useRef(key);
  const loader = useRef(load);
  // The newest loader is kept for the next load (effects run in order: this one first).
  useEffect(() => {
    loader.current = load;
  });

  const run = useCallback(async (forKey: string) => {
    try {
      const data = await loader.current();
      if (latest.current === forKey) setState({ key: forKey, data });
    } catch (error) {
      if (latest.current === forKey)
        setState((s) => ({
          key: forKey,
          data: s.key === forKey ? s.data : undefined,
          error: asFailure(error),
        }));
    }
  }, []);

  useEffect(() => {
    latest.current = key;
    void run(key);
  }, [key, run]);

  const current = state.key === key;
  return {
    data: current ? state.data : undefined,
    error: current ? state.error : undefined,
    loading: !current || (state.data === undefined && state.error === undefined),
    reload: () => run(key),
  };
}

/** Calls `tick` every `ms` while `active`, for pages that follow runs as they move. */
export function usePolling(active: boolean, ms: number, tick: () => Promise<unknown>): void {
  const saved = useRef(tick);
  useEffect(() => {
    saved.current = tick;
  });
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const next = () => {
      timer = setTimeout(async () => {
        await saved.current().catch(() => undefined);
        if (!stopped) next();
      }, ms);
    };
    next();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active, ms]);
}

/** The document's title: what the page shows, then the app. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Tandem`;
  }, [title]);
}

/** An action's state: running, and the sentence of its last failure. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiFailure | undefined>();
  const perform = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (failure) {
      setError(asFailure(failure));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, perform, clear: () => setError(undefined) };
}
