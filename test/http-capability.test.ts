import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { checkedAddresses, httpCall, type HttpOptions, type Resolver } from '../src/net/http-fetch.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';
import { serviceRoutes, standIn, type Flood, type StandIn } from './support/stand-in.ts';

type Json = Record<string, unknown>;

const MB = 1_000_000;

/** A resolver standing in for DNS: fixed answers, and a count of the names asked. */
function resolver(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (name: string) => {
    asked.push(name);
    return (answers[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

async function refusal(call: Promise<unknown>): Promise<string> {
  const error = (await call.then(
    () => assert.fail('the call was expected to fail'),
    (e: unknown) => e,
  )) as Error;
  assert.equal(error.name === 'StepError' || error.name === 'LimitError', true, String(error.stack));
  return error.message;
}

describe('http calls', () => {
  let listed: StandIn;
  let other: StandIn;
  let inside: StandIn;
  const floods: Flood[] = [];
  const options = (more: Partial<HttpOptions> = {}): HttpOptions => ({
    allow: [listed.host, other.host],
    signal: new AbortController().signal,
    ...more,
  });

  before(async () => {
    listed = await standIn(serviceRoutes(floods));
    other = await standIn(serviceRoutes(floods));
    inside = await standIn((_req, res) => res.end('an inside secret'));
  });
  after(() => Promise.all([listed.close(), other.close(), inside.close()]));

  it('reaches a listed host and returns its status, headers and JSON', async () => {
    const result = await httpCall('GET', { url: listed.url('/ok') }, options());
    assert.equal(result.status, 200);
    assert.deepEqual(result.json, { hello: 'world' });
    assert.equal((result.headers as Json)['x-stand-in'], 'yes');
  });

  it('stops reading an endless body once it passes 1,000,000 bytes, and hangs up', async () => {
    const started = Date.now();
    const message = await refusal(httpCall('GET', { url: listed.url('/flood') }, options()));
    assert.match(message, /larger than the 1,000,000-byte cap on http responses/);
    assert.ok(Date.now() - started < 5000, 'it stops at once rather than at the time cap');
    const state = floods.at(-1)!;
    assert.equal(await state.closedEarly, true, 'the connection was cut');
    assert.ok(state.sent < 32 * MB, `only what the socket buffers held was sent (${state.sent} bytes)`);
  });

  it('refuses a 1.5 MB body whether its length is declared or not, and counts decompressed bytes', async () => {
    for (const path of ['/big', '/big-chunked', '/bomb']) {
      const message = await refusal(httpCall('GET', { url: listed.url(path) }, options()));
      assert.match(message, /1,000,000-byte cap/, path);
    }
    const zipped = await httpCall('GET', { url: listed.url('/gzip') }, options());
    assert.deepEqual(zipped.json, { zipped: true });
  });

  it('caps the time for the headers and for the whole body, naming the cap', async () => {
    const quick = options({ timeCapMs: 300 });
    const headers = await refusal(httpCall('GET', { url: listed.url('/stall-headers') }, quick));
    assert.match(headers, /longer than the 0.3 s cap on http calls \(waiting for the response headers\)/);
    const body = await refusal(httpCall('GET', { url: listed.url('/stall-body') }, quick));
    assert.match(body, /longer than the 0.3 s cap on http calls \(reading the body\)/);
  });

  it('refuses a name that resolves inside, checked after DNS', async () => {
    const dns = resolver({ 'files.example.com': ['127.0.0.1'], 'mapped.example.com': ['::ffff:127.0.0.1'] });
    const url = (name: string) => `http://${name}:${inside.port}/`;
    const plain = await refusal(
      httpCall('GET', { url: url('files.example.com') }, options({ resolve: dns })),
    );
    assert.match(plain, /files\.example\.com resolves to 127\.0\.0\.1, a loopback address/);
    assert.match(plain, /not on the allow list \(add it to TANDEM_HTTP_ALLOW/);
    const mapped = await refusal(
      httpCall('POST', { url: url('mapped.example.com') }, options({ resolve: dns })),
    );
    assert.match(
      mapped,
      /resolves to ::ffff:127\.0\.0\.1, a loopback address \(127\.0\.0\.1\) in IPv4-mapped/,
    );
    assert.deepEqual(inside.received, [], 'nothing reached the inside service');
  });

  it('checks every address a name resolves to; a public host needs no listing', async () => {
    // Only resolved and checked here: nothing connects to these addresses.
    const dns = resolver({
      'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
      'metadata.example.com': ['169.254.169.254'],
      'v6.example.com': ['fe80::1'],
      'public.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    });
    const check = (name: string) => checkedAddresses(new URL(`https://${name}/`), [], dns);
    assert.match(await refusal(check('mixed.example.com')), /resolves to 10\.0\.0\.7, a private address/);
    assert.match(
      await refusal(check('metadata.example.com')),
      /169\.254\.169\.254, the cloud metadata address/,
    );
    assert.match(await refusal(check('v6.example.com')), /fe80::1, a link-local address/);
    const publicAddresses = await check('public.example.com');
    assert.deepEqual(
      publicAddresses.map((a) => a.address),
      ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    );
  });

  it('connects to the address it checked, without asking DNS again', async () => {
    // .test names never resolve in real DNS: the call can only work through the checked address.
    const dns = resolver({ 'service.test': ['127.0.0.1'] });
    const url = `http://service.test:${listed.port}/echo`;
    const result = await httpCall(
      'GET',
      { url },
      options({ allow: [`service.test:${listed.port}`], resolve: dns }),
    );
    assert.equal(result.status, 200);
    assert.equal(((result.json as Json).headers as Json).host, `service.test:${listed.port}`);
    assert.deepEqual(dns.asked, ['service.test']);
  });

  it('refuses loopback in every spelling of an address', async () => {
    const port = inside.port;
    const spellings = ['127.0.0.1', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]'];
    for (const host of [...spellings, '[::ffff:7f00:1]', '[::1]', '[64:ff9b::7f00:1]', '0.0.0.0']) {
      const message = await refusal(httpCall('GET', { url: `http://${host}:${port}/` }, options()));
      assert.match(message, /is (a loopback|the unspecified|an unspecified)/, host);
      assert.match(message, /TANDEM_HTTP_ALLOW/, host);
    }
    assert.deepEqual(inside.received, []);
  });

  it('refuses cloud metadata host names without resolving them', async () => {
    const dns = resolver({ 'metadata.google.internal': ['127.0.0.1'] });
    for (const host of ['metadata.google.internal', 'METADATA.google.internal.', 'instance-data']) {
      const message = await refusal(httpCall('GET', { url: `http://${host}/` }, options({ resolve: dns })));
      assert.match(message, /is a cloud metadata host/, host);
    }
    assert.deepEqual(dns.asked, []);
  });

  it('reaches only http and https URLs, and never repeats credentials', async () => {
    for (const url of ['ftp://files.example.com/a', 'file:///etc/passwd'])
      assert.match(await refusal(httpCall('GET', { url }, options())), /only http and https URLs/);
    const withPassword = `http://ada:hunter2@${listed.host}/ok`;
    const message = await refusal(httpCall('GET', { url: withPassword }, options()));
    assert.match(message, /carries a user name or password; send credentials in a header/);
    assert.doesNotMatch(message, /hunter2|ada:/);
  });

  it('checks every redirect hop again', async () => {
    const via = (to: string) => listed.url(`/redirect?to=${encodeURIComponent(to)}`);
    for (const to of [
      inside.url('/'),
      `http://localhost:${inside.port}/`,
      `http://[::ffff:7f00:1]:${inside.port}/`,
    ]) {
      const message = await refusal(httpCall('GET', { url: via(to) }, options()));
      assert.match(
        message,
        new RegExp(`GET ${listed.host}, redirected to .*${inside.port} refused: .*loopback`),
        to,
      );
    }
    assert.match(
      await refusal(httpCall('GET', { url: via('file:///etc/passwd') }, options())),
      /file scheme/,
    );
    assert.deepEqual(inside.received, []);
  });

  it('follows at most five redirects', async () => {
    const five = await httpCall('GET', { url: listed.url('/hops/5') }, options());
    assert.equal(five.body, 'arrived');
    const six = await refusal(httpCall('GET', { url: listed.url('/hops/6') }, options()));
    assert.match(six, /at most 5 redirects are followed/);
  });

  it('keeps a POST through 307, turns it into a GET on 303, and keeps credentials to their origin', async () => {
    const post = (status: number, to: string) =>
      httpCall(
        'POST',
        {
          url: listed.url(`/redirect?status=${status}&to=${encodeURIComponent(to)}`),
          json: { n: 1 },
          headers: { Authorization: 'Bearer secret' },
        },
        options(),
      );
    const kept = (await post(307, '/echo')).json as Json;
    assert.equal(kept.method, 'POST');
    assert.equal(kept.body, '{"n":1}');
    assert.equal((kept.headers as Json).authorization, 'Bearer secret');
    const seeOther = (await post(303, '/echo')).json as Json;
    assert.equal(seeOther.method, 'GET');
    assert.equal(seeOther.body, '');
    const elsewhere = (await post(307, other.url('/echo'))).json as Json;
    assert.equal(elsewhere.method, 'POST');
    assert.equal((elsewhere.headers as Json).authorization, undefined);
  });
});

for (const db of DATABASES) {
  describe(`http capabilities in runs on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let listed: StandIn;
    let inside: StandIn;
    const floods: Flood[] = [];
    let counter = 0;

    before(async () => {
      listed = await standIn(serviceRoutes(floods));
      inside = await standIn((_req, res) => res.end('an inside secret'));
      h = await setup(db);
      engine = createEngine(h.services, { leaseMs: 5000, httpAllow: [listed.host] });
      ada = await h.as('ada@acme.test');
    });
    after(async () => {
      await engine.stop();
      await h.close();
      await Promise.all([listed.close(), inside.close()]);
    });

    /** Publishes a one-step automation that GETs `url`, runs it and returns the run. */
    async function get(url: string) {
      const fetchNode = {
        id: 'fetch',
        kind: 'capability',
        capability: 'http.get',
        input: { url: { kind: 'literal', value: url } },
      };
      const plan = {
        planVersion: 1,
        name: 'Fetch',
        description: 'Fetches a URL.',
        nodes: [fetchNode],
        edges: [],
      };
      const drafted = ok(await ada.call('draft_automation', { plan_json: plan, ask: 'Fetch it.' }));
      counter += 1;
      const published = ok(
        await ada.call('edit_automation', {
          action: 'publish',
          flow_version_id: drafted.flow_version_id,
          name: `Fetch ${counter}`,
          trigger: { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' },
        }),
      );
      const automation_id = published.automation_id as string;
      const started = ok(await ada.call('edit_automation', { action: 'run', automation_id }));
      await engine.drain();
      const read = ok(await ada.call('read_automation', { automation_id, run_id: started.run_id }));
      return read.run as { status: string; nodes: { status: string; error?: string }[]; output?: Json };
    }

    it('stops a GET of an endless body at the cap and fails the step naming it', async () => {
      const run = await get(listed.url('/flood'));
      assert.equal(run.status, 'failed');
      assert.match(run.nodes[0]!.error ?? '', /larger than the 1,000,000-byte cap on http responses/);
      assert.equal(await floods.at(-1)!.closedEarly, true);
    });

    it('refuses inside addresses in any spelling, after DNS and after a redirect', async () => {
      const urls = [
        inside.url('/'),
        `http://localhost:${inside.port}/`,
        `http://[::ffff:127.0.0.1]:${inside.port}/`,
        `http://2130706433:${inside.port}/`,
        listed.url(`/redirect?to=${encodeURIComponent(inside.url('/'))}`),
      ];
      for (const url of urls) {
        const run = await get(url);
        assert.equal(run.status, 'failed', url);
        assert.match(run.nodes[0]!.error ?? '', /loopback address.*add it to TANDEM_HTTP_ALLOW/, url);
      }
      assert.deepEqual(inside.received, []);
    });

    it('follows redirects on a listed host', async () => {
      const run = await get(listed.url('/hops/2'));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal((run.output?.fetch as Json).body, 'arrived');
    });
  });
}
