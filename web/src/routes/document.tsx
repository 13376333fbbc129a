import DOMPurify from 'dompurify';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type FormEvent,
  type RefObject,
} from 'react';
import { Navigate, useParams } from 'react-router';
import { call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import { readDocument } from '../../../src/contract/documents.ts';
import {
  agentBlocks,
  nameDocumentVersion,
  restoreDocumentVersion,
} from '../../../src/contract/document-versions.ts';
import { agentMarks, setAgentMarks, type AgentMark } from '../editor/agent-marks.ts';
import { markdownRenderer } from '../../../src/http/view/rendered-markdown.ts';
import { commentAnchors, passageOf, showAnchors } from '../editor/anchors.ts';
import { markdownOf } from '../editor/binding.ts';
import { createEditor, type LiveEditor } from '../editor/codemirror.ts';
import { colorOf, useLive, type Live, type Present } from '../editor/live.ts';
import '../editor/cm-base.css';
import '../editor/editor.css';
import { FormattingToolbar } from '../editor/toolbar.tsx';
import { Comments, type ThreadFocus } from '../ui/comments.tsx';
import { ExportMenu } from '../ui/export-menu.tsx';
import { Field } from '../ui/field.tsx';
import { highlightPassages, selectPassage } from '../ui/highlight.ts';
import { ShareButton } from '../ui/share.tsx';
import { anchorsOf, useHashFocus, useThreads, type PassageAnchor } from '../ui/threads.ts';
import { ErrorNote, LoadFailure, Loading, NotFound } from '../ui/status.tsx';
import { ArtifactHead } from '../ui/artifact-head.tsx';
import { Versions } from '../ui/versions.tsx';

/** Every window of a document's markdown, read in turn (a read returns at most 24,000 characters). */
async function readAll(id: string) {
  const first = await call(readDocument, { params: { id } });
  let markdown = first.markdown;
  let next = first;
  for (let reads = 0; next.truncated && reads < 20; reads++) {
    next = await call(readDocument, {
      params: { id },
      query: { offset: next.offset + next.markdown.length },
    });
    markdown += next.markdown;
  }
  return { ...first, markdown };
}

/** The one renderer of people's markdown in the app, on an instance of its own. */
const render = markdownRenderer(DOMPurify(window));

/**
 * Markdown rendered, then sanitised: nothing in a document can run script in the app, take input,
 * or link to anything on the app's origin but its pages.
 */
function Rendered({
  markdown,
  anchors = NONE,
  onActivate,
  root,
}: {
  markdown: string;
  /** Passages to highlight (open threads' anchors). */
  anchors?: readonly PassageAnchor[];
  /** A highlighted passage was clicked, or Enter pressed on it. */
  onActivate?: (threadId: string) => void;
  root?: RefObject<HTMLDivElement | null>;
}) {
  const html = useMemo(() => render(markdown, window.location.href), [markdown]);
  const own = useRef<HTMLDivElement>(null);
  const ref = root ?? own;
  // Before paint: new HTML never shows, nor can be read, without its highlights.
  useLayoutEffect(() => {
    if (ref.current) highlightPassages(ref.current, anchors);
  }, [html, anchors, ref]);
  const activate = (target: EventTarget) => {
    const threadId =
      target instanceof Element ? target.closest('mark[data-thread]')?.getAttribute('data-thread') : null;
    if (threadId && onActivate) onActivate(threadId);
  };
  return (
    <div
      ref={ref}
      className="prose"
      dangerouslySetInnerHTML={{ __html: html }}
      onClick={(e) => {
        if (!window.getSelection()?.toString()) activate(e.target);
      }}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          if (e.target instanceof Element && e.target.matches('mark[data-thread]')) e.preventDefault();
          activate(e.target);
        }
      }}
    />
  );
}

const NONE: readonly PassageAnchor[] = [];

/** What the editor does for the page around it: show a thread's passage. */
export interface EditorHandle {
  showPassage(threadId: string): boolean;
}

/** Who is connected to the document, agents included (from the live socket's awareness). */
function PeopleHere({ people }: { people: Present[] }) {
  return (
    <section className="people-here" aria-labelledby="people-here">
      <h2 id="people-here" className="small">
        People here
      </h2>
      <ul aria-labelledby="people-here">
        {people.map((p) => (
          <li key={p.clientId} className={colorOf(p.clientId)}>
            {p.name}
            {p.self && <span className="muted"> (you)</span>}
            {p.agent && (
              <span className="muted">
                {' '}
                (agent{p.forName ? ` for ${p.forName}` : ''}
                {p.writing ? ', writing' : ''})
              </span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The live editor over the shared document; the selection goes to comments and awareness. */
function Editor({
  live,
  onSelection,
  anchors,
  onActivate,
  handleRef,
  marks,
}: {
  live: Live;
  onSelection: (text: string) => void;
  anchors: readonly PassageAnchor[];
  onActivate: (threadId: string) => void;
  handleRef: RefObject<EditorHandle | null>;
  /** Passages agents wrote recently, marked with who wrote them for whom (none: keep those shown). */
  marks?: AgentMark[] | undefined;
}) {
  const parent = useRef<HTMLDivElement>(null);
  const editor = useRef<LiveEditor | undefined>(undefined);
  const select = useRef(onSelection);
  const activate = useRef(onActivate);
  useEffect(() => {
    select.current = onSelection;
    activate.current = onActivate;
  });
  useEffect(() => {
    if (!parent.current) return;
    const made = createEditor(parent.current, live.doc, {
      onSelection: (anchor, head, text) => {
        live.provider.setAwarenessField('cursor', { anchor, head });
        select.current(text);
      },
      extensions: [commentAnchors((threadId) => activate.current(threadId)), agentMarks],
    });
    editor.current = made;
    handleRef.current = {
      showPassage(threadId) {
        const passage = passageOf(made.view, threadId);
        if (!passage) return false;
        made.view.dispatch({
          selection: { anchor: passage.from, head: passage.to },
          scrollIntoView: true,
        });
        made.view.focus();
        return true;
      },
    };
    return () => {
      live.provider.setAwarenessField('cursor', null);
      made.destroy();
      editor.current = undefined;
      handleRef.current = null;
    };
  }, [live.doc, live.provider, handleRef]);
  // The passages are placed when the threads change, and again once the text settles after
  // changes (between, they move with the text).
  useEffect(() => {
    const place = () => {
      if (editor.current) showAnchors(editor.current.view, live.doc, anchors);
    };
    place();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(place, 400);
    };
    live.doc.on('update', changed);
    return () => {
      clearTimeout(timer);
      live.doc.off('update', changed);
    };
  }, [anchors, live.doc]);
  useEffect(() => {
    editor.current?.showCursors(
      live.people
        .filter((p) => !p.self && p.cursor)
        .map((p) => ({
          clientId: p.clientId,
          name: p.name,
          anchor: p.cursor!.anchor,
          head: p.cursor!.head,
          color: colorOf(p.clientId),
        })),
    );
  }, [live.people]);
  useEffect(() => {
    if (marks) editor.current?.view.dispatch({ effects: setAgentMarks.of(marks) });
  }, [marks, live.doc]);
  return (
    <div className="editor-frame">
      <FormattingToolbar view={() => editor.current?.view} />
      <div className="live-editor" ref={parent} />
      <p id="editor-keys" className="editor-keys muted small">
        Tab indents list items and code; elsewhere, or after Esc, it moves on. Alt+Enter in a highlighted
        passage opens its comment.
      </p>
    </div>
  );
}

/** The shared document's markdown, rendered, following changes as they arrive. */
function LiveRead({
  live,
  ...highlight
}: {
  live: Live;
  anchors: readonly PassageAnchor[];
  onActivate: (threadId: string) => void;
  root: RefObject<HTMLDivElement | null>;
}) {
  const [markdown, setMarkdown] = useState(() => markdownOf(live.doc));
  useEffect(() => {
    const changed = () => setMarkdown(markdownOf(live.doc));
    changed();
    live.doc.on('update', changed);
    return () => live.doc.off('update', changed);
  }, [live.doc]);
  return markdown.trim() === '' ? (
    <p className="muted">This document is empty.</p>
  ) : (
    <Rendered markdown={markdown} {...highlight} />
  );
}

function NameVersion({ documentId, named }: { documentId: string; named: () => void }) {
  const [label, setLabel] = useState('');
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await action.perform(async () => {
      await call(nameDocumentVersion, { params: { id: documentId }, body: { label } });
      return true;
    });
    if (done) {
      setLabel('');
      named();
    }
  };
  return (
    <form className="side-panel name-version" onSubmit={submit}>
      <Field label="Version name">
        <input value={label} maxLength={200} onChange={(e) => setLabel(e.target.value)} />
      </Field>
      <button type="submit" disabled={action.busy || label.trim() === ''}>
        Name this version
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}

/** What the read view says to someone who cannot edit, so the difference from the editor is no surprise. */
function readerWords(role: string): string | undefined {
  if (role === 'commenter') return 'You can comment';
  if (role === 'viewer') return 'You can view';
  return undefined;
}

/** A document: the live editor for editors, a rendered read view for others, comments and versions beside it. */
export default function DocumentView() {
  const { id = '' } = useParams();
  const doc = useResource(`document:${id}`, () => readAll(id));
  // Only a document is live: a table (or a page) never asks for a socket.
  const live = useLive(doc.data?.type === 'document' ? id : undefined);
  const [selection, setSelection] = useState('');
  const [stamp, setStamp] = useState(0);
  const threads = useThreads(id);
  const threadList = threads.threads.data?.threads;
  const anchors = useMemo(() => anchorsOf(threadList ?? []), [threadList]);
  const [focus, setFocus] = useState<ThreadFocus | undefined>();
  const focusThread = useCallback(
    (threadId: string) => setFocus((f) => ({ threadId, n: (f?.n ?? 0) + 1 })),
    [],
  );
  useHashFocus(threads, focusThread);
  // Sharing changed the person's role while the document is open: the threads (and what the
  // panel offers) are read again with it.
  const role = doc.data?.role;
  const reloadThreads = threads.threads.reload;
  const roleSeen = useRef(role);
  useEffect(() => {
    if (roleSeen.current !== undefined && roleSeen.current !== role) void reloadThreads();
    roleSeen.current = role;
  }, [role, reloadThreads]);
  const editorHandle = useRef<EditorHandle | null>(null);
  const readRoot = useRef<HTMLDivElement>(null);
  const showPassage = useCallback((threadId: string) => {
    if (editorHandle.current?.showPassage(threadId)) return;
    if (readRoot.current) selectPassage(readRoot.current, threadId);
  }, []);
  useTitle(doc.data ? doc.data.title : doc.error?.notFound ? 'Document not found' : 'Document');

  // Passages agents wrote in the last day, marked in the editor (re-read as the versions are).
  const marked = useResource(`agent-blocks:${id}:${stamp}`, () => call(agentBlocks, { params: { id } }));
  // None while the next answer loads: the editor keeps the marks it shows until then.
  const marks = useMemo(
    () => marked.data?.blocks.map((b) => ({ text: b.text, by: b.by_label })),
    [marked.data],
  );

  // The version list follows stored changes: re-read a little after the text settles.
  const [version, setVersion] = useState<number | undefined>();
  useEffect(() => {
    if (!live) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => setStamp((s) => s + 1), 3000);
    };
    live.doc.on('update', changed);
    return () => {
      clearTimeout(timer);
      live.doc.off('update', changed);
    };
  }, [live?.doc]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (stamp === 0) return;
    call(readDocument, { params: { id }, query: { offset: 0 } }).then(
      (d) => setVersion(d.version),
      () => undefined,
    );
  }, [stamp, id]);

  // Sharing changed what the person may do while they had it open: read their role again.
  const liveScope = live?.synced ? live.scope : undefined;
  const { reload } = doc;
  const seenScope = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!liveScope) return;
    if (seenScope.current && seenScope.current !== liveScope) void reload();
    seenScope.current = liveScope;
  }, [liveScope]); // eslint-disable-line react-hooks/exhaustive-deps

  // The person can no longer open it (its sharing changed): it reads as not found.
  if (live?.gone) return <NotFound what="Document" />;
  if (doc.error && !doc.data) return <LoadFailure error={doc.error} what="Document" />;
  if (!doc.data) return <Loading what="the document" />;
  const d = doc.data;
  if (d.type === 'html_app') return <Navigate to={`/pages/${encodeURIComponent(d.document_id)}`} replace />;
  const current = Math.max(version ?? 0, d.version);
  const editing =
    d.type === 'document' && !d.archived && live?.synced === true && live.scope === 'read-write';
  const mayWrite = d.type === 'document' && !d.archived && live?.scope === 'read-write';
  const restore = async (versionId: string) => {
    const done = await call(restoreDocumentVersion, {
      params: { id: d.document_id },
      body: { version_id: versionId },
    });
    setVersion(done.new_version);
    setStamp((s) => s + 1);
  };
  return (
    <div className="viewer document-page">
      <article className="viewer-main document">
        <ArtifactHead title={d.title}>
          {d.type === 'table' ? 'Table' : 'Document'} · version {current}
          {live && !live.connected && live.synced && ' · reconnecting…'}
        </ArtifactHead>
        <div className="artifact-actions">
          {d.may_share && <ShareButton artifactId={d.document_id} />}
          {d.type === 'document' && (
            <ExportMenu
              artifactId={d.document_id}
              formats={['markdown', 'html']}
              exported={() => setStamp((s) => s + 1)}
            />
          )}
        </div>
        {d.archived && (
          <p className="note" role="status">
            This document is archived
          </p>
        )}
        {d.type === 'document' && !d.archived && !editing && readerWords(d.role) && (
          <p className="note reader-note">{readerWords(d.role)}</p>
        )}
        <ErrorNote error={doc.error} />
        {live?.failed && <p className="error">{live.failed}</p>}
        {live?.readOnlyReason && (
          <p className="note" role="status">
            {live.readOnlyReason}
          </p>
        )}
        {live && <PeopleHere people={live.people} />}
        {editing ? (
          <Editor
            live={live}
            onSelection={setSelection}
            anchors={anchors}
            onActivate={focusThread}
            handleRef={editorHandle}
            marks={marks}
          />
        ) : live?.synced && d.type === 'document' ? (
          <div
            onMouseUp={() => setSelection(window.getSelection()?.toString() ?? '')}
            onKeyUp={() => setSelection(window.getSelection()?.toString() ?? '')}
          >
            <LiveRead live={live} anchors={anchors} onActivate={focusThread} root={readRoot} />
          </div>
        ) : d.markdown.trim() === '' ? (
          <p className="muted">This document is empty.</p>
        ) : (
          <div onMouseUp={() => setSelection(window.getSelection()?.toString() ?? '')}>
            <Rendered markdown={d.markdown} anchors={anchors} onActivate={focusThread} root={readRoot} />
          </div>
        )}
      </article>
      <div className="viewer-side">
        <Comments
          documentId={d.document_id}
          archived={d.archived}
          selection={selection}
          threads={threads}
          focus={focus}
          showPassage={showPassage}
        />
        <Versions
          documentId={d.document_id}
          current={current}
          stamp={`${d.version}:${stamp}`}
          restore={mayWrite ? restore : undefined}
          changes
          undone={
            mayWrite
              ? (v: number) => {
                  setVersion(v);
                  setStamp((s) => s + 1);
                }
              : undefined
          }
        />
        {mayWrite && <NameVersion documentId={d.document_id} named={() => setStamp((s) => s + 1)} />}
      </div>
    </div>
  );
}
