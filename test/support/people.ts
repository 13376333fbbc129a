import assert from 'node:assert/strict';
import { acme, type Harness, type ToolCaller } from './harness.ts';

/** The fixture's people, each connected as a client. */
export interface People {
  ada: ToolCaller;
  bob: ToolCaller;
  cy: ToolCaller;
  dee: ToolCaller;
  eve: ToolCaller;
}

/** Connects Ada, Bob, Cy, Dee (Acme) and Eve (Other), one after another. */
export async function connectPeople(h: Harness): Promise<People> {
  const ada = await h.as('ada@acme.test');
  const bob = await h.as('bob@acme.test');
  const cy = await h.as('cy@acme.test');
  const dee = await h.as('dee@acme.test');
  const eve = await h.as('eve@other.test');
  return { ada, bob, cy, dee, eve };
}

/** The id of an Acme fixture artifact, asserting the key exists. */
export function fixtureArtifact(h: Harness, key: string): string {
  const id = acme(h).artifacts[key];
  assert.ok(id, `fixture artifact ${key}`);
  return id;
}

/** The person id of a fixture person. */
export const personId = (h: Harness, email: string): string => h.actor(email).personId;
