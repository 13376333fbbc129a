import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, Output, stepCountIs, tool, type ToolSet } from 'ai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import type { Capability } from '../domains/automations/catalogue.ts';
import { StepError } from './values.ts';

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
  const provider = createOpenAICompatible({
    name: 'tandem-model',
    baseURL: config.url,
    // The output schema goes to the model as a JSON Schema response format.
    supportsStructuredOutputs: true,
    ...(config.key ? { apiKey: config.key } : {}),
  });
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
      return output as Record<string, unknown>;
    }
    return { text: result.text };
  } catch (error) {
    if (error instanceof StepError) throw error;
    throw new StepError(`the model call failed: ${(error as Error).message}`, { retryable: true });
  }
}
