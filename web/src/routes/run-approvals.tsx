import { call } from '../api.ts';
import { usePolling, useResource } from '../hooks.ts';
import { runApprovals } from '../../../src/contract/people.ts';
import { ApprovalCard } from '../ui/approval.tsx';
import { ErrorNote } from '../ui/status.tsx';

/** The approvals a run asked for, decidable here; followed while one waits. */
export function RunApprovals({
  automationId,
  runId,
  onDecided,
}: {
  automationId: string;
  runId: string;
  /** The run moves on once decided: its page loads it again. */
  onDecided: () => Promise<unknown>;
}) {
  const approvals = useResource(`run-approvals:${runId}`, () =>
    call(runApprovals, { params: { id: automationId, run_id: runId } }),
  );
  const list = approvals.data?.approvals ?? [];
  usePolling(
    list.some((a) => a.status === 'pending'),
    3000,
    approvals.reload,
  );
  if (list.length === 0) return <ErrorNote error={approvals.error} />;
  return (
    <section aria-labelledby={`approvals-${runId}`}>
      <h4 id={`approvals-${runId}`}>Approvals of this run</h4>
      <ErrorNote error={approvals.error} />
      <ul className="cards">
        {list.map((a) => (
          <li key={a.approval_id}>
            <ApprovalCard
              card={a}
              showAutomation={false}
              onDecided={async () => {
                await approvals.reload();
                await onDecided();
              }}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}
