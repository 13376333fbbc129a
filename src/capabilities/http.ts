import { z } from 'zod';
import { HTTP_CAPS, httpCall } from '../net/http-fetch.ts';
import { defineCapability, defineNamespace } from './capability.ts';

const HTTP_RULES =
  'Inside addresses (loopback, private, link-local, cloud metadata, multicast, broadcast, ' +
  'unspecified) are refused, checked after DNS resolution and again on each redirect ' +
  `(at most ${HTTP_CAPS.redirects} are followed), unless the host is listed in TANDEM_HTTP_ALLOW. ` +
  `The response body may be at most ${HTTP_CAPS.bodyBytes.toLocaleString('en-US')} bytes and the ` +
  `call may take at most ${HTTP_CAPS.seconds} s.`;

/** Plain HTTP calls, every address checked (src/net/http-fetch.ts). */
export const http = defineNamespace({
  namespace: 'http',
  name: 'HTTP',
  capabilities: [
    defineCapability({
      name: 'get',
      kind: 'read',
      describe: `GET an http or https URL. ${HTTP_RULES}`,
      input: z.strictObject({
        url: z.url(),
        headers: z.record(z.string(), z.string()).optional(),
      }),
      output: z.object({
        status: z.number(),
        headers: z.record(z.string(), z.string()),
        body: z.string(),
        json: z.unknown().optional(),
      }),
      large: true,
      run: (input, ctx) =>
        httpCall('GET', input, { allow: ctx.httpAllow, signal: ctx.signal, resolve: ctx.resolve }),
    }),
    defineCapability({
      name: 'post',
      kind: 'write',
      describe: `POST to an http or https URL. ${HTTP_RULES} Sent at most once: after a crash during the call the step fails with outcome unknown.`,
      input: z.strictObject({
        url: z.url(),
        json: z.unknown().optional(),
        body: z.string().optional(),
        headers: z.record(z.string(), z.string()).optional(),
      }),
      output: z.object({ status: z.number(), body: z.string(), json: z.unknown().optional() }),
      atMostOnce: true,
      run: (input, ctx) =>
        httpCall('POST', input, { allow: ctx.httpAllow, signal: ctx.signal, resolve: ctx.resolve }),
    }),
  ],
});
