import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allPlugins, Catalogue, type NamespaceState } from '../../capabilities/catalogue.ts';
import { checkTrigger } from '../../flowplan/triggers.ts';
import { validatePlan } from '../../flowplan/validate.ts';
import { fillTemplate, templates, type TemplateFieldKind } from './templates.ts';

// Every connector connected, as for a workspace that has them all.
const namespaces = new Map<string, NamespaceState>();
for (const p of allPlugins()) {
  namespaces.set(p.namespace, { plugin: p, connected: true, personalOnly: false, providers: p.providers });
}
const catalogue = new Catalogue(
  namespaces,
  ['github', 'slack', 'gmail'].map((provider) => ({
    provider,
    name: provider,
    personal: false,
    namespace: provider === 'gmail' ? 'email' : provider,
    connected: true,
  })),
);

const SAMPLE: Record<TemplateFieldKind, string> = {
  document: 'doc_sample',
  page: 'pg_sample',
  repo: 'acme/roadmap',
  channel: '#general',
  email: 'ada@acme.test',
  text: 'Keep it short.',
};

describe('automation templates', () => {
  it('ship at least the six the app promises', () => {
    const ids = templates().map((t) => t.id);
    for (const id of [
      'weekly-document-digest',
      'github-issue-to-document',
      'github-pull-request-to-slack',
      'daily-document-email',
      'comment-mention-to-slack',
      'page-rewrite-with-approval',
    ])
      assert.ok(ids.includes(id), `${id} is missing`);
    assert.equal(new Set(ids).size, ids.length);
  });

  for (const t of templates()) {
    it(`${t.id}: filled in, its plan passes the validator and its trigger the publish check`, () => {
      const values = Object.fromEntries(t.fields.map((f) => [f.name, SAMPLE[f.kind]]));
      const filled = fillTemplate(t.id, { values, timezone: 'Europe/Berlin' });
      const result = validatePlan(filled.plan_json, {
        catalogue,
        writeApproval: filled.write_approval,
        subflows: new Map(),
      });
      assert.deepEqual(result.ok ? [] : result.errors, []);
      // Throws a sentence naming every problem when the trigger would not publish.
      assert.equal(checkTrigger(filled.trigger, catalogue).trigger.kind, filled.trigger.kind);
      // Every field is used, and nothing is left to fill in.
      const { template: _template, ...made } = filled;
      const text = JSON.stringify(made);
      assert.doesNotMatch(text, /\[\[[a-z_]+\]\]/);
      for (const f of t.fields) assert.ok(text.includes(SAMPLE[f.kind]), `${f.name} is not used`);
      assert.ok(filled.ask.length > 0 && filled.ask.length <= 1000);
    });
  }

  it('refuses a missing field in one sentence, naming it', () => {
    assert.throws(
      () => fillTemplate('weekly-document-digest', { values: {} }),
      /Document is required: fill it in to draft this template/,
    );
    assert.throws(() => fillTemplate('nope', { values: {} }), /Template not found/);
  });
});
