import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { listDocuments } from '../../../src/contract/documents.ts';
import {
  describeDraft,
  describeStatus,
  draftFromTemplate,
  listDrafts,
  listTemplates,
  type DraftRow,
  type TemplateField,
} from '../../../src/contract/drafts.ts';
import { Field } from '../ui/field.tsx';
import { ErrorNote } from '../ui/status.tsx';
import { myZone, When } from '../ui/time.tsx';
import { useModal } from '../ui/dialog.tsx';
import '../styles/automations-app.css';

type Templates = Awaited<ReturnType<typeof call<typeof listTemplates>>>;
type Template = Templates['templates'][number];

const draftPage = (id: string) => `/automations/drafts/${encodeURIComponent(id)}`;

/** How often the dialog asks whether @Builder's draft is ready. */
const DRAFTING_POLL_MS = 1000;

function DescribeIt({ modelConfigured }: { modelConfigured: boolean }) {
  const navigate = useNavigate();
  const action = useAction();
  const [sentence, setSentence] = useState('');
  const [requestId, setRequestId] = useState<string | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  const heading = useId();
  // @Builder drafts in the background; the dialog asks where it is until the draft is there.
  useEffect(() => {
    if (!requestId) return;
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = () => {
      call(describeStatus, { params: { id: requestId } }).then(
        (state) => {
          if (!current) return;
          if (state.status === 'drafted') navigate(draftPage(state.flow_version_id));
          else if (state.status === 'failed') {
            setFailed(state.error);
            setRequestId(undefined);
          } else timer = setTimeout(ask, DRAFTING_POLL_MS);
        },
        (error: unknown) => {
          if (!current) return;
          setFailed((error as Error).message || 'Asking for the draft failed; try again.');
          setRequestId(undefined);
        },
      );
    };
    timer = setTimeout(ask, DRAFTING_POLL_MS / 2);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [requestId, navigate]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFailed(undefined);
    const started = await action.perform(() => call(describeDraft, { body: { sentence } }));
    if (started?.status === 'drafted') navigate(draftPage(started.flow_version_id));
    else if (started?.status === 'failed') setFailed(started.error);
    else if (started) setRequestId(started.request_id);
  };
  const drafting = action.busy || requestId !== undefined;
  return (
    <section aria-labelledby={heading}>
      <h3 id={heading}>Describe it</h3>
      {modelConfigured ? (
        <form onSubmit={submit}>
          <Field label="What should it do, and when?" wide>
            <textarea
              rows={3}
              required
              maxLength={2000}
              value={sentence}
              placeholder="Every Monday at 9, post a summary of the Roadmap document to the team."
              onChange={(e) => setSentence(e.target.value)}
            />
          </Field>
          <p className="muted small">@Builder drafts it; nothing runs until you publish it.</p>
          <ErrorNote error={action.error} />
          <div aria-live="polite">
            {drafting && (
              <p role="status" className="muted" aria-busy="true">
                @Builder is drafting it (this can take a minute); the draft opens when it is ready.
              </p>
            )}
            {failed && (
              <p role="alert" className="error">
                {failed}
              </p>
            )}
          </div>
          <button type="submit" className="primary" disabled={drafting || sentence.trim() === ''}>
            {drafting ? 'Drafting…' : 'Draft it'}
          </button>
        </form>
      ) : (
        <p>
          No model is configured, so @Builder cannot draft from a sentence here; an admin can connect one in
          Settings. Start from a template instead.
        </p>
      )}
    </section>
  );
}

function TemplateFieldInput({
  field,
  value,
  onChange,
  choices,
}: {
  field: TemplateField;
  value: string;
  onChange: (value: string, words?: string) => void;
  choices: { id: string; title: string }[] | undefined;
}) {
  if (field.kind === 'document' || field.kind === 'page') {
    return (
      <Field label={field.label}>
        <select
          required
          value={value}
          disabled={!choices}
          onChange={(e) => onChange(e.target.value, choices?.find((c) => c.id === e.target.value)?.title)}
        >
          <option value="">{choices ? 'Choose…' : 'Loading…'}</option>
          {(choices ?? []).map((c) => (
            <option key={c.id} value={c.id}>
              {c.title}
            </option>
          ))}
        </select>
      </Field>
    );
  }
  const placeholder: Record<string, string> = {
    repo: 'owner/name',
    channel: '#general',
    email: 'name@example.com',
  };
  return (
    <Field label={field.label} wide={field.kind === 'text'}>
      <input
        required
        type={field.kind === 'email' ? 'email' : 'text'}
        value={value}
        placeholder={placeholder[field.kind]}
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}

function FromTemplate({ templates }: { templates: Template[] }) {
  const navigate = useNavigate();
  const action = useAction();
  const heading = useId();
  const [chosen, setChosen] = useState<Template | undefined>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [words, setWords] = useState<Record<string, string>>({});
  const needsArtifacts = chosen?.fields.some((f) => f.kind === 'document' || f.kind === 'page') ?? false;
  const artifacts = useResource(needsArtifacts ? 'template-artifacts' : 'template-artifacts:none', () =>
    needsArtifacts ? call(listDocuments, { query: { limit: 50 } }) : Promise.resolve(undefined),
  );
  const choicesFor = (kind: string) =>
    artifacts.data?.documents
      .filter((d) => (kind === 'page' ? d.type === 'html_app' : d.type === 'document'))
      .map((d) => ({ id: d.document_id, title: d.title }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    const drafted = await action.perform(() =>
      call(draftFromTemplate, { body: { template_id: chosen.id, values, words, timezone: myZone() } }),
    );
    if (drafted) navigate(draftPage(drafted.flow_version_id));
  };
  return (
    <section aria-labelledby={heading}>
      <h3 id={heading}>Start from a template</h3>
      <ul className="templates" aria-label="Templates">
        {templates.map((t) => (
          <li key={t.id}>
            <button
              type="button"
              aria-pressed={chosen?.id === t.id}
              onClick={() => {
                setChosen(t);
                setValues({});
                setWords({});
                action.clear();
              }}
            >
              <span className="template-name">{t.name}</span>
              <span className="template-what">{t.description}</span>
            </button>
          </li>
        ))}
      </ul>
      {chosen && (
        <form onSubmit={submit} aria-label={`Fill in ${chosen.name}`}>
          <p className="muted small">
            {chosen.name}: fill in what it needs; you review the draft before anything runs.
          </p>
          {chosen.fields.map((f) => (
            <TemplateFieldInput
              key={f.name}
              field={f}
              value={values[f.name] ?? ''}
              choices={choicesFor(f.kind)}
              onChange={(v, w) => {
                setValues((all) => ({ ...all, [f.name]: v }));
                if (w !== undefined) setWords((all) => ({ ...all, [f.name]: w }));
              }}
            />
          ))}
          <ErrorNote error={action.error} />
          <button type="submit" className="primary" disabled={action.busy}>
            {action.busy ? 'Drafting…' : 'Draft from template'}
          </button>
        </form>
      )}
    </section>
  );
}

/** `New automation`: a dialog to describe one in a sentence or start from a template; both end on the draft. */
export function NewAutomation() {
  const [open, setOpen] = useState(false);
  const dialog = useModal(open);
  const templates = useResource('automation-templates', () => call(listTemplates, {}));
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        New automation
      </button>
      <dialog
        ref={dialog}
        className="new-automation"
        aria-labelledby="new-automation-title"
        onClose={() => setOpen(false)}
      >
        {open && (
          <>
            <div className="dialog-head">
              <h2 id="new-automation-title">New automation</h2>
              <button type="button" onClick={() => setOpen(false)}>
                Close
              </button>
            </div>
            <ErrorNote error={templates.error} />
            {templates.data && (
              <>
                <DescribeIt modelConfigured={templates.data.model_configured} />
                <FromTemplate templates={templates.data.templates} />
              </>
            )}
          </>
        )}
      </dialog>
    </>
  );
}

/** Who made a draft, in words: the person, an agent for them, or @Builder. */
export function madeBy(d: Pick<DraftRow, 'author' | 'made_by' | 'agent'>): string {
  if (d.agent) return `@${d.agent} for ${d.author}`;
  if (d.made_by === 'agent') return `An agent for ${d.author}`;
  return d.author;
}

/** The person's unpublished drafts, with who made each and when. */
export function Drafts() {
  const list = useResource('drafts', () => call(listDrafts, {}));
  const rows = list.data?.drafts ?? [];
  return (
    <section aria-labelledby="drafts">
      <h2 id="drafts">Drafts</h2>
      <ErrorNote error={list.error} />
      {list.data && rows.length === 0 ? (
        <p className="muted">
          No drafts. Drafts made here, by agents or by @Builder wait here until published.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <caption className="visually-hidden">Drafts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Made by</th>
                <th scope="col">When</th>
                <th scope="col">Steps</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.flow_version_id}>
                  <td>
                    <Link to={draftPage(d.flow_version_id)}>{d.name}</Link>
                    <div className="muted small">{d.ask}</div>
                  </td>
                  <td data-label="Made by">{madeBy(d)}</td>
                  <td data-label="When">
                    <When at={d.created_at} />
                  </td>
                  <td data-label="Steps">{d.steps.filter((s) => !/^\s/.test(s)).length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
