import { useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction } from '../hooks.ts';
import {
  readSharing,
  sharingChoices,
  writeSharing,
  type SharingState,
} from '../../../src/contract/sharing.ts';
import { Field } from './field.tsx';
import { useModal } from './dialog.tsx';
import { ErrorNote } from './status.tsx';

export type AudienceRole = 'editor' | 'commenter' | 'viewer';

/** The words for a role, as the Share dialog and the New document form offer them. */
export const ROLE_WORDS: Record<AudienceRole, string> = {
  editor: 'Can edit',
  commenter: 'Can comment',
  viewer: 'Can view',
};
const ROLES = Object.keys(ROLE_WORDS) as AudienceRole[];

/** `Who can open it` as one select's value: `user`, `org` or `pod:<id>`. */
export const audienceValue = (scope: string, podId?: string) => (scope === 'pod' ? `pod:${podId}` : scope);
export function audienceOf(value: string): { scope: 'user' | 'pod' | 'org'; pod_id?: string } {
  if (value.startsWith('pod:')) return { scope: 'pod', pod_id: value.slice(4) };
  return { scope: value === 'org' ? 'org' : 'user' };
}

/** A select of the three roles. */
export function RoleSelect({
  value,
  onChange,
  id,
  disabled,
  label,
}: {
  value: AudienceRole;
  onChange: (role: AudienceRole) => void;
  id?: string;
  disabled?: boolean;
  label?: string;
}) {
  return (
    <select
      id={id}
      aria-label={label}
      value={value}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value as AudienceRole)}
    >
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {ROLE_WORDS[r]}
        </option>
      ))}
    </select>
  );
}

type Choices = Awaited<ReturnType<typeof loadChoices>>;
const loadChoices = (id: string) => call(sharingChoices, { params: { id } });

/** The dialog's form, once the artifact's sharing and the choices are loaded. */
function ShareForm({
  artifactId,
  sharing,
  choices,
  close,
  saved,
}: {
  artifactId: string;
  sharing: SharingState;
  choices: Choices;
  close: () => void;
  saved: () => void;
}) {
  const [audience, setAudience] = useState(audienceValue(sharing.scope, sharing.pod_id));
  const [role, setRole] = useState<AudienceRole>(sharing.scope_role);
  const [people, setPeople] = useState(sharing.people);
  const [search, setSearch] = useState('');
  const action = useAction();
  const others = choices.people.filter((p) => !people.some((added) => added.user_id === p.user_id));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const { scope, pod_id } = audienceOf(audience);
    const done = await action.perform(() =>
      call(writeSharing, {
        params: { id: artifactId },
        body: {
          scope,
          ...(pod_id ? { pod_id } : {}),
          ...(scope === 'user' ? {} : { scope_role: role }),
          people: people.map((p) => ({ user_id: p.user_id, role: p.role })),
        },
      }),
    );
    if (done) saved();
  };

  return (
    <form onSubmit={submit} className="share-form">
      <div className="share-audience">
        <Field label="Who can open it">
          <select value={audience} autoFocus onChange={(e) => setAudience(e.target.value)}>
            <option value="user">Only people added</option>
            {choices.pods.map((p) => (
              <option key={p.pod_id} value={`pod:${p.pod_id}`}>
                {p.name}
              </option>
            ))}
            <option value="org">Everyone in {choices.workspace_name}</option>
          </select>
        </Field>
        {audience !== 'user' && (
          <Field label="Their role">
            <RoleSelect value={role} onChange={setRole} />
          </Field>
        )}
      </div>
      <Field label="Add people">
        <input
          list="share-people-options"
          value={search}
          autoComplete="off"
          placeholder={others.length ? 'Type a name…' : 'Everyone is added'}
          disabled={others.length === 0}
          onChange={(e) => {
            // A name picked from the list (or typed out in full) is added at once.
            const value = e.target.value;
            const person = others.find((p) => p.name.toLowerCase() === value.trim().toLowerCase());
            if (person) {
              setPeople([...people, { ...person, role: 'viewer' }]);
              setSearch('');
            } else setSearch(value);
          }}
          onKeyDown={(e) => {
            if (e.key !== 'Enter') return;
            // Enter adds the one person the typed text names; it never submits the dialog.
            e.preventDefault();
            const typed = search.trim().toLowerCase();
            const matches = others.filter((p) => p.name.toLowerCase().includes(typed));
            if (typed && matches.length === 1) {
              setPeople([...people, { ...matches[0]!, role: 'viewer' }]);
              setSearch('');
            }
          }}
        />
      </Field>
      <datalist id="share-people-options">
        {others.map((p) => (
          <option key={p.user_id} value={p.name} />
        ))}
      </datalist>
      {people.length > 0 ? (
        <ul className="share-people" aria-label="People added">
          {people.map((p) => (
            <li key={p.user_id}>
              <span className="share-name">{p.name}</span>
              <RoleSelect
                label={`Role of ${p.name}`}
                value={p.role}
                onChange={(r) =>
                  setPeople(people.map((q) => (q.user_id === p.user_id ? { ...q, role: r } : q)))
                }
              />
              <button type="button" onClick={() => setPeople(people.filter((q) => q.user_id !== p.user_id))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">No one is added by name.</p>
      )}
      <ErrorNote error={action.error} />
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={action.busy}>
          Save
        </button>
        <button type="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * `Share` and its dialog: who can open the document or page (only people added, a pod of the
 * owner's, or everyone in the workspace, with that audience's role) and the people added by
 * name, each with a role. Saving applies at once, on open live connections too.
 */
export function ShareButton({ artifactId, onSaved }: { artifactId: string; onSaved?: () => void }) {
  const [open, setOpen] = useState(false);
  const dialog = useModal(open);
  const [loaded, setLoaded] = useState<{ sharing: SharingState; choices: Choices } | undefined>();
  const [note, setNote] = useState('');
  const load = useAction();

  const start = async () => {
    setNote('');
    setLoaded(undefined);
    setOpen(true);
    const got = await load.perform(async () => {
      const [sharing, choices] = await Promise.all([
        call(readSharing, { params: { id: artifactId } }),
        loadChoices(artifactId),
      ]);
      return { sharing, choices };
    });
    if (got) setLoaded(got);
  };

  return (
    <>
      <button type="button" onClick={() => void start()}>
        Share
      </button>
      {note && (
        <span className="muted small" role="status">
          {note}
        </span>
      )}
      <dialog
        ref={dialog}
        className="share-dialog"
        aria-labelledby="share-title"
        onClose={() => setOpen(false)}
      >
        <h2 id="share-title">Share</h2>
        <ErrorNote error={load.error} />
        {open && !loaded && !load.error && <p className="muted">Loading…</p>}
        {open && loaded && (
          <ShareForm
            artifactId={artifactId}
            sharing={loaded.sharing}
            choices={loaded.choices}
            close={() => setOpen(false)}
            saved={() => {
              setOpen(false);
              setNote('Sharing saved');
              onSaved?.();
            }}
          />
        )}
      </dialog>
    </>
  );
}
