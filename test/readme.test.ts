import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { withToolTable } from '../scripts/readme-tools.ts';

it('the README lists every implemented tool as the registry describes it', async () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.equal(readme, await withToolTable(readme), 'README.md is stale: run node scripts/readme-tools.ts');
});
