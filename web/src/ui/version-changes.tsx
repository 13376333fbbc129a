import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { versionChanges } from '../../../src/contract/document-versions.ts';
import type { VersionRow } from '../../../src/contract/documents.ts';
import { Dialog } from './dialog.tsx';
import { ErrorNote, Loading } from './status.tsx';
import { When } from './time.tsx';

/** Who made a version, in words: an agent for the person it acted for, or the person. */
export function byline(v: Pick<VersionRow, 'by' | 'reason' | 'author_label' | 'instruction'>): string {
  if (v.by === 'agent' || v.reason === 'agent_edit')
    return `Agent for ${v.author_label ?? 'a person no longer here'}`;
  if (v.author_label) return v.author_label;
  const several = /by (\d+) people/.exec(v.instruction ?? '');
  return several ? `${several[1]} people` : 'a person no longer here';
}

/** Text added and removed, as `ins` and `del`, under headings a person can move between. */
function ChangeList({
  added,
  removed,
  addedTitle,
  removedTitle,
}: {
  added: string[];
  removed: string[];
  addedTitle: string;
  removedTitle: string;
}) {
  if (added.length === 0 && removed.length === 0) return <p className="muted">No text differs.</p>;
  return (
    <div className="change-list">
      {added.length > 0 && (
        <section>
          <h3>{addedTitle}</h3>
          <ul>
            {added.map((text, i) => (
              <li key={i}>
                <ins>{text.trim()}</ins>
              </li>
            ))}
          </ul>
        </section>
      )}
      {removed.length > 0 && (
        <section>
          <h3>{removedTitle}</h3>
          <ul>
            {removed.map((text, i) => (
              <li key={i}>
                <del>{text.trim()}</del>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}

function useChanges(documentId: string, versionId: string, against: 'now' | 'previous') {
  return useResource(`changes:${documentId}:${versionId}:${against}`, () =>
    call(versionChanges, { params: { id: documentId, version_id: versionId }, query: { against } }),
  );
}

function usePreview(preview: boolean, documentId: string, versionId: string) {
  return useResource(`preview:${documentId}:${versionId}:${preview}`, async () =>
    preview
      ? call(versionChanges, { params: { id: documentId, version_id: versionId }, query: { against: 'now' } })
      : undefined,
  );
}

/**
 * `Changes`: what one write added and removed (`previous`), or how a version differs from the
 * document now (`now`), with who wrote it for whom and when.
 */
export function ChangesDialog({
  documentId,
  row,
  against,
  onClose,
}: {
  documentId: string;
  row: VersionRow;
  against: 'now' | 'previous';
  onClose: () => void;
}) {
  const changes = useChanges(documentId, row.version_id, against);
  const c = changes.data;
  return (
    <Dialog title="Changes" onClose={onClose}>
      <p className="small muted">
        {against === 'now'
          ? `Version ${row.doc_version} against the document now`
          : `Version ${row.made_version ?? row.doc_version}`}
        {' · '}
        {byline(row)} · <When at={row.created_at} />
      </p>
      <ErrorNote error={changes.error} />
      {changes.loading && <Loading what="the changes" />}
      {c &&
        (against === 'now' ? (
          <ChangeList
            added={c.removed}
            removed={c.added}
            addedTitle={`Only in version ${row.doc_version}`}
            removedTitle="Only in the document now"
          />
        ) : (
          <ChangeList added={c.added} removed={c.removed} addedTitle="Added" removedTitle="Removed" />
        ))}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

/** `Restore version <n>?`: what restoring would bring back and take away, then `Restore` or `Cancel`. */
export function RestoreDialog({
  documentId,
  row,
  restore,
  preview,
  onClose,
}: {
  documentId: string;
  row: VersionRow;
  restore: (versionId: string) => Promise<void>;
  /** Whether what would change can be shown first (documents). */
  preview: boolean;
  onClose: () => void;
}) {
  const changes = usePreview(preview, documentId, row.version_id);
  const action = useAction();
  const c = changes.data;
  return (
    <Dialog title={`Restore version ${row.doc_version}?`} onClose={onClose}>
      <p>The document’s text becomes this version’s, as a new version; nothing earlier is lost.</p>
      <ErrorNote error={changes.error ?? action.error} />
      {preview && changes.loading && <Loading what="what would change" />}
      {c && <ChangeList added={c.removed} removed={c.added} addedTitle="Comes back" removedTitle="Goes" />}
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={action.busy}
          onClick={() =>
            void action.perform(async () => {
              await restore(row.version_id);
              onClose();
            })
          }
        >
          Restore
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
