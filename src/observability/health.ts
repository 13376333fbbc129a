/** Whether this process's run engine is looking for work: its last look, if it runs one. */
let lastTick: number | undefined;
let expectedEveryMs = 0;

export function engineRunning(pollMs: number): void {
  expectedEveryMs = pollMs;
  lastTick = Date.now();
}

export function engineTicked(): void {
  if (lastTick !== undefined) lastTick = Date.now();
}

export function engineStopped(): void {
  lastTick = undefined;
}

/** `ok` when the engine looked for work lately, `stalled` when it has not, undefined without one. */
export function engineHealth(): string | undefined {
  if (lastTick === undefined) return undefined;
  return Date.now() - lastTick <= Math.max(10_000, expectedEveryMs * 10) ? 'ok' : 'stalled';
}
