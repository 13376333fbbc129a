/**
 * The subflow rules of a plan: which automations a subflow node may name and whether naming one
 * closes a cycle. Pure: the automations service reads the graph (domains/automations/subflows.ts).
 */

/** How many automations a walk through subflows reads at most before it gives up. */
export const MAX_SUBFLOW_WALK = 200;

/** What a plan's validator knows about an automation one of its subflow nodes names. */
export interface SubflowTarget {
  /** Whether its live version writes (then the subflow node needs an approval before it). */
  writes: boolean;
  /**
   * Set when the plan's acting person may not run it directly (so not as a subflow either):
   * who may.
   */
  onlyRunBy?: string;
}

/** The subflow calls between automations, as their live versions make them. */
export interface SubflowGraph {
  /** For each automation reached: the automations its live version runs as subflows. */
  calls: ReadonlyMap<string, readonly string[]>;
  /** False when the walk stopped at MAX_SUBFLOW_WALK automations before reaching them all. */
  complete: boolean;
}

/**
 * The chain of automations through which `from` runs `target` (`from`, …, `target`), if it does:
 * the subflow node naming `from` in `target`'s plan would close a cycle.
 */
export function subflowChain(from: string, target: string, graph: SubflowGraph): string[] | undefined {
  const cameFrom = new Map<string, string | undefined>([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift() as string;
    if (at === target) {
      const chain: string[] = [];
      for (let step: string | undefined = at; step !== undefined; step = cameFrom.get(step))
        chain.unshift(step);
      return chain;
    }
    for (const next of graph.calls.get(at) ?? []) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, at);
      queue.push(next);
    }
  }
  return undefined;
}

/**
 * The cycle a subflow node naming `child` in automation `parent` would close, if it closes one:
 * why, and how to fix the plan.
 */
export function subflowCycle(
  child: string,
  parent: string,
  graph: SubflowGraph,
): { reason: string; fix: string } | undefined {
  if (child === parent) {
    return {
      reason: 'an automation cannot run itself as a subflow',
      fix: 'repeat work inside it with a map node, or name another automation',
    };
  }
  const chain = subflowChain(child, parent, graph);
  if (chain) {
    const caller = chain.at(-2) as string;
    return {
      reason: `automation ${child} runs this automation again through its subflows (${[...chain.slice(0, -1), 'this automation'].join(' → ')}), so each run would start another without end`,
      fix: `name another automation, or first remove the subflow node that runs this automation from ${caller}`,
    };
  }
  if (!graph.complete) {
    return {
      reason: `automation ${child} reaches more than ${MAX_SUBFLOW_WALK} automations through its subflows, too many to be sure it never runs this automation again`,
      fix: 'name an automation that runs fewer others',
    };
  }
  return undefined;
}

/** What the validator knows about the automations around a plan (see ValidationContext). */
interface SubflowRulesContext {
  subflows: ReadonlyMap<string, SubflowTarget>;
  automationId?: string | undefined;
  subflowGraph?: SubflowGraph | undefined;
}

/** The validator's subflow rules for a subflow node naming automation `id`: each broken one, with its fix. */
export function subflowProblems(
  id: string,
  ctx: SubflowRulesContext,
): { rule: 'subflow/unknown' | 'subflow/forbidden' | 'subflow/cycle'; message: string }[] {
  const self = ctx.automationId;
  const target = ctx.subflows.get(id);
  if (id !== self && !target) {
    return [
      {
        rule: 'subflow/unknown',
        message: `automation ${id} is not one you can open with a live version; publish it first or use another automation_id`,
      },
    ];
  }
  const problems: ReturnType<typeof subflowProblems> = [];
  if (target?.onlyRunBy) {
    problems.push({
      rule: 'subflow/forbidden',
      message: `automation ${id} can be run only by ${target.onlyRunBy}, and a subflow runs only what this automation's acting person could run themselves; use an automation you can run, or ask one of them to build this flow`,
    });
  }
  const cycle =
    self === undefined
      ? undefined
      : subflowCycle(id, self, ctx.subflowGraph ?? { calls: new Map(), complete: true });
  if (cycle) problems.push({ rule: 'subflow/cycle', message: `${cycle.reason}; ${cycle.fix}` });
  return problems;
}
