import {
  apiError,
  fillPath,
  type BodyOf,
  type Endpoint,
  type OutputOf,
  type PathParams,
  type PlanProblem,
  type QueryArgs,
} from '../../src/contract/endpoint.ts';

/** Why a call failed, in one sentence a person can act on; `errors` lists a refused plan's problems. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: PlanProblem[];

  constructor(status: number, code: string, message: string, errors: PlanProblem[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = errors;
  }

  /** "Does not exist" and "you cannot see it" are one answer. */
  get notFound(): boolean {
    return this.status === 404;
  }
}

type Args<E extends Endpoint> = (keyof PathParams<E['path']> extends never
  ? { params?: undefined }
  : { params: PathParams<E['path']> }) & {
  query?: QueryArgs<E>;
} & (BodyOf<E> extends undefined ? { body?: undefined } : { body: BodyOf<E> });

function queryString(query: Record<string, unknown> | undefined): string {
  const pairs = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== '');
  return pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, String(v)])).toString()}` : '';
}

/** Sends the person to sign in, and back here afterwards. */
export function signIn(): void {
  const next = `${location.pathname}${location.search}`;
  location.assign(`/login?next=${encodeURIComponent(next)}`);
}

/**
 * Calls one endpoint of the JSON API and returns its answer checked against the shared contract.
 * Every failure becomes an `ApiFailure` with one sentence; a lost session goes back to sign-in.
 */
export async function call<E extends Endpoint>(endpoint: E, args: Args<E>): Promise<OutputOf<E>> {
  const path = fillPath(endpoint.path, (args.params ?? {}) as Record<string, string>);
  const url = `/api${path}${queryString(args.query as Record<string, unknown> | undefined)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: endpoint.method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(args.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(args.body !== undefined ? { body: JSON.stringify(args.body) } : {}),
    });
  } catch {
    throw new ApiFailure(0, 'offline', 'Tandem could not be reached; check your connection and try again.');
  }
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    json = undefined;
  }
  if (response.status === 401) {
    signIn();
    throw new ApiFailure(401, 'unauthenticated', 'Your session has ended; sign in again.');
  }
  if (!response.ok) {
    const refusal = apiError.safeParse(json);
    if (refusal.success) {
      throw new ApiFailure(response.status, refusal.data.error, refusal.data.message, refusal.data.errors);
    }
    throw new ApiFailure(
      response.status,
      'internal',
      response.status >= 500
        ? 'Tandem hit an unexpected error; try again in a moment.'
        : `Tandem refused the request (HTTP ${response.status}).`,
    );
  }
  const parsed = endpoint.output.safeParse(json);
  if (!parsed.success) {
    throw new ApiFailure(
      response.status,
      'bad_answer',
      'Tandem answered in a form this page does not understand; reload the page.',
    );
  }
  return parsed.data as OutputOf<E>;
}
