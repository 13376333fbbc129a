import { z } from 'zod';

const email = z.string().email();
const role = z.enum(['owner', 'editor', 'commenter', 'viewer']);

const user = z.strictObject({
  email,
  name: z.string().min(1),
  admin: z.boolean().optional(),
  handle: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
      'a handle is letters, digits, _ . - and starts with a letter or digit',
    )
    .optional(),
  /** Signs in at /login (every workspace of this e-mail shares one password). */
  password: z.string().min(8, 'a password needs at least 8 characters').max(1024).optional(),
});

const pod = z.strictObject({
  key: z.string().min(1),
  name: z.string().min(1),
  members: z.array(email).default([]),
});

const conversation = z.strictObject({
  key: z.string().min(1),
  title: z.string().min(1),
  participants: z.array(email).default([]),
  archived: z.boolean().default(false),
});

const connector = z.strictObject({
  provider: z.string().min(1),
  connected: z.boolean().default(true),
  personal: z.boolean().default(false),
  owner: email.optional(),
  secret: z.string().optional(),
  /** The provider's settings (domains/connectors/settings.ts): api_url, token, smtp_url, from, … */
  config: z.record(z.string(), z.string()).optional(),
});

const artifactBase = {
  key: z.string().min(1),
  title: z.string().min(1),
  owner: email,
  scope: z.enum(['user', 'pod', 'org']).optional(),
  pod: z.string().optional(),
  conversation: z.string().optional(),
  archived: z.boolean().optional(),
  roles: z.record(email, role).optional(),
};

const artifact = z.discriminatedUnion('type', [
  z.strictObject({ ...artifactBase, type: z.literal('document'), markdown: z.string().optional() }),
  z.strictObject({ ...artifactBase, type: z.literal('html_app'), html: z.string().optional() }),
  z.strictObject({
    ...artifactBase,
    type: z.literal('table'),
    columns: z.array(z.string()).min(1),
    rows: z.array(z.array(z.string())).default([]),
  }),
]);

const workspace = z.strictObject({
  name: z.string().min(1),
  users: z.array(user).min(1),
  agents: z.array(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/)).default(['Builder']),
  pods: z.array(pod).default([]),
  conversations: z.array(conversation).default([]),
  connectors: z.array(connector).default([]),
  artifacts: z.array(artifact).default([]),
});

export const fixtureSchema = z.strictObject({ workspaces: z.array(workspace).min(1) });
export type Fixture = z.input<typeof fixtureSchema>;
export type FixtureWorkspace = z.infer<typeof workspace>;

/**
 * Every problem on one line, each naming where in the file it is, unknown fields first
 * (a misspelt field also makes the field it meant missing): `workspaces.0.users.1: unknown field "nmae"; …`.
 */
export function describeFixtureErrors(error: z.ZodError): string {
  const issues = [...error.issues].sort(
    (a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'),
  );
  return issues
    .map((issue) => {
      const at = issue.path.join('.') || '(top level)';
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => `"${k}"`).join(', ');
        return `${at}: unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
      }
      return `${at}: ${issue.message}`;
    })
    .join('; ');
}
