import { useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import {
  disconnectConnector,
  listConnectors,
  saveConnector,
  settingsAgents,
  settingsPeople,
  testConnector,
  type ConnectorSettings,
} from '../../../src/contract/settings.ts';
import { Confirm } from '../ui/confirm.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { Model } from './settings-model.tsx';

function People() {
  const people = useResource('settings-people', () => call(settingsPeople, {}));
  return (
    <section aria-labelledby="people-heading" className="panel">
      <h2 id="people-heading">People</h2>
      <ErrorNote error={people.error} />
      {people.loading ? (
        <Loading what="people" />
      ) : (
        <ul className="items">
          {people.data?.people.map((p) => (
            <li key={p.person_id}>
              <div>
                <strong>{p.name}</strong> <span className="muted small">{p.email}</span>
                <div className="small muted">
                  @{p.handle}
                  {p.admin ? ' · admin' : ''}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Agents() {
  const agents = useResource('settings-agents', () => call(settingsAgents, {}));
  return (
    <section aria-labelledby="agents-heading" className="panel">
      <h2 id="agents-heading">Agents</h2>
      <p className="muted small">People mention them in comments; they act with that person’s rights.</p>
      <ErrorNote error={agents.error} />
      {agents.loading ? (
        <Loading what="agents" />
      ) : (
        <ul className="items">
          {agents.data?.agents.map((a) => (
            <li key={a.handle}>
              <div>
                <strong>@{a.handle}</strong>
                <div className="small muted">{a.does}</div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One provider's settings: its fields (secrets write-only, shown as `set`), `Save`, `Test connection`, `Disconnect`. */
function Connector({
  connector,
  onChanged,
}: {
  connector: ConnectorSettings;
  onChanged: () => Promise<void>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [answer, setAnswer] = useState<{ ok: boolean; message: string } | undefined>();
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const c = connector;
  const save = (e: FormEvent) => {
    e.preventDefault();
    setAnswer(undefined);
    void action.perform(async () => {
      await call(saveConnector, { params: { provider: c.provider }, body: { settings: values } });
      setValues({});
      await onChanged();
      setAnswer({ ok: true, message: `${c.name} settings were saved.` });
    });
  };
  const test = () =>
    void action.perform(async () => {
      setAnswer(undefined);
      setAnswer(await call(testConnector, { params: { provider: c.provider }, body: {} }));
    });
  const headingId = `connector-${c.provider}`;
  return (
    <article className="card connector" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {c.name}{' '}
        <span className={`badge ${c.connected ? 'ok' : ''}`}>
          {c.connected ? 'Connected' : 'Not connected'}
        </span>
      </h3>
      <form className="stack-form" onSubmit={save} aria-label={`${c.name} settings`}>
        {c.fields.map((f) => {
          const id = `${c.provider}-${f.name}`;
          const shown = c.settings[f.name];
          return (
            <div className="field" key={f.name}>
              <label htmlFor={id}>
                {f.name}
                {f.required ? ' (required)' : ''}
                {f.secret && <span className="muted small"> · {shown ?? 'not set'}</span>}
              </label>
              <input
                id={id}
                type={f.secret ? 'password' : 'text'}
                autoComplete="off"
                placeholder={f.secret ? (shown === 'set' ? 'set (type to replace)' : '') : (f.default ?? '')}
                value={values[f.name] ?? (f.secret ? '' : (shown ?? ''))}
                onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
                aria-describedby={`${id}-about`}
              />
              <span id={`${id}-about`} className="small muted">
                {f.describe}
              </span>
            </div>
          );
        })}
        <div className="buttons">
          <button type="submit" className="primary" disabled={action.busy}>
            Save
          </button>
          {c.testable && (
            <button type="button" disabled={action.busy} onClick={test}>
              Test connection
            </button>
          )}
          {c.connected && (
            <button type="button" className="danger" disabled={action.busy} onClick={() => setAsking(true)}>
              Disconnect
            </button>
          )}
        </div>
        <ErrorNote error={action.error} />
        {answer && (
          <p role="status" className={answer.ok ? 'ok' : 'error'}>
            {answer.message}
          </p>
        )}
      </form>
      {asking && (
        <Confirm
          question={`Disconnect ${c.name}?`}
          confirm="Disconnect"
          busy={action.busy}
          onCancel={() => setAsking(false)}
          onConfirm={() =>
            void action.perform(async () => {
              await call(disconnectConnector, { params: { provider: c.provider } });
              setAsking(false);
              await onChanged();
              setAnswer({ ok: true, message: `${c.name} was disconnected; its settings are kept.` });
            })
          }
        >
          <p>Automations that use it stop being able to run until it is connected again.</p>
        </Confirm>
      )}
    </article>
  );
}

function Connectors() {
  const connectors = useResource('settings-connectors', () => call(listConnectors, {}));
  return (
    <section aria-labelledby="connectors-heading" className="panel">
      <h2 id="connectors-heading">Connectors</h2>
      <p className="muted small">
        The workspace’s shared connections. Secrets are write-only: they show as “set” and never come back.
      </p>
      <ErrorNote error={connectors.error} />
      {connectors.loading ? (
        <Loading what="connectors" />
      ) : (
        connectors.data?.connectors.map((c) => (
          <Connector key={c.provider} connector={c} onChanged={connectors.reload} />
        ))
      )}
    </section>
  );
}

/** The parts of Settings only workspace admins see. */
export function AdminSettings() {
  return (
    <>
      <People />
      <Agents />
      <Connectors />
      <Model />
    </>
  );
}
