import { useCallback, useState } from 'react';
import { useParams } from 'react-router';
import { call } from '../api.ts';
import { useResource, useTitle } from '../hooks.ts';
import { readPage, restorePage } from '../../../src/contract/pages.ts';
import { Comments, type ThreadFocus } from '../ui/comments.tsx';
import { ExportMenu } from '../ui/export-menu.tsx';
import { ShareButton } from '../ui/share.tsx';
import { useHashFocus, useThreads } from '../ui/threads.ts';
import { ErrorNote, LoadFailure, Loading } from '../ui/status.tsx';
import { ArtifactHead } from '../ui/artifact-head.tsx';
import { Versions } from '../ui/versions.tsx';

/**
 * An HTML page in its sandboxed frame (no scripts, no same-origin: the page is served from the
 * pages origin through a short-lived signed link), with its comments and versions beside it.
 */
export default function PageView() {
  const { id = '' } = useParams();
  const page = useResource(`page:${id}`, () => call(readPage, { params: { id } }));
  const [exports, setExports] = useState(0);
  useTitle(page.data ? page.data.title : page.error?.notFound ? 'Page not found' : 'Page');
  const threads = useThreads(id);
  const [focus, setFocus] = useState<ThreadFocus | undefined>();
  const focusThread = useCallback(
    (threadId: string) => setFocus((f) => ({ threadId, n: (f?.n ?? 0) + 1 })),
    [],
  );
  useHashFocus(threads, focusThread);

  if (page.error && !page.data) return <LoadFailure error={page.error} what="Page" />;
  if (!page.data) return <Loading what="the page" />;
  const p = page.data;
  const mayWrite = (p.role === 'owner' || p.role === 'editor') && !p.archived;
  const restore = async (versionId: string) => {
    await call(restorePage, {
      params: { id: p.page_id },
      body: { version_id: versionId, expected_version: p.version },
    });
    await page.reload();
  };
  return (
    <div className="viewer">
      <div className="viewer-main">
        <ArtifactHead title={p.title}>
          Page · version {p.version} · you are {p.role === 'owner' ? 'its owner' : `a ${p.role}`}
        </ArtifactHead>
        <div className="artifact-actions">
          {p.may_share && <ShareButton artifactId={p.page_id} />}
          <ExportMenu artifactId={p.page_id} formats={['html']} exported={() => setExports((n) => n + 1)} />
        </div>
        {p.archived && (
          <p className="note" role="status">
            This page is archived.
          </p>
        )}
        <ErrorNote error={page.error} />
        <iframe
          key={p.frame.src}
          className="page-frame"
          title={p.title}
          src={p.frame.src}
          sandbox={p.frame.sandbox}
          referrerPolicy="no-referrer"
        />
      </div>
      <div className="viewer-side">
        <Comments documentId={p.page_id} archived={p.archived} threads={threads} focus={focus} />
        <Versions
          documentId={p.page_id}
          current={p.version}
          stamp={`${p.version}:${exports}`}
          restore={mayWrite ? restore : undefined}
        />
      </div>
    </div>
  );
}
