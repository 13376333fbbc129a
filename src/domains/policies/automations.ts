import type { Selectable } from 'kysely';
import { DomainError } from '../../errors.ts';
import { compiled } from '../../storage/compiled.ts';
import type { AutomationTable, Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';

type AutomationRow = Selectable<AutomationTable>;
/** A person of a workspace, as the automation rights see them. */
export type Person = Pick<Actor, 'workspaceId' | 'personId'>;

export interface AutomationAccess {
  row: AutomationRow;
  admin: boolean;
  /** The person's name, read with the row (a manual run records who asked). */
  personName: string;
  /** Whether the person may change and run it: its creator for a personal one, an admin for a workspace one. */
  canControl: boolean;
}

export const automationNotFound = () => new DomainError('not_found', 'Automation not found');

export async function isAdmin(on: Db, person: Person): Promise<boolean> {
  const row = await on
    .selectFrom('people')
    .select('admin')
    .where('id', '=', person.personId)
    .where('workspace_id', '=', person.workspaceId)
    .executeTakeFirst();
  return row?.admin === 1;
}

/**
 * An automation the person can open: every workspace automation, their own personal ones, and,
 * for admins, everyone's (read-only unless they created it).
 */
export async function automationFor(on: Db, person: Person, id: unknown): Promise<AutomationAccess> {
  if (typeof id !== 'string' || id === '') throw automationNotFound();
  const [found] = (await automationWithPerson(on, id, person.workspaceId, person.personId)).rows;
  if (!found) throw automationNotFound();
  const { person_admin, person_name, ...row } = found;
  const admin = person_admin === 1;
  if (row.scope === 'personal' && row.created_by !== person.personId && !admin) throw automationNotFound();
  const canControl = row.scope === 'personal' ? row.created_by === person.personId : admin;
  return { row, admin, canControl, personName: person_name ?? 'Someone' };
}

/** One statement: the row, whether the person is an admin, and their name (none when not of the workspace). */
const automationWithPerson = compiled((db, id: string, workspaceId: string, personId: string) =>
  db
    .selectFrom('automations')
    .leftJoin('people', (join) =>
      join.on('people.id', '=', personId).on('people.workspace_id', '=', workspaceId),
    )
    .selectAll('automations')
    .select(['people.admin as person_admin', 'people.name as person_name'])
    .where('automations.id', '=', id)
    .where('automations.workspace_id', '=', workspaceId),
);

/** Who may change and run an automation, as the refusals name them. */
export const controllers = (row: Pick<AutomationRow, 'scope'>) =>
  row.scope === 'personal' ? 'its creator' : 'workspace admins';

export function requireControl(access: AutomationAccess): void {
  if (access.canControl) return;
  throw new DomainError(
    'forbidden',
    access.row.scope === 'personal'
      ? 'Only its creator can change this automation'
      : 'Only workspace admins can change this automation',
  );
}
