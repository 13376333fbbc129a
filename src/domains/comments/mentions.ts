/** Handles that always reach the workspace assistant: its own name and the retired agent names. */
export const ASSISTANT = 'Assistant';
export const RETIRED_TO_ASSISTANT = ['PM', 'Research', 'GTM'];

/** Every `@handle` in a text, in order, without duplicates. An e-mail address is not a mention. */
export function findMentions(text: string): string[] {
  const found: string[] = [];
  const re = /(^|[^A-Za-z0-9_.@`])@([A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]|[A-Za-z0-9])/g;
  for (const match of text.matchAll(re)) {
    const handle = match[2]!;
    if (!found.some((f) => f.toLowerCase() === handle.toLowerCase())) found.push(handle);
  }
  return found;
}

export interface MentionTargets {
  people: Map<string, string>;
  agents: string[];
}

export interface ResolvedMentions {
  personIds: string[];
  agents: string[];
}

/**
 * Sorts mentions into agents (asked to reply) and people (notified); retired agent handles
 * reach the assistant, and anything unknown stays plain text. Matching ignores case.
 */
export function resolveMentions(handles: string[], targets: MentionTargets): ResolvedMentions {
  const personIds: string[] = [];
  const agents: string[] = [];
  const installed = new Map([ASSISTANT, ...targets.agents].map((a) => [a.toLowerCase(), a]));
  const retired = new Set(RETIRED_TO_ASSISTANT.map((r) => r.toLowerCase()));
  for (const handle of handles) {
    const key = handle.toLowerCase();
    const agent = installed.get(key) ?? (retired.has(key) ? ASSISTANT : undefined);
    if (agent) {
      if (!agents.includes(agent)) agents.push(agent);
      continue;
    }
    const personId = targets.people.get(key);
    if (personId && !personIds.includes(personId)) personIds.push(personId);
  }
  return { personIds, agents };
}
