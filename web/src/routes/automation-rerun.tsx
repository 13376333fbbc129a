import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { rerunPreview, startRerun, type RerunChoice } from '../../../src/contract/automations.ts';
import { ErrorNote, Loading } from '../ui/status.tsx';

const list = (ids: string[]) => (ids.length ? ids.join(', ') : 'none');

function writesText(choice: RerunChoice): string {
  if (choice.writes_again.length === 0) return 'No write happens again.';
  const named = choice.writes_again.map((w) =>
    w.capability ? `${w.node_id} (${w.capability})` : `${w.node_id} (runs automation ${w.subflow})`,
  );
  return `Writes that happen again: ${named.join(', ')}.`;
}

function versionText(choice: RerunChoice, mode: 'retry' | 'replay'): string {
  if (mode === 'replay') return `Runs version ${choice.version}, the live one, with this run’s input.`;
  return choice.version === choice.live_version
    ? `Runs version ${choice.version} again, from the failed step.`
    : `Runs version ${choice.version}, the one this run ran (version ${choice.live_version} is live), from the failed step.`;
}

/**
 * Retry from the failed step and replay with the same input, for those who may run the
 * automation: each says which version will run and which steps' writes would happen again.
 */
export function Rerun({
  automationId,
  runId,
  onStarted,
}: {
  automationId: string;
  runId: string;
  onStarted: (runId: string) => void;
}) {
  const preview = useResource(`rerun:${runId}`, () =>
    call(rerunPreview, { params: { id: automationId, run_id: runId } }),
  );
  const action = useAction();
  const start = (mode: 'retry' | 'replay') =>
    action.perform(async () => {
      const started = await call(startRerun, {
        params: { id: automationId, run_id: runId },
        body: { mode },
      });
      onStarted(started.run_id);
    });
  if (preview.loading) return <Loading what="what running it again would do" />;
  if (preview.error) return <ErrorNote error={preview.error} />;
  const p = preview.data;
  if (!p) return null;
  const choices: [mode: 'retry' | 'replay', label: string, choice: RerunChoice][] = [
    ['retry', 'Retry from the failed step', p.retry],
    ['replay', 'Replay with the same input', p.replay],
  ];
  return (
    <section className="rerun" aria-labelledby="rerun-title">
      <h4 id="rerun-title">Run it again</h4>
      {choices.map(([mode, label, choice]) => (
        <div key={mode} className="rerun-choice">
          <button
            type="button"
            onClick={() => void start(mode)}
            disabled={action.busy || !choice.available}
            aria-describedby={`rerun-${mode}`}
          >
            {label}
          </button>
          <p id={`rerun-${mode}`} className="small">
            {choice.available ? (
              <>
                {versionText(choice, mode)}
                {mode === 'retry' && <> Steps that run: {list(choice.steps)}.</>} {writesText(choice)}
                {p.dry_run && ' Writes stay simulated, as in this dry run.'}
              </>
            ) : (
              <span className="muted">{choice.reason}</span>
            )}
          </p>
        </div>
      ))}
      <ErrorNote error={action.error} />
    </section>
  );
}
