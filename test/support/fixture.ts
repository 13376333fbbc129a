import type { Fixture } from '../../src/domains/import/fixture.ts';

/**
 * Two workspaces. In Acme: Ada (admin, owner of most things), Bob, Cy, Dee (in nothing), and
 * artifacts covering every role source: owner, explicit roles, pod, conversation, org scope.
 */
export const testFixture: Fixture = {
  workspaces: [
    {
      name: 'Acme',
      users: [
        { email: 'ada@acme.test', name: 'Ada Lovelace', admin: true, handle: 'ada' },
        { email: 'bob@acme.test', name: 'Bob Stone' },
        { email: 'cy@acme.test', name: 'Cy Young' },
        { email: 'dee@acme.test', name: 'Dee Null' },
      ],
      agents: ['Builder'],
      pods: [
        { key: 'design', name: 'Design', members: ['ada@acme.test', 'bob@acme.test'] },
        { key: 'ops', name: 'Ops', members: ['cy@acme.test'] },
      ],
      conversations: [
        {
          key: 'general',
          title: 'General',
          participants: ['ada@acme.test', 'bob@acme.test'],
          archived: false,
        },
        { key: 'old', title: 'Old', participants: ['ada@acme.test', 'bob@acme.test'], archived: true },
        { key: 'cyroom', title: 'Cy only', participants: ['cy@acme.test'], archived: false },
      ],
      connectors: [
        { provider: 'github', connected: true, personal: false, secret: 'whsec-1' },
        { provider: 'slack', connected: true, personal: true, owner: 'bob@acme.test', secret: 'slack-1' },
        { provider: 'gmail', connected: false, personal: false },
      ],
      artifacts: [
        {
          key: 'roadmap',
          type: 'document',
          title: 'Roadmap',
          owner: 'ada@acme.test',
          scope: 'org',
          markdown: '# Roadmap\n\nShip it.\n',
        },
        {
          key: 'plan',
          type: 'document',
          title: 'Private plan',
          owner: 'ada@acme.test',
          scope: 'user',
          markdown: 'Draft.\n',
          roles: { 'bob@acme.test': 'commenter', 'cy@acme.test': 'viewer' },
        },
        {
          key: 'landing',
          type: 'html_app',
          title: 'Landing',
          owner: 'ada@acme.test',
          scope: 'user',
          html: '<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n',
          roles: { 'bob@acme.test': 'commenter', 'cy@acme.test': 'viewer' },
        },
        { key: 'empty_page', type: 'html_app', title: 'Empty', owner: 'ada@acme.test', scope: 'user' },
        {
          key: 'pod_page',
          type: 'html_app',
          title: 'Pod page',
          owner: 'ada@acme.test',
          scope: 'pod',
          pod: 'design',
          html: '<p>pod</p>',
        },
        {
          key: 'room_page',
          type: 'html_app',
          title: 'Room page',
          owner: 'ada@acme.test',
          conversation: 'general',
          html: '<p>room</p>',
        },
        {
          key: 'org_page',
          type: 'html_app',
          title: 'Org page',
          owner: 'ada@acme.test',
          scope: 'org',
          html: '<p>org</p>',
        },
        {
          key: 'archived_page',
          type: 'html_app',
          title: 'Archived page',
          owner: 'ada@acme.test',
          scope: 'org',
          html: '<p>old</p>',
          archived: true,
        },
        {
          key: 'notes',
          type: 'document',
          title: 'Pod notes',
          owner: 'ada@acme.test',
          scope: 'pod',
          pod: 'design',
          archived: true,
          markdown: 'Old notes.\n',
        },
        {
          key: 'budget',
          type: 'table',
          title: 'Budget',
          owner: 'ada@acme.test',
          scope: 'org',
          columns: ['Item', 'Cost'],
          rows: [['Laptop', '1200']],
        },
      ],
    },
    {
      name: 'Other',
      users: [{ email: 'eve@other.test', name: 'Eve Else', admin: true }],
      pods: [{ key: 'eves', name: 'Eve pod', members: ['eve@other.test'] }],
      conversations: [
        { key: 'evroom', title: 'Eve room', participants: ['eve@other.test'], archived: false },
      ],
      artifacts: [
        {
          key: 'eve_page',
          type: 'html_app',
          title: 'Eve page',
          owner: 'eve@other.test',
          scope: 'org',
          html: '<p>eve</p>',
        },
        {
          key: 'eve_doc',
          type: 'document',
          title: 'Eve doc',
          owner: 'eve@other.test',
          scope: 'org',
          markdown: 'Eve.\n',
        },
      ],
    },
  ],
};
