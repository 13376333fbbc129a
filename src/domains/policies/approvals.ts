import type { Selectable } from 'kysely';
import { DomainError } from '../../errors.ts';
import type { ApprovalTable, Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { isParticipant } from './artifacts.ts';
import { automationFor } from './automations.ts';

/** Who may decide an approval step, as its plan names them. */
export type Approvers = 'creator' | 'admins' | string[];

/** Who decides a step whose plan names no one: the automation's creator. */
export const DEFAULT_APPROVERS: Approvers = 'creator';

/** The person deciding, as the approver rule sees them. */
export interface Decider {
  personId: string;
  email: string;
  name: string;
  admin: boolean;
}

export const parseApprovers = (json: string) => JSON.parse(json) as Approvers;

export async function decider(on: Db, actor: Actor): Promise<Decider> {
  const me = await on
    .selectFrom('people')
    .select(['email', 'name', 'admin'])
    .where('id', '=', actor.personId)
    .executeTakeFirstOrThrow();
  return { personId: actor.personId, email: me.email, name: me.name, admin: me.admin === 1 };
}

/** Whether the approval names this person by e-mail (compared without case). */
export function isNamed(approvers: Approvers, me: Pick<Decider, 'email'>): boolean {
  return Array.isArray(approvers) && approvers.some((e) => e.toLowerCase() === me.email.toLowerCase());
}

/**
 * Whether a person may decide an approval: the automation's creator (the default), a workspace
 * admin, or one of the people it names. The session shows the buttons by the same rule.
 */
export function mayDecide(approvers: Approvers, createdBy: string, me: Decider): boolean {
  if (approvers === 'creator') return createdBy === me.personId;
  if (approvers === 'admins') return me.admin;
  return isNamed(approvers, me);
}

/** The approvers in words, as a refusal or a card names them. */
export function approversInWords(approvers: Approvers): string {
  if (approvers === 'creator') return 'the automation’s creator';
  if (approvers === 'admins') return 'a workspace admin';
  return approvers.join(' or ');
}

/** The refusal of a decision by someone the approval does not name. */
export function requireDecide(approvers: Approvers, createdBy: string, me: Decider): void {
  if (mayDecide(approvers, createdBy, me)) return;
  throw new DomainError('forbidden', `Only ${approversInWords(approvers)} can decide this approval`);
}

/**
 * The people of a workspace who may decide an approval, by the rule `mayDecide` applies to one
 * person: the automation's creator, every admin, or each person named (e-mail without case).
 */
export async function approverIds(
  on: Db,
  workspaceId: string,
  approvers: Approvers,
  createdBy: string,
): Promise<string[]> {
  if (approvers === 'creator') return [createdBy];
  let q = on.selectFrom('people').select('id').where('workspace_id', '=', workspaceId);
  q =
    approvers === 'admins'
      ? q.where('admin', '=', 1)
      : q.where(
          (eb) => eb.fn('lower', ['email']),
          'in',
          approvers.map((e) => e.toLowerCase()),
        );
  return (await q.execute()).map((p) => p.id);
}

export const approvalNotFound = () => new DomainError('not_found', 'Approval not found');

/**
 * An approval the person may see, with what deciding it is judged by: anyone who can open its
 * automation, anyone taking part in its session, and anyone it names (even without access to the
 * automation). Anything else, or an id of another workspace, is not found.
 */
export async function approvalFor(
  on: Db,
  actor: Actor,
  approvalId: unknown,
): Promise<{ approval: Selectable<ApprovalTable>; approvers: Approvers; createdBy: string; me: Decider }> {
  if (typeof approvalId !== 'string' || approvalId === '') throw approvalNotFound();
  const approval = await on
    .selectFrom('approvals')
    .selectAll()
    .where('id', '=', approvalId)
    .where('workspace_id', '=', actor.workspaceId)
    .executeTakeFirst();
  if (!approval) throw approvalNotFound();
  const access = await automationFor(on, actor, approval.automation_id).catch(() => undefined);
  const participant = await isParticipant(on, approval.session_id, actor.personId);
  const automation = await on
    .selectFrom('automations')
    .select('created_by')
    .where('id', '=', approval.automation_id)
    .executeTakeFirstOrThrow();
  const approvers = parseApprovers(approval.approvers_json);
  const me = await decider(on, actor);
  if (!access && !participant && !isNamed(approvers, me)) throw approvalNotFound();
  return { approval, approvers, createdBy: automation.created_by, me };
}
