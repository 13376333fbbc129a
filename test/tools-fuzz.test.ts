import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { stateDigest } from './support/digest.ts';
import { setup, type Harness } from './support/harness.ts';
import { startTestServer } from './support/http-server.ts';
import { testFixture } from './support/fixture.ts';
import { ok } from './support/results.ts';
import { argumentsFor, type Hints, type JsonSchema } from './support/schema-arbitrary.ts';

/** Calls per database; the whole file stays well under a minute on two cores. */
const RUNS = Number(process.env.TANDEM_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.TANDEM_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** No call may take longer than this, however hostile its arguments. */
const CALL_BOUND_MS = 15_000;
/** The HTTP transport refuses bodies past 4 MiB before any tool sees them; stay under it. */
const MAX_BODY_BYTES = 3_500_000;

/** Optional fields that some modes and actions need, so sent more often than the rest. */
const OFTEN = new Set([
  'section_excerpt',
  'expected_version',
  'automation_id',
  'flow_version_id',
  'trigger',
  'enabled',
]);
const MADE_UP = ['doc_0000000000zzzzzzzzzzzzzzzz', 'aut_0000000000zzzzzzzzzzzzzzzz', '', 'x'.repeat(300)];
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 1, hour: 8, minute: 0, timezone: 'UTC' };
const ON_DOCUMENT = { kind: 'connector_event', provider: 'workspace', event: 'document.created' };
const LIST_PLAN = {
  planVersion: 1,
  name: 'Census',
  description: 'Count the documents.',
  nodes: [
    { id: 'list', kind: 'capability', capability: 'documents.list_documents', input: {} },
    {
      id: 'count',
      kind: 'transform',
      op: 'count',
      input: { items: { kind: 'ref', node: 'list', path: 'documents' } },
    },
  ],
  edges: [{ from: 'list', to: 'count' }],
};

/** Arguments as one short line: long strings cut, deep values elided. */
function brief(args: Record<string, unknown>): string {
  const depthOf = new WeakMap<object, number>();
  return JSON.stringify(args, function (this: unknown, _key, value: unknown) {
    const depth = this && typeof this === 'object' ? (depthOf.get(this) ?? 0) + 1 : 0;
    if (typeof value === 'string' && value.length > 80)
      return `${value.slice(0, 40)}…(${value.length} characters)`;
    if (value && typeof value === 'object') {
      if (depth > 6) return '…(nested deeper)';
      depthOf.set(value, depth);
    }
    return value;
  });
}

interface AdvertisedTool {
  name: string;
  inputSchema: JsonSchema;
  outputSchema?: Record<string, unknown>;
}

for (const db of DATABASES) {
  describe(`every tool, fuzzed from its advertised schema over HTTP, on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let dataDir: string;
    let client: Client;
    let tools: AdvertisedTool[];
    const ids: Record<string, string[]> = {};
    /** Ids of every kind, some in another workspace, for any id field. */
    const elsewhere: string[] = [];

    before(async () => {
      h = await setup(db);
      const acme = h.ids.Acme!;
      const other = h.ids.Other!;
      // Real ids of every kind the tools take, some another workspace's.
      const ada = await h.as('ada@acme.test');
      const roadmap = acme.artifacts.roadmap!;
      const thread = ok(await ada.call('add_comment', { document_id: roadmap, body_markdown: 'A thread.' }));
      const draft = ok(
        await ada.call('draft_automation', { plan_json: LIST_PLAN, ask: 'Count the documents.' }),
      );
      const published = ok(
        await ada.call('edit_automation', {
          action: 'publish',
          flow_version_id: draft.flow_version_id,
          trigger: WEEKLY,
          name: 'Census',
        }),
      );
      const run = ok(
        await ada.call('edit_automation', {
          action: 'run',
          automation_id: published.automation_id,
          dry_run: true,
        }),
      );
      // Most ids name what the field takes and Ada can open; the rest test the refusals.
      const artifacts = { ...acme.artifacts, ...other.artifacts };
      const mine = (type: string) =>
        (testFixture.workspaces[0]!.artifacts ?? []).flatMap((a) =>
          a.type === type && a.owner === 'ada@acme.test' ? [artifacts[a.key]!] : [],
        );
      Object.assign(ids, {
        page_id: mine('html_app'),
        document_id: [roadmap, roadmap, roadmap, ...mine('document')],
        conversation_id: Object.values(acme.conversations),
        pod_id: Object.values(acme.pods),
        thread_id: [thread.thread_id as string],
        automation_id: [published.automation_id as string],
        flow_version_id: [draft.flow_version_id as string],
        run_id: [run.run_id as string],
      });
      elsewhere.push(
        ...Object.values(artifacts),
        ...Object.values(other.conversations),
        ...Object.values(other.pods),
      );

      dataDir = mkdtempSync(join(tmpdir(), 'tandem-fuzz-'));
      server = await startTestServer(h.services, dataDir);
      const actor = h.actor('ada@acme.test');
      const scopes = [...actor.scopes];
      const { token } = await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, 3_600_000);
      client = new Client({ name: 'fuzz', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
          authProvider: { token: async () => token },
        }),
      );
      tools = (await client.listTools()).tools as AdvertisedTool[];
    });

    after(async () => {
      await client?.close();
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const hints: Hints = (field) => {
      const real = ids[field];
      if (real) {
        return fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...real) },
          { weight: 1, arbitrary: fc.constantFrom(...elsewhere) },
          { weight: 1, arbitrary: fc.constantFrom(...MADE_UP) },
          { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
        );
      }
      switch (field) {
        case 'plan_json':
          return fc.oneof(fc.constant(LIST_PLAN), fc.jsonValue({ maxDepth: 4 }));
        case 'trigger':
          return fc.oneof(fc.constantFrom(WEEKLY, ON_DOCUMENT), fc.dictionary(fc.string(), fc.jsonValue()));
        case 'expected_version':
          return fc.integer({ min: 0, max: 4 });
        case 'section_excerpt':
        case 'anchor_excerpt':
          return fc.oneof(fc.constantFrom('Ship it.', '# Roadmap', 'Welcome', 'Draft.'), fc.string());
        case 'namespaces':
          return fc.array(fc.constantFrom('documents', 'github', 'slack', 'http', 'nope'), { maxLength: 3 });
        default:
          return undefined;
      }
    };

    it(`answers ${RUNS} hostile calls without an internal error or hang, within its output schema, and a refusal changes nothing`, async () => {
      assert.equal(tools.length, 16, 'tools/list gives all 16 tools');
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      const fits = new Map(
        tools.map((t) => [t.name, t.outputSchema ? ajv.compile(t.outputSchema) : undefined]),
      );
      const calls = fc
        .oneof(
          ...tools.map((t) =>
            argumentsFor(t.inputSchema, hints, OFTEN).map((args) => ({
              name: t.name,
              args,
              // fast-check would print a counterexample 4,000 levels deep by recursion, and overflow.
              [fc.toStringMethod]: () => `${t.name} ${brief(args)}`,
            })),
          ),
        )
        .filter(({ args }) => Buffer.byteLength(JSON.stringify(args)) < MAX_BODY_BYTES);

      const property = fc.asyncProperty(calls, async ({ name, args }) => {
        const before = await stateDigest(h.services);
        const result = await client.callTool({ name, arguments: args }, { timeout: CALL_BOUND_MS });
        const text = ((result.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
        assert.doesNotMatch(text, /unexpected/i, `${name}: an internal error: ${text}`);
        const fit = fits.get(name);
        if (result.structuredContent !== undefined || result.isError !== true) {
          assert.ok(fit?.(result.structuredContent), `${name}: ${ajv.errorsText(fit?.errors)}`);
        }
        if (result.isError === true) {
          assert.match(text, /\S/, `${name}: a refusal says why`);
          assert.deepEqual(
            await stateDigest(h.services),
            before,
            `${name} was refused (${text}) but changed data`,
          );
        }
      });
      try {
        await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
      } catch (error) {
        throw new Error(
          `tools fuzz failed; reproduce with TANDEM_FUZZ_SEED=${SEED}\n${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    });
  });
}
