import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import { createDocument, listDocuments, type DocumentRow } from '../../../src/contract/documents.ts';
import { audiences } from '../../../src/contract/sharing.ts';
import { Field } from '../ui/field.tsx';
import { artifactPath, TYPE_NAMES } from '../ui/links.ts';
import { audienceOf, RoleSelect, type AudienceRole } from '../ui/share.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { StackTable } from '../ui/stack-table.tsx';
import { When } from '../ui/time.tsx';

/** Reads pages of the listing until `want` rows matched or the listing ends (a search filters each page). */
async function readRows(query: string, cursor: string | undefined, want: number) {
  const rows: DocumentRow[] = [];
  let next = cursor;
  for (let pages = 0; pages < 10; pages++) {
    const page = await call(listDocuments, { query: { query, cursor: next } });
    rows.push(...page.documents);
    next = page.next_cursor ?? undefined;
    if (!next || rows.length >= want) break;
  }
  return { rows, next };
}

/** `New document`: a title, and who can open it (only the creator unless they say otherwise). */
function NewDocument() {
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState('');
  const [audience, setAudience] = useState('user');
  const [role, setRole] = useState<AudienceRole>('editor');
  const choices = useResource(open ? 'audiences' : 'audiences:closed', async () =>
    open ? call(audiences, {}) : undefined,
  );
  const navigate = useNavigate();
  const action = useAction();
  const create = async (event: FormEvent) => {
    event.preventDefault();
    const { scope, pod_id } = audienceOf(audience);
    const made = await action.perform(() =>
      call(createDocument, {
        body: {
          title,
          scope,
          ...(pod_id ? { pod_id } : {}),
          ...(scope === 'user' ? {} : { scope_role: role }),
        },
      }),
    );
    if (made) void navigate(`/documents/${encodeURIComponent(made.document_id)}`);
  };
  if (!open) {
    return (
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        New document
      </button>
    );
  }
  return (
    <form className="inline-form new-document" aria-label="New document" onSubmit={create}>
      <Field label="Title">
        <input value={title} onChange={(e) => setTitle(e.target.value)} required autoFocus maxLength={200} />
      </Field>
      <Field label="Who can open it">
        <select value={audience} onChange={(e) => setAudience(e.target.value)}>
          <option value="user">Only me</option>
          {(choices.data?.pods ?? []).map((p) => (
            <option key={p.pod_id} value={`pod:${p.pod_id}`}>
              {p.name}
            </option>
          ))}
          <option value="org">Everyone in {choices.data?.workspace_name ?? 'the workspace'}</option>
        </select>
      </Field>
      {audience !== 'user' && (
        <Field label="Their role">
          <RoleSelect value={role} onChange={setRole} />
        </Field>
      )}
      <button type="submit" className="primary" disabled={action.busy}>
        Create
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorNote error={action.error ?? choices.error} />
    </form>
  );
}

export default function Documents() {
  useTitle('Documents');
  const [params, setParams] = useSearchParams();
  const query = params.get('q') ?? '';
  const [draft, setDraft] = useState(query);
  const [more, setMore] = useState<{ rows: DocumentRow[]; next: string | undefined } | undefined>();
  const first = useResource(`documents:${query}`, async () => {
    setMore(undefined);
    return readRows(query, undefined, 50);
  });
  const loadMore = useAction();
  const rows = [...(first.data?.rows ?? []), ...(more?.rows ?? [])];
  const next = more ? more.next : first.data?.next;

  const search = (event: FormEvent) => {
    event.preventDefault();
    setParams(draft.trim() ? { q: draft.trim() } : {});
  };

  return (
    <>
      <div className="page-head">
        <h1>Documents</h1>
        <NewDocument />
      </div>
      <form role="search" className="search" onSubmit={search}>
        <label htmlFor="search">Search</label>
        <input id="search" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={first.error ?? loadMore.error} />
      {first.loading ? (
        <Loading what="documents" />
      ) : rows.length === 0 && !first.error ? (
        <p>
          {query ? `Nothing you can open matches “${query}”.` : 'You have no documents, pages or tables yet.'}
        </p>
      ) : (
        <StackTable
          caption={
            query
              ? `Documents, pages and tables matching “${query}”`
              : 'Documents, pages and tables you can open'
          }
          columns={['Title', 'Type', 'Owner', 'Your role', 'Last edited']}
        >
          {rows.map((d) => (
            <tr key={d.document_id}>
              <td>
                <Link to={artifactPath(d.type, d.document_id)}>{d.title}</Link>
                {d.status === 'archived' && <span className="badge">archived</span>}
              </td>
              <td data-label="Type">{TYPE_NAMES[d.type]}</td>
              <td data-label="Owner">{d.owner_label ?? '—'}</td>
              <td data-label="Your role">{d.role}</td>
              <td data-label="Last edited">
                <When at={d.last_edited_at} />
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      {next && (
        <button
          type="button"
          disabled={loadMore.busy}
          onClick={() =>
            void loadMore.perform(async () => {
              const page = await readRows(query, next, 50);
              setMore({ rows: [...(more?.rows ?? []), ...page.rows], next: page.next });
            })
          }
        >
          Load more
        </button>
      )}
    </>
  );
}
