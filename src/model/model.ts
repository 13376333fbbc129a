import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  generateText,
  jsonSchema,
  Output,
  stepCountIs,
  streamText,
  tool,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import type { Capability } from '../capabilities/capability.ts';
import { holdSecrets, maskDeep } from '../observability/secrets.ts';
import { StepError } from '../errors.ts';

/** An OpenAI-compatible endpoint (TANDEM_MODEL_URL, TANDEM_MODEL_KEY, TANDEM_MODEL). */
export interface ModelConfig {
  url: string;
  key?: string | undefined;
  model: string;
}

export interface ModelCall {
  instructions: string;
  input: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | undefined;
  /** Read capabilities the model may call. */
  tools: Capability[];
  callTool(capability: Capability, input: Record<string, unknown>): Promise<Record<string, unknown>>;
  signal: AbortSignal;
}

const MAX_TOOL_STEPS = 8;

const ajv = new Ajv2020({ strict: false, allErrors: true });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

/** A validator for an agent node's output_schema, compiled once per distinct schema. */
function compile(schema: Record<string, unknown>) {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    if (compiled.size > 500) compiled.clear();
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      throw new StepError(`output_schema is not a usable JSON Schema: ${(error as Error).message}`);
    }
    compiled.set(key, validate);
  }
  return validate;
}

function providerFor(config: ModelConfig) {
  // The key is masked wherever text leaves the process (an endpoint may quote it back).
  holdSecrets([config.key]);
  return createOpenAICompatible({
    name: 'tandem-model',
    baseURL: config.url,
    // The output schema goes to the model as a JSON Schema response format.
    supportsStructuredOutputs: true,
    ...(config.key ? { apiKey: config.key } : {}),
  });
}

/** A model call that did not give an answer: the endpoint failed, or it took too long. */
export class ModelError extends Error {
  readonly timedOut: boolean;
  constructor(message: string, timedOut = false) {
    super(message);
    this.timedOut = timedOut;
  }
}

/** A conversation with the model: its instructions, the messages so far and the tools it may call. */
export interface ChatCall {
  instructions: string;
  messages: ModelMessage[];
  tools?: ToolSet | undefined;
  /** Model steps at most (each tool round is one). */
  maxSteps?: number | undefined;
  /** The whole call, tool rounds included, ends after this long. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Receive the answer as a stream of server-sent events. */
  stream?: boolean | undefined;
}

/** One answer from the model (after any tool rounds), as text; a failure or timeout is a ModelError. */
export async function chat(config: ModelConfig, call: ChatCall): Promise<string> {
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const settings = {
    model: providerFor(config).chatModel(config.model),
    instructions: call.instructions,
    messages: call.messages,
    ...(call.tools && Object.keys(call.tools).length
      ? { tools: call.tools, stopWhen: stepCountIs(call.maxSteps ?? MAX_TOOL_STEPS) }
      : {}),
    maxRetries: 1,
    abortSignal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
  };
  try {
    if (!call.stream) return (await generateText(settings)).text;
    // Errors are read from the stream below; the default handler would only print them.
    const result = streamText({ ...settings, onError: () => {} });
    let failure: unknown;
    // A provider error arrives as a part of the stream, not as a rejection.
    for await (const part of result.stream) if (part.type === 'error') failure ??= part.error;
    if (failure !== undefined) throw failure;
    return await result.text;
  } catch (error) {
    if (timeout.aborted) {
      throw new ModelError(`the model did not answer within ${call.timeoutMs / 1000} s`, true);
    }
    if (call.signal?.aborted) throw new ModelError('the call was stopped');
    const message = error instanceof Error ? error.message : String(error);
    throw new ModelError(`the model call failed: ${message}`);
  }
}

/** Runs an agent node: one generation, with read tools and structured output when asked. */
export async function callModel(
  config: ModelConfig | undefined,
  call: ModelCall,
): Promise<Record<string, unknown>> {
  if (!config) {
    throw new StepError(
      'model_unavailable: no model is configured; set TANDEM_MODEL_URL and TANDEM_MODEL (and TANDEM_MODEL_KEY if the endpoint needs one)',
    );
  }
  const provider = providerFor(config);
  const tools: ToolSet = {};
  for (const cap of call.tools) {
    tools[cap.key.replace('.', '__')] = tool({
      description: cap.describe,
      inputSchema: jsonSchema(z.toJSONSchema(cap.input, { io: 'input' }) as Parameters<typeof jsonSchema>[0]),
      execute: async (input: unknown) => call.callTool(cap, (input ?? {}) as Record<string, unknown>),
    });
  }
  const prompt = Object.keys(call.input).length
    ? `${call.instructions}\n\nInput:\n${JSON.stringify(call.input, null, 2)}`
    : call.instructions;
  try {
    const result = await generateText({
      model: provider.chatModel(config.model),
      prompt,
      ...(call.tools.length ? { tools, stopWhen: stepCountIs(MAX_TOOL_STEPS) } : {}),
      ...(call.outputSchema
        ? {
            output: Output.object({
              schema: jsonSchema(call.outputSchema as Parameters<typeof jsonSchema>[0]),
            }),
          }
        : {}),
      maxRetries: 1,
      abortSignal: AbortSignal.any([call.signal, AbortSignal.timeout(120_000)]),
    });
    if (call.outputSchema) {
      const output = result.output as unknown;
      const validate = compile(call.outputSchema);
      if (!validate(output)) {
        const problems = (validate.errors ?? []).map(
          (e) => `${e.instancePath || 'output'} ${e.message ?? ''}`,
        );
        throw new StepError(`the model's answer does not follow output_schema: ${problems.join('; ')}`, {
          retryable: true,
        });
      }
      return maskDeep(output as Record<string, unknown>);
    }
    return { text: maskDeep(result.text) };
  } catch (error) {
    if (error instanceof StepError) throw error;
    throw new StepError(`the model call failed: ${(error as Error).message}`, { retryable: true });
  }
}
