import { useState } from 'react';
import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { listVersions, type VersionRow } from '../../../src/contract/documents.ts';
import { undoVersion } from '../../../src/contract/document-versions.ts';
import { ErrorNote, Loading } from './status.tsx';
import { When } from './time.tsx';
import { byline, ChangesDialog, RestoreDialog } from './version-changes.tsx';

const REASONS: Record<string, string> = {
  agent_edit: 'agent edit',
  edit: 'edit',
  restore: 'restore',
  export: 'export',
  named: 'named',
};

type Open = { row: VersionRow; kind: 'changes' | 'compare' | 'restore' } | undefined;

/** What an undo did, in one sentence. */
function undoneSentence(version: number, kept: string[]): string {
  const n = kept.length;
  const rest =
    n === 0
      ? ''
      : n === 1
        ? ' 1 passage was changed after this write and was kept.'
        : ` ${n} passages were changed after this write and were kept.`;
  return `Undid version ${version}.${rest}`;
}

/**
 * The version rows of a document or page, with who made each and why. `restore` (for those who
 * may write) writes a row's content as the next version, after a preview. On documents
 * (`changes`), every row can be compared with now, and a write that recorded what it changed
 * can be shown and, for those who may write (`undone`), undone alone.
 */
export function Versions({
  documentId,
  current,
  stamp,
  restore,
  changes = false,
  undone,
}: {
  documentId: string;
  current: number;
  stamp: string;
  restore?: ((versionId: string) => Promise<void>) | undefined;
  changes?: boolean;
  undone?: ((newVersion: number) => void) | undefined;
}) {
  const versions = useResource(`versions:${documentId}:${stamp}`, () =>
    call(listVersions, { params: { id: documentId } }),
  );
  const action = useAction();
  const [open, setOpen] = useState<Open>();
  const [said, setSaid] = useState('');
  const rows = versions.data?.versions ?? [];
  const undo = (v: VersionRow) =>
    void action.perform(async () => {
      const done = await call(undoVersion, {
        params: { id: documentId, version_id: v.version_id },
        body: {},
      });
      setSaid(
        done.changed
          ? undoneSentence(done.undone_version, done.kept)
          : `Nothing of version ${done.undone_version} was left to undo.`,
      );
      undone?.(done.new_version);
    });
  return (
    <section className="side-panel" aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <p className="small">Now at version {current}.</p>
      <p role="status" className="small">
        {said}
      </p>
      <ErrorNote error={versions.error ?? action.error} />
      {versions.loading && <Loading what="versions" />}
      {versions.data && rows.length === 0 && <p className="muted">No earlier versions yet.</p>}
      {rows.length > 0 && (
        <table className="compact versions">
          <caption className="visually-hidden">Earlier versions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Replaced by</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((v) => (
              <tr key={v.version_id}>
                <td>
                  {v.label ?? `Version ${v.doc_version}`}
                  {v.doc_version === current && v.reason !== 'agent_edit' && (
                    <span className="small muted"> (current)</span>
                  )}
                  <div className="small muted">
                    <When at={v.created_at} />
                  </div>
                </td>
                <td>
                  {REASONS[v.reason] ?? v.reason} by {byline(v)}
                  {v.instruction && <div className="small muted">{v.instruction}</div>}
                  <div className="row-actions">
                    {changes && v.undoable && (
                      <button
                        type="button"
                        className="link"
                        onClick={() => setOpen({ row: v, kind: 'changes' })}
                      >
                        Show changes
                      </button>
                    )}
                    {changes && (
                      <button
                        type="button"
                        className="link"
                        onClick={() => setOpen({ row: v, kind: 'compare' })}
                      >
                        Compare
                      </button>
                    )}
                    {changes && undone && v.undoable && (
                      <button type="button" className="link" disabled={action.busy} onClick={() => undo(v)}>
                        Undo
                      </button>
                    )}
                    {restore && !(v.doc_version === current && v.reason !== 'agent_edit') && (
                      <button
                        type="button"
                        className="link"
                        disabled={action.busy}
                        onClick={() => setOpen({ row: v, kind: 'restore' })}
                      >
                        Restore
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && open.kind !== 'restore' && (
        <ChangesDialog
          documentId={documentId}
          row={open.row}
          against={open.kind === 'compare' ? 'now' : 'previous'}
          onClose={() => setOpen(undefined)}
        />
      )}
      {open?.kind === 'restore' && restore && (
        <RestoreDialog
          documentId={documentId}
          row={open.row}
          restore={restore}
          preview={changes}
          onClose={() => setOpen(undefined)}
        />
      )}
    </section>
  );
}
