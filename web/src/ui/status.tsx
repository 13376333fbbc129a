import { Link } from 'react-router';
import type { ApiFailure } from '../api.ts';
import { useTitle } from '../hooks.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** The one sentence that says what went wrong. */
export function ErrorNote({ error }: { error: ApiFailure | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error.message}
    </p>
  );
}

/** The page for an id that does not exist or that the person cannot open: the two look the same. */
export function NotFound({ what }: { what: string }) {
  useTitle(`${what} not found`);
  return (
    <section className="not-found">
      <h1>{what} not found</h1>
      <p>There is no {what.toLowerCase()} at this address that you can open.</p>
      <p>
        <Link to="/">Go to Home</Link>
      </p>
    </section>
  );
}

/** What a page shows when loading it failed: not found, or the sentence saying why. */
export function LoadFailure({ error, what }: { error: ApiFailure; what: string }) {
  useTitle(error.notFound ? `${what} not found` : `${what}: failed to load`);
  if (error.notFound) return <NotFound what={what} />;
  return (
    <section>
      <h1>{what}</h1>
      <ErrorNote error={error} />
    </section>
  );
}
