import { LimitError } from '../errors.ts';

/**
 * What one run may cost. Each cap ends the step (or the run) with an error that names it, so no
 * plan — however it nests maps, chains templates or calls subflows — can exhaust the process.
 */
export interface RunLimits {
  /** Bytes of one node's stored output (its JSON). */
  nodeOutputBytes: number;
  /** Bytes of all node outputs of one run together. */
  runOutputBytes: number;
  /** Node executions of one run: every node, every map item's body nodes (nested maps multiply). */
  nodeExecutions: number;
  /** How deep subflows may nest under the run that started on its own. */
  subflowDepth: number;
  /** Runs in one subflow tree, the top run included. */
  subflowRuns: number;
  /** Wall time of one step's work (a capability call, a model call). */
  nodeWallMs: number;
  /** Workers that died while running a run before it is failed instead of taken up again. */
  crashes: number;
}

export const DEFAULT_LIMITS: RunLimits = {
  nodeOutputBytes: 256 * 1024,
  runOutputBytes: 4 * 1024 * 1024,
  nodeExecutions: 2_500,
  subflowDepth: 4,
  subflowRuns: 50,
  nodeWallMs: 120_000,
  crashes: 3,
};

export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/** Throws before a string of `length` characters is built when it would pass the output cap. */
export function checkLength(length: number, limits: RunLimits, what: string): void {
  if (length > limits.nodeOutputBytes) {
    throw new LimitError(
      `${what} would be ${length} characters; a step's output may be at most ${sizeText(limits.nodeOutputBytes)}`,
    );
  }
}

/** The stored JSON of a node's output, refused when it passes the node's or the run's cap. */
export function storedOutput(output: unknown, limits: RunLimits, runBytesSoFar: number): string | null {
  if (output === undefined) return null;
  let json: string;
  try {
    json = JSON.stringify(output);
  } catch (error) {
    if (error instanceof RangeError)
      throw new LimitError('the output is nested too deeply to store; flatten it in an earlier step');
    throw error;
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.nodeOutputBytes) {
    throw new LimitError(
      `the output is ${bytes} bytes; a step's output may be at most ${sizeText(limits.nodeOutputBytes)}`,
    );
  }
  if (runBytesSoFar + bytes > limits.runOutputBytes) {
    throw new LimitError(
      `the run's outputs would reach ${runBytesSoFar + bytes} bytes; a run's outputs may be at most ${sizeText(limits.runOutputBytes)} together`,
    );
  }
  return json;
}

/**
 * Lets the event loop serve other work (HTTP requests, tool calls) between steps: SQLite answers
 * synchronously, so a run's awaits alone never give the loop back.
 */
export function pacer(sliceMs = 8): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    last = performance.now();
  };
}
