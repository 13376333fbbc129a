import type { Fixture } from './fixture.ts';

export const DEMO_WORKSPACE = 'Demo';
export const DEMO_USER = 'ada@demo.test';

/** Created on first start with an empty database, so every tool can be tried at once. */
export const demoFixture: Fixture = {
  workspaces: [
    {
      name: DEMO_WORKSPACE,
      users: [
        { email: DEMO_USER, name: 'Ada Lovelace', admin: true, handle: 'ada' },
        { email: 'bob@demo.test', name: 'Bob Stone' },
        { email: 'cy@demo.test', name: 'Cy Young' },
      ],
      agents: ['Builder'],
      pods: [{ key: 'design', name: 'Design', members: [DEMO_USER, 'bob@demo.test'] }],
      conversations: [
        {
          key: 'general',
          title: 'General',
          participants: [DEMO_USER, 'bob@demo.test', 'cy@demo.test'],
          archived: false,
        },
        { key: 'old', title: 'Old launch', participants: [DEMO_USER], archived: true },
      ],
      connectors: [{ provider: 'github', connected: true, personal: false, secret: 'demo-github-secret' }],
      artifacts: [
        {
          key: 'roadmap',
          type: 'document',
          title: 'Roadmap',
          owner: DEMO_USER,
          scope: 'org',
          markdown:
            '# Roadmap\n\n## Now\n\nShip the workspace tools.\n\n## Next\n\nLive editing for everyone.\n',
        },
        {
          key: 'plan',
          type: 'document',
          title: 'Private plan',
          owner: DEMO_USER,
          scope: 'user',
          markdown: 'Draft.\n',
          roles: { 'bob@demo.test': 'commenter' },
        },
        {
          key: 'landing',
          type: 'html_app',
          title: 'Landing',
          owner: DEMO_USER,
          scope: 'org',
          html: '<!doctype html>\n<html>\n<body>\n  <h1>Hello from Tandem</h1>\n  <p>Edit me with write_page.</p>\n</body>\n</html>\n',
        },
        {
          key: 'budget',
          type: 'table',
          title: 'Budget',
          owner: DEMO_USER,
          scope: 'org',
          columns: ['Item', 'Cost'],
          rows: [
            ['Laptop', '1200'],
            ['Desk', '300'],
          ],
        },
      ],
    },
  ],
};

/** The demo fixture with one password for all its people (printed once, when the demo is made). */
export function demoWithPassword(password: string): Fixture {
  return {
    workspaces: demoFixture.workspaces.map((ws) => ({
      ...ws,
      users: ws.users.map((u) => ({ ...u, password })),
    })),
  };
}
