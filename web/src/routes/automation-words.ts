import type { RunSummary } from '../../../src/contract/automations.ts';

const DEGRADED: Record<string, string> = {
  connector_disconnected: 'A connector it uses is not connected.',
  personal_connector_unavailable: 'A personal connection it uses is no longer available.',
  subflow_unavailable: 'An automation it runs as a step is gone or may not be run.',
  model_unavailable: 'No model is configured for its agent steps.',
  repeated_failures: 'Its last five runs failed.',
};

/** Why an automation cannot run as published, in a sentence. */
export const degradedText = (reason: string) => DEGRADED[reason] ?? reason;

export const FINAL_RUN = new Set(['succeeded', 'failed', 'cancelled']);
export const isActive = (run: Pick<RunSummary, 'status'>) => !FINAL_RUN.has(run.status);

const CAUSES: Record<string, string> = {
  schedule: 'Schedule',
  event: 'Event',
  manual: 'Run now',
  dry_run: 'Dry run',
  subflow: 'As a step',
  retry: 'Retry',
  replay: 'Replay',
};
export const causeText = (cause: string) => CAUSES[cause] ?? cause;
