import type { Capability, CallContext } from '../../capabilities/capability.ts';
import type { PlanNode } from '../../flowplan/plan.ts';
import { atMostOnce, implementationOf } from '../../capabilities/catalogue.ts';
import { callModel } from '../../model/model.ts';
import type { RunState } from '../run-state.ts';
import { StepError } from '../../errors.ts';
import { resolve, resolveInputs } from '../walker.ts';
import { defineNodeKind, type StepEnv } from './context.ts';
import { effectDone, effectKey, effectOf, effectStarted, effectUndone } from './effects.ts';

type CapabilityNode = Extract<PlanNode, { kind: 'capability' }>;

/**
 * Calls one capability as the automation's acting person: connected, its input checked against
 * its schema, simulated in a dry run when it writes, and a write never done twice (its effect is
 * stored in the write's own transaction; a call out that was interrupted is `outcome_unknown`).
 */
export async function callCapability(
  env: StepEnv,
  state: RunState,
  key: string,
  node: CapabilityNode,
  input: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ status: 'succeeded' | 'simulated'; output: unknown }> {
  const { run, automation, actor } = state;
  const cap = env.capabilityOf(node.capability);
  if (!cap) throw new StepError(`${node.capability} is no longer a capability`);
  const catalogue = await env.services.automations.catalogueFor(actor);
  if (!catalogue.namespaceOf(node.capability)?.connected) {
    throw new StepError(
      `${node.capability} needs the ${node.capability.split('.')[0]} connector, which is not connected for the person this automation acts as`,
    );
  }
  const parsed = cap.input.safeParse(input);
  if (!parsed.success) {
    throw new StepError(
      `${node.capability} input: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'} ${i.message}`).join('; ')}`,
    );
  }
  if (run.dry_run && cap.kind === 'write') {
    return {
      status: 'simulated',
      output: { simulated: true, would_call: node.capability, with: parsed.data },
    };
  }
  const effect = effectKey(run.id, key);
  if (cap.kind === 'write') {
    const done = await effectOf(env.db, effect);
    if (done?.state === 'done') return { status: 'succeeded', output: done.result };
    if (done?.state === 'started') {
      throw new StepError(
        `outcome unknown: the call to ${node.capability} was interrupted; check the other side before running this again`,
        { retryable: false, code: 'outcome_unknown' },
      );
    }
  }
  const callContext: CallContext = {
    services: env.services,
    actor,
    sessionId: automation.session_id,
    // The write commits only while this worker still holds the run: one that stalled past its
    // lease (another worker may be doing this step again) writes nothing.
    within: async (trx, result) => {
      await env.store.holdLease(trx, run.id);
      await effectDone(trx, run.id, effect, result);
    },
    httpAllow: env.httpAllow,
    resolve: env.resolve,
    signal,
    origin: { automationId: automation.id, depth: run.event_depth + 1 },
  };
  const impl = implementationOf(node.capability, env.connectorCalls);
  if (!impl)
    throw new StepError(
      `${node.capability} cannot be called: no transport for its connector is installed here`,
    );
  const once = cap.kind === 'write' && atMostOnce(node.capability);
  if (once) await effectStarted(env.db, run.id, effect);
  const output = await impl(parsed.data, callContext).catch(async (error: unknown) => {
    // The service refused it or was never reached: nothing happened, so it may be sent again.
    if (once && error instanceof StepError && error.nothingDone) await effectUndone(env.db, effect);
    throw error;
  });
  if (once) await effectDone(env.db, run.id, effect, output);
  return { status: 'succeeded', output };
}

export const capabilityNode = defineNodeKind({
  kind: 'capability',
  outside: true,
  async start(env, state, { key, node, scope }) {
    const input = resolveInputs(node.input, scope);
    const result = await env.withinWallTime((signal) => callCapability(env, state, key, node, input, signal));
    await env.store.finish(env.db, state, key, node.id, { status: result.status, output: result.output });
  },
});

/** A model call with the step's instructions, input and output schema; its tools are read capabilities. */
export const agentNode = defineNodeKind({
  kind: 'agent',
  outside: true,
  async start(env, state, { key, node, scope }) {
    const model = await env.modelFor(state.actor.workspaceId);
    const output = await env.withinWallTime((signal) =>
      callModel(model, {
        instructions: String(resolve(node.instructions, scope) ?? ''),
        input: resolveInputs(node.input, scope),
        outputSchema: node.output_schema,
        tools: (node.tools ?? [])
          .map((k) => env.capabilityOf(k))
          .filter((c): c is Capability => c !== undefined),
        // A tool call is a read capability call like any other: connected, checked, as the acting person.
        callTool: async (capability, input) =>
          (
            await callCapability(
              env,
              state,
              key,
              { kind: 'capability', id: node.id, capability: capability.key },
              input,
              signal,
            )
          ).output as Record<string, unknown>,
        signal,
      }),
    );
    await env.store.finish(env.db, state, key, node.id, { status: 'succeeded', output });
  },
});
