import { useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import { me } from '../../../src/contract/people.ts';
import { changePassword, listApps, revokeApp } from '../../../src/contract/settings.ts';
import { Field } from '../ui/field.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';
import { AdminSettings } from './settings-admin.tsx';
import { useRevoke } from '../ui/revoke.tsx';
import { AccessTokens, SCOPE_WORDS } from './settings-tokens.tsx';

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    void action.perform(async () => {
      await call(changePassword, { body: { current_password: current, new_password: next } });
      setCurrent('');
      setNext('');
      setDone(true);
    });
  };
  return (
    <section aria-labelledby="password-heading" className="panel">
      <h2 id="password-heading">Password</h2>
      <form className="stack-form" onSubmit={submit}>
        <Field label="Current password">
          <input
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </Field>
        <Field label="New password">
          <input
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
        </Field>
        <div className="buttons">
          <button type="submit" className="primary" disabled={action.busy}>
            Change password
          </button>
        </div>
        <ErrorNote error={action.error} />
        {done && <p role="status">Your password was changed; other browsers were signed out.</p>}
      </form>
    </section>
  );
}

function ConnectedApps() {
  const apps = useResource('apps', () => call(listApps, {}));
  const revoking = useRevoke({
    revoke: (id) => call(revokeApp, { params: { id } }),
    reload: apps.reload,
    question: (name) => `Disconnect ${name}?`,
    done: (name) => `${name} was disconnected; its tokens stopped working.`,
    warning: <p>It stops working at once, everywhere; connecting it again asks you again.</p>,
  });
  const list = apps.data?.apps ?? [];
  return (
    <section aria-labelledby="apps-heading" className="panel">
      <h2 id="apps-heading">Connected apps</h2>
      <ErrorNote error={apps.error ?? revoking.error} />
      {revoking.said && <p role="status">{revoking.said}</p>}
      {apps.loading ? (
        <Loading what="connected apps" />
      ) : list.length === 0 ? (
        <p className="muted">No apps are connected. An MCP client connects by signing you in here.</p>
      ) : (
        <ul className="items">
          {list.map((a) => (
            <li key={a.grant_id}>
              <div>
                <strong>{a.client_name}</strong>{' '}
                <span className="muted small">
                  {a.redirect_host} · connected <When at={a.created_at} />
                </span>
                <div className="small muted">{a.scopes.map((s) => SCOPE_WORDS[s] ?? s).join('; ')}</div>
              </div>
              <button type="button" onClick={() => revoking.ask({ id: a.grant_id, name: a.client_name })}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      {revoking.dialog}
    </section>
  );
}

export default function Settings() {
  useTitle('Settings');
  const person = useResource('me', () => call(me, {}));
  return (
    <>
      <h1>Settings</h1>
      {person.data && (
        <p className="muted">
          Signed in as {person.data.name} ({person.data.email}) in {person.data.workspace.name}.
        </p>
      )}
      <ErrorNote error={person.error} />
      <div className="settings">
        <Password />
        <ConnectedApps />
        <AccessTokens />
        {person.data?.admin && <AdminSettings />}
      </div>
    </>
  );
}
