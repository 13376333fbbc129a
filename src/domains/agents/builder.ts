import type { ModelMessage } from 'ai';
import { chat, type ModelConfig } from '../../model/model.ts';
import { DomainError } from '../../errors.ts';
import type { PlanError } from '../../flowplan/validate.ts';
import { parseBuilderAnswer } from './builder-answer.ts';
import { askingComment, kindOf, readThreads, requestThread, threadText } from './context.ts';
import { recordDraft, type Outcome } from './requests.ts';
import { asPerson, type Agent, type AgentTurn } from './turn.ts';

/** Times the model is sent the validator's errors to repair its plan. */
export const REPAIRS = 3;

/** The catalogue and the plan's JSON Schema, as describe_capabilities gives them to the person. */
async function guide(turn: AgentTurn): Promise<string> {
  const described = await asPerson(
    turn,
    { tool: 'describe_capabilities', scope: 'automations:read' },
    {},
    () => turn.services.automations.describe(turn.actor, {}),
  );
  return guideText(described);
}

/** The catalogue as the Builder is given it: node_shapes repeats the plan schema's $defs, so it goes. */
export function guideText(described: { node_shapes: unknown }): string {
  const { node_shapes: _shapes, ...rest } = described;
  return JSON.stringify(rest);
}

export function instructions(name: string, guideJson: string, where = 'in a comment thread'): string {
  return [
    `You are the Builder, the agent of Tandem that drafts automations. ${name} asked you for one ${where}. Turn the request into a FlowPlan (planVersion 1) that passes validation.`,
    'Answer with exactly one JSON object and nothing else:',
    '{"ask": "<the request, in one sentence>", "write_approval": "required" or "automatic", "plan": <the FlowPlan>}',
    'Rules: node ids are unique; edges form a DAG; a ref binding names a node upstream of the node using it; a capability of kind write needs an approval node upstream on every path unless write_approval is "automatic" (then the plan has no approval node). Use only the capabilities listed below, with their input schemas. The plan has no trigger: the person sets it in the app when publishing.',
    'The capabilities this person may use and the plan schema (describe_capabilities):',
    guideJson,
  ].join('\n');
}

function problemsText(errors: PlanError[]): string {
  return errors
    .map((e) => `- [${e.rule}]${e.path.length ? ` at ${e.path.join('.')}` : ''}: ${e.message}`)
    .join('\n');
}

/** The reply for a stored draft: its steps, its writes and where to review and publish it. */
async function draftReply(turn: AgentTurn, flowVersionId: string): Promise<Outcome> {
  const draft = await turn.services.drafts.read(turn.actor, flowVersionId);
  const name = typeof draft.plan_json.name === 'string' ? draft.plan_json.name : draft.ask;
  // The summary's steps come numbered (and indented inside a map), as the automations page shows them.
  const steps = draft.steps.join('\n');
  const writes = draft.writes.length
    ? `**Writes** (${draft.write_approval === 'automatic' ? 'made without asking' : 'each waits for an approval first'}):\n${draft.writes.map((w) => `- ${w}`).join('\n')}`
    : 'It writes nothing.';
  return {
    status: 'answered',
    body: [
      `I drafted an automation for this: **${name}**. It is only a draft: nothing is published, scheduled or run.`,
      `**Steps**\n${steps}`,
      writes,
      `Review it, set a trigger and publish it in the app: ${draft.url}`,
    ].join('\n\n'),
  };
}

/** What the Builder drafts: the person's request as a plan, the ask and the write rule. */
export interface BuilderDraftArgs {
  plan_json: unknown;
  ask: string;
  write_approval: unknown;
}

/**
 * The Builder's drafting: asks the model for a plan, drafts it (the same domain call as
 * draft_automation) and sends the validator's errors back up to REPAIRS times. Returns the draft,
 * or the last problems when no answer passed.
 */
export async function draftWithRepairs(attempt: {
  model: ModelConfig;
  timeoutMs: number;
  signal: AbortSignal;
  instructions: string;
  messages: ModelMessage[];
  /** The ask when the model gives none: the request as the person wrote it. */
  fallbackAsk: string;
  draft: (args: BuilderDraftArgs) => Promise<{ flow_version_id: string }>;
}): Promise<{ flow_version_id: string } | { failed: string }> {
  const { messages } = attempt;
  let last = '';
  for (let round = 0; round <= REPAIRS; round++) {
    const text = await chat(attempt.model, {
      instructions: attempt.instructions,
      messages,
      timeoutMs: attempt.timeoutMs,
      signal: attempt.signal,
    });
    messages.push({ role: 'assistant', content: text });
    const parsed = parseBuilderAnswer(text);
    let problem: string;
    if ('problem' in parsed) problem = parsed.problem;
    else {
      const { answer } = parsed;
      const ask = (answer.ask?.trim() || attempt.fallbackAsk.trim()).replace(/\s+/g, ' ').slice(0, 1000);
      const args = { plan_json: answer.plan, ask, write_approval: answer.write_approval ?? 'required' };
      try {
        return { flow_version_id: (await attempt.draft(args)).flow_version_id };
      } catch (error) {
        if (!(error instanceof DomainError) || !['invalid_plan', 'invalid_argument'].includes(error.code))
          throw error;
        const errors = (error.data?.errors ?? []) as PlanError[];
        problem = errors.length ? `The validator refused the plan:\n${problemsText(errors)}` : error.message;
      }
    }
    last = problem;
    messages.push({ role: 'user', content: `${problem}\nAnswer again with the corrected JSON object only.` });
  }
  return { failed: last };
}

/**
 * The Builder: asks the model for a FlowPlan with describe_capabilities as its guide, drafts it as
 * the person who asked (the same domain call as draft_automation), sends the validator's errors
 * back up to REPAIRS times, and replies with the draft. It never publishes or runs anything.
 */
export const builder: Agent = async (turn): Promise<Outcome> => {
  // A worker that died after drafting left the draft on the request: reply with it, draft once.
  if (turn.request.flow_version_id) return draftReply(turn, turn.request.flow_version_id);
  const { threads } = await readThreads(turn);
  const thread = requestThread(threads, turn.request.thread_id);
  const asking = await askingComment(turn, thread);
  const artifact = await turn.services.deps.db
    .selectFrom('artifacts')
    .select(['id', 'title', 'type'])
    .where('id', '=', turn.request.artifact_id)
    .executeTakeFirstOrThrow();
  const system = instructions(asking.author_label, await guide(turn));
  const messages: ModelMessage[] = [
    {
      role: 'user',
      content: [
        `The thread is on the ${kindOf(artifact.type as 'document')} “${artifact.title}” (id ${artifact.id}).`,
        threadText(thread, turn.request.comment_id),
        `The request, from ${asking.author_label}:\n${asking.body}`,
      ].join('\n\n'),
    },
  ];
  const drafted = await draftWithRepairs({
    model: turn.model,
    timeoutMs: turn.timeoutMs,
    signal: turn.signal,
    instructions: system,
    messages,
    fallbackAsk: asking.body,
    draft: (args) =>
      asPerson(turn, { tool: 'draft_automation', scope: 'automations:write' }, {}, () =>
        turn.services.automations.draft(turn.actor, args, {
          agent: 'Builder',
          within: (trx, result) =>
            recordDraft(trx, turn.request.id, turn.workerId, String(result.flow_version_id)),
        }),
      ),
  });
  if ('flow_version_id' in drafted) return draftReply(turn, drafted.flow_version_id);
  const last = drafted.failed;
  return {
    status: 'failed',
    body: `I could not draft an automation that passes the checks after ${REPAIRS + 1} attempts. The last problems were:\n\n${last}\n\nMention @${turn.request.agent} again with more detail to try again.`,
    errorCode: 'plan_invalid',
    error: last,
  };
};
