import { jsonSchema, tool, type ToolSet } from 'ai';
import { chat } from '../../model/model.ts';
import {
  askingComment,
  CONTEXT_CHARS,
  kindOf,
  readArtifact,
  readThreads,
  requestThread,
  threadText,
  type ArtifactWindow,
} from './context.ts';
import type { Outcome } from './requests.ts';
import type { Agent, AgentTurn } from './turn.ts';

/** Characters one read_artifact call returns at most. */
const TOOL_WINDOW = 8_000;
/** Characters of all threads read_comments returns at most. */
const THREADS_CHARS = 16_000;
/** Model rounds at most (each tool round is one). */
const MAX_STEPS = 6;

function instructions(turn: AgentTurn, name: string, artifact: ArtifactWindow): string {
  const kind = kindOf(artifact.type);
  const self =
    turn.request.agent === 'Assistant'
      ? 'You are the workspace assistant of Tandem'
      : `You are ${turn.request.agent}, an agent installed in this Tandem workspace`;
  return [
    `${self}. ${name} mentioned you in a comment thread on the ${kind} “${artifact.title}”. Write your reply to them: markdown, to the point, in the language of their comment.`,
    `You see what ${name} can see, and only this ${kind} and its comment threads: the text you are given, more of it with read_artifact, and the other threads with read_comments.`,
    'You cannot change anything: your reply is the only thing you write. When asked to change the text, say what to change instead.',
  ].join('\n');
}

function firstMessage(
  name: string,
  thread: string,
  asking: { body: string },
  artifact: ArtifactWindow,
): string {
  const kind = kindOf(artifact.type);
  const size =
    artifact.size_chars === 0
      ? 'it has no content yet'
      : artifact.truncated
        ? `${artifact.size_chars} characters; the first ${artifact.text.length} are below, read_artifact reads the rest`
        : `${artifact.size_chars} characters, all below`;
  return [
    thread,
    `The comment you are answering, from ${name}:\n${asking.body}`,
    `The ${kind} “${artifact.title}” (${size}):`,
    `<<<${artifact.type}\n${artifact.text}\n>>>`,
  ].join('\n\n');
}

function tools(turn: AgentTurn, artifact: ArtifactWindow): ToolSet {
  const kind = kindOf(artifact.type);
  return {
    read_artifact: tool({
      description: `Read part of the ${kind} “${artifact.title}” (${artifact.size_chars} characters): up to ${TOOL_WINDOW} characters from offset.`,
      inputSchema: jsonSchema<{ offset?: number; window?: number }>({
        type: 'object',
        properties: {
          offset: { type: 'integer', minimum: 0, description: 'Where to start, in characters.' },
          window: { type: 'integer', minimum: 1, maximum: TOOL_WINDOW, description: 'How many characters.' },
        },
      }),
      execute: async ({ offset, window }) => {
        const read = await readArtifact(
          turn,
          Math.max(0, Math.floor(offset ?? 0)),
          Math.min(TOOL_WINDOW, Math.max(1, Math.floor(window ?? TOOL_WINDOW))),
        );
        return {
          text: read.text,
          offset: read.offset,
          size_chars: read.size_chars,
          truncated: read.truncated,
        };
      },
    }),
    read_comments: tool({
      description: `Read every comment thread on the ${kind}, resolved ones included.`,
      inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
      execute: async () => {
        const { threads } = await readThreads(turn);
        const text = threads.map((t) => threadText(t, null)).join('\n\n---\n\n');
        return { threads: text.length > THREADS_CHARS ? `${text.slice(0, THREADS_CHARS)}… (cut)` : text };
      },
    }),
  };
}

/**
 * The assistant: reads the thread and the artifact as the person who asked (at most
 * CONTEXT_CHARS of it up front, more through its tools) and answers with the model's text.
 */
export const assistant: Agent = async (turn): Promise<Outcome> => {
  const { threads } = await readThreads(turn);
  const thread = requestThread(threads, turn.request.thread_id);
  const asking = await askingComment(turn, thread);
  const artifact = await readArtifact(turn, 0, CONTEXT_CHARS);
  const name = asking.author_label;
  const text = await chat(turn.model, {
    instructions: instructions(turn, name, artifact),
    messages: [
      {
        role: 'user',
        content: firstMessage(name, threadText(thread, turn.request.comment_id), asking, artifact),
      },
    ],
    tools: tools(turn, artifact),
    maxSteps: MAX_STEPS,
    timeoutMs: turn.timeoutMs,
    signal: turn.signal,
    stream: true,
  });
  if (text.trim() === '') {
    return {
      status: 'failed',
      body: `The model gave an empty answer. Mention @${turn.request.agent} again to retry.`,
      errorCode: 'model_failed',
      error: 'empty answer',
    };
  }
  return { status: 'answered', body: text.trim() };
};
