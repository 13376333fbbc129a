/** What the Builder asks the model for: the plan, the request in one sentence, the write rule. */
export interface BuilderAnswer {
  plan: unknown;
  ask?: string | undefined;
  write_approval?: unknown;
}

/**
 * Reads the model's answer: one JSON object `{ask, write_approval, plan}` (a bare FlowPlan is
 * taken as the plan), also inside a code fence or with words around it. Returns what is wrong
 * otherwise, in a sentence the model is sent back.
 */
export function parseBuilderAnswer(text: string): { answer: BuilderAnswer } | { problem: string } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text);
  const candidates = [text.trim(), fenced?.[1]?.trim() ?? ''];
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  let parsed: unknown;
  let error = 'there is no JSON object in it';
  for (const candidate of candidates) {
    if (!candidate.startsWith('{')) continue;
    try {
      parsed = JSON.parse(candidate);
      break;
    } catch (e) {
      error = (e as Error).message;
    }
  }
  if (parsed === undefined) return { problem: `Your answer is not a JSON object (${error}).` };
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: 'Your answer must be one JSON object.' };
  }
  const value = parsed as Record<string, unknown>;
  if ('planVersion' in value && !('plan' in value)) return { answer: { plan: value } };
  if (!('plan' in value)) return { problem: 'Your answer has no "plan" field holding the FlowPlan.' };
  return {
    answer: {
      plan: value.plan,
      ask: typeof value.ask === 'string' ? value.ask : undefined,
      write_approval: value.write_approval,
    },
  };
}
