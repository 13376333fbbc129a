import type { Kysely } from 'kysely';
import type { Capability, Impl } from '../../capabilities/capability.ts';
import type { PlanNode } from '../../flowplan/plan.ts';
import { postToSession } from '../../domains/automations/session.ts';
import type { Db, Database } from '../../storage/schema.ts';
import type { Services } from '../../services.ts';
import type { Resolver } from '../../net/http-fetch.ts';
import type { RunLimits } from '../limits.ts';
import type { ModelConfig } from '../../model/model.ts';
import type { NodeStore, RunState } from '../run-state.ts';
import type { Scope, NodeRow } from '../walker.ts';

/** What every step's work can use: the database, the services, the run's store and caps. */
export interface StepEnv {
  db: Kysely<Database>;
  services: Services;
  store: NodeStore;
  limits: RunLimits;
  httpAllow: readonly string[];
  /** The model a workspace's agent steps answer through (its own from Settings, else the server's). */
  modelFor(workspaceId: string): Promise<ModelConfig | undefined>;
  /** Outside connector calls given in place of the shipped transports (tests, plugins). */
  connectorCalls: Record<string, Impl> | undefined;
  /** How http and connector hosts become addresses (the system's resolver unless a test stands in). */
  resolve: Resolver | undefined;
  capabilityOf(key: string): Capability | undefined;
  /** Runs a step's own work (a call out, a model's answer) within the step's wall time. */
  withinWallTime<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export interface StartTask<N extends PlanNode = PlanNode> {
  key: string;
  node: N;
  scope: Scope;
  row: NodeRow | undefined;
  begun: { attempt: number; started_at: number };
}

export interface CheckTask<N extends PlanNode = PlanNode> {
  key: string;
  node: N;
  scope: Scope;
  row: NodeRow;
}

/** One kind of node: how it starts, and (for nodes that wait) how a waiting one is looked at. */
export interface NodeKind<K extends PlanNode['kind'] = PlanNode['kind']> {
  kind: K;
  /** Worked out with no effect outside (stored once, when it ends; redone if the worker dies). */
  pure?: boolean;
  /** Waits on the world, so it runs side by side with the run's other steps. */
  outside?: boolean;
  start(env: StepEnv, state: RunState, task: StartTask<Extract<PlanNode, { kind: K }>>): Promise<void>;
  check?(env: StepEnv, state: RunState, task: CheckTask<Extract<PlanNode, { kind: K }>>): Promise<void>;
}

export const defineNodeKind = <K extends PlanNode['kind']>(kind: NodeKind<K>) => kind;

/** Posts a message (or card) to the automation's session as the automation. */
export const postSession = (on: Db, state: RunState, body: string, card?: Record<string, unknown>) =>
  postToSession(on, state.automation.session_id, null, body, card);
