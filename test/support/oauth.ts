import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** A browser's cookies for one origin, kept by hand for plain fetch calls. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';', 1);
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}

/** A browser without a browser: follows nothing by itself, sends and keeps cookies, posts forms from the app. */
export function fakeBrowser(origin: string) {
  const jar = new CookieJar();
  async function request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (jar.header()) headers.set('cookie', jar.header());
    const response = await fetch(new URL(url, origin), { ...init, headers, redirect: 'manual' });
    jar.take(response);
    return response;
  }
  return {
    jar,
    get: (url: string) => request(url),
    /** A form posted from the app's own pages. */
    post: (url: string, form: Record<string, string>) =>
      request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams(form).toString(),
      }),
    /** Follows redirects on `origin` until one leaves it (or a page answers); returns that response. */
    async follow(url: string): Promise<Response> {
      let response = await request(url);
      for (let i = 0; i < 10 && response.status >= 300 && response.status < 400; i++) {
        const next = new URL(response.headers.get('location')!, response.url || url);
        if (next.origin !== new URL(origin).origin) return response;
        await response.body?.cancel();
        response = await request(next.href);
      }
      return response;
    },
  };
}

export type FakeBrowser = ReturnType<typeof fakeBrowser>;

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

/** Registers a public client by Dynamic Client Registration; returns its client_id. */
export async function registerClient(
  origin: string,
  redirectUri: string,
  name = 'Test client',
): Promise<string> {
  const res = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      // As the MCP SDK registers: the scope it starts with (which must not cap later step-ups).
      scope: 'documents:read',
    }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { client_id: string }).client_id;
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  /** null leaves `scope` out of the request. */
  scope?: string | null;
  challenge?: string | undefined;
  method?: string;
  resource?: string;
  state?: string;
}

export function authorizeUrl(origin: string, r: AuthorizeRequest): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    state: r.state ?? 'st-1',
  });
  if (r.scope !== null) params.set('scope', r.scope ?? 'documents:read');
  if (r.challenge !== undefined) {
    params.set('code_challenge', r.challenge);
    params.set('code_challenge_method', r.method ?? 'S256');
  }
  if (r.resource) params.set('resource', r.resource);
  return `${origin}/oauth/authorize?${params}`;
}

/** Signs in on /login with the fake browser. */
export async function signIn(browser: FakeBrowser, email: string, password: string) {
  const res = await browser.post('/login', { email, password, next: '/' });
  assert.equal(res.status, 303, await res.text());
  return res;
}

/** The hidden and chosen fields of the consent page, as a browser would post them. */
export function consentForm(html: string): Record<string, string> {
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const unescape = (text: string) =>
    text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  return {
    workspace_shown: value('workspace_shown'),
    scopes_shown: value('scopes_shown'),
    redirect_shown: unescape(value('redirect_shown')),
  };
}

/** The scopes a consent page lists, in its own words. */
export function listedScopes(html: string): string[] {
  const list = /<ul aria-labelledby="asked">(.*?)<\/ul>/s.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!);
}

/**
 * Runs an authorization request through sign-in and consent with the fake browser (already
 * signed in) and returns the redirect back to the client as a URL (code or error, with iss).
 */
export async function authorize(
  browser: FakeBrowser,
  url: string,
  decision: 'allow' | 'deny' = 'allow',
): Promise<{ callback: URL; consent: string | undefined }> {
  let res = await browser.follow(url);
  let consent: string | undefined;
  if (res.status === 200) {
    consent = await res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(consent)?.[1];
    assert.ok(action, `a consent form: ${consent}`);
    res = await browser.post(action.replaceAll('&#47;', '/'), { ...consentForm(consent), decision });
    assert.equal(res.status, 303, await res.clone().text());
    res = await browser.follow(res.headers.get('location')!);
  }
  assert.ok(
    res.status >= 300 && res.status < 400,
    `a redirect back to the client, not ${res.status}: ${await res.text()}`,
  );
  return { callback: new URL(res.headers.get('location')!), consent };
}

export async function exchangeCode(origin: string, body: Record<string, string>) {
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', ...body }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

export async function refresh(origin: string, clientId: string, refreshToken: string) {
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: refreshToken,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A JSON-RPC call to /mcp with a bearer token: the status and the WWW-Authenticate challenge. */
export async function mcpCall(origin: string, token: string, method = 'tools/list', params: object = {}) {
  const res = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate'), text };
}

/** A client's metadata document served on this machine (Client ID Metadata Document). */
export async function serveClientDocument(
  document: (clientId: string) => Record<string, unknown>,
): Promise<{ clientId: string; hits: () => number; close(): Promise<void>; server: Server }> {
  let hits = 0;
  let clientId = '';
  const server = createServer((req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(document(clientId)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  clientId = `http://127.0.0.1:${(server.address() as { port: number }).port}/client.json`;
  return {
    clientId,
    hits: () => hits,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
