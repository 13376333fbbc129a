import type { Deps } from '../deps.ts';

export class LookupError extends Error {}

export function peopleService(deps: Deps) {
  const { db } = deps;

  /** The person with this e-mail, in the named workspace or in the only one they belong to. */
  async function byEmail(email: string, workspaceName?: string) {
    let query = db
      .selectFrom('people')
      .innerJoin('workspaces', 'workspaces.id', 'people.workspace_id')
      .select([
        'people.id',
        'people.workspace_id',
        'people.name',
        'people.email',
        'people.admin',
        'workspaces.name as workspace',
      ])
      .where('people.email', '=', email);
    if (workspaceName) query = query.where('workspaces.name', '=', workspaceName);
    const rows = await query.execute();
    if (rows.length === 0) {
      throw new LookupError(
        workspaceName
          ? `no person with e-mail ${email} in workspace "${workspaceName}"`
          : `no person with e-mail ${email}; load one with "tandem import FILE.json"`,
      );
    }
    if (rows.length > 1) {
      throw new LookupError(
        `${email} belongs to several workspaces (${rows.map((r) => r.workspace).join(', ')}); pass --workspace NAME`,
      );
    }
    return rows[0]!;
  }

  async function workspaceCount(): Promise<number> {
    const row = await db
      .selectFrom('workspaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  return { byEmail, workspaceCount };
}
