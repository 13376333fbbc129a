import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { listVersions } from '../../../src/http/contract/documents.ts';
import { ErrorNote, Loading } from './status.tsx';
import { When } from './time.tsx';

const REASONS: Record<string, string> = {
  agent_edit: 'agent edit',
  edit: 'edit',
  restore: 'restore',
  export: 'export',
  named: 'named',
};

/**
 * The version rows of a document or page, with author and reason. `restore` (for those who may
 * write) writes a row's content as the next version.
 */
export function Versions({
  documentId,
  current,
  stamp,
  restore,
}: {
  documentId: string;
  current: number;
  stamp: string;
  restore?: ((versionId: string) => Promise<void>) | undefined;
}) {
  const versions = useResource(`versions:${documentId}:${stamp}`, () =>
    call(listVersions, { params: { id: documentId } }),
  );
  const action = useAction();
  const rows = versions.data?.versions ?? [];
  return (
    <section className="side-panel" aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <p className="small">Now at version {current}.</p>
      <ErrorNote error={versions.error ?? action.error} />
      {versions.loading && <Loading what="versions" />}
      {versions.data && rows.length === 0 && <p className="muted">No earlier versions yet.</p>}
      {rows.length > 0 && (
        <table className="compact">
          <caption className="visually-hidden">Earlier versions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Replaced by</th>
              {restore && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((v) => (
              <tr key={v.version_id}>
                <td>
                  {v.label ?? `Version ${v.doc_version}`}
                  <div className="small muted">
                    <When at={v.created_at} />
                  </div>
                </td>
                <td>
                  {REASONS[v.reason] ?? v.reason} by {v.author_label ?? 'someone'}
                  {v.instruction && <div className="small muted">{v.instruction}</div>}
                </td>
                {restore && (
                  <td>
                    <button
                      type="button"
                      disabled={action.busy}
                      onClick={() => void action.perform(() => restore(v.version_id))}
                    >
                      Restore
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
