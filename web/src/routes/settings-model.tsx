import { useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { disconnectModel, modelSettings, saveModel, testModel } from '../../../src/contract/settings.ts';
import { Confirm } from '../ui/confirm.tsx';
import { ErrorNote } from '../ui/status.tsx';

const SOURCE_WORDS = {
  workspace: 'Connected in this workspace',
  server: 'Set by the server',
  none: 'Not connected',
} as const;

/**
 * The assistant's model: the endpoint's base URL, the model's name and a write-only key (shown as
 * `set`), `Save`, `Test connection` and `Disconnect`. Takes effect at the next answer.
 */
export function Model() {
  const model = useResource('settings-model', () => call(modelSettings, {}));
  const [edits, setEdits] = useState<{ url?: string; model?: string; key?: string }>({});
  const [answer, setAnswer] = useState<{ ok: boolean; message: string } | undefined>();
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const m = model.data;
  const own = m?.source === 'workspace';
  const url = edits.url ?? (own ? (m?.url ?? '') : '');
  const name = edits.model ?? (own ? (m?.model ?? '') : '');
  const save = (e: FormEvent) => {
    e.preventDefault();
    setAnswer(undefined);
    void action.perform(async () => {
      await call(saveModel, { body: { url, model: name, ...(edits.key ? { key: edits.key } : {}) } });
      setEdits({});
      await model.reload();
      setAnswer({ ok: true, message: 'The model was saved; the assistant answers through it from now on.' });
    });
  };
  const test = () =>
    void action.perform(async () => {
      setAnswer(undefined);
      setAnswer(await call(testModel, { body: {} }));
    });
  return (
    <section aria-labelledby="model-heading" className="panel">
      <h2 id="model-heading">Assistant model</h2>
      <p className="muted small">
        The model @Assistant, @Builder and automations’ model steps answer through: an OpenAI-compatible
        endpoint. The key is write-only: it shows as “set” and never comes back.
      </p>
      <ErrorNote error={model.error} />
      {m && (
        <article className="card connector" aria-labelledby="model-state">
          <h3 id="model-state">
            {m.model ?? 'No model'}{' '}
            <span className={`badge ${m.configured ? 'ok' : ''}`}>{SOURCE_WORDS[m.source]}</span>
          </h3>
          <p className="small">
            {m.configured ? (
              <>
                Answers through <strong>{m.model}</strong> at <code className="wrap">{m.url}</code> (key{' '}
                {m.key}).
              </>
            ) : (
              'No model is connected: the assistant tells people it is not set up yet.'
            )}
          </p>
          <p className="small muted">{m.how}</p>
          <form className="stack-form" onSubmit={save} aria-label="Assistant model settings">
            <div className="field">
              <label htmlFor="model-url">Endpoint URL (required)</label>
              <input
                id="model-url"
                type="url"
                autoComplete="off"
                required
                placeholder="https://api.openai.com/v1"
                value={url}
                onChange={(e) => setEdits((v) => ({ ...v, url: e.target.value }))}
              />
            </div>
            <div className="field">
              <label htmlFor="model-name">Model (required)</label>
              <input
                id="model-name"
                type="text"
                autoComplete="off"
                required
                placeholder="gpt-4o-mini"
                value={name}
                onChange={(e) => setEdits((v) => ({ ...v, model: e.target.value }))}
              />
            </div>
            <div className="field">
              <label htmlFor="model-key">
                API key<span className="muted small"> · {own ? m.key : 'not set'}</span>
              </label>
              <input
                id="model-key"
                type="password"
                autoComplete="off"
                placeholder={own && m.key === 'set' ? 'set (type to replace)' : ''}
                value={edits.key ?? ''}
                onChange={(e) => setEdits((v) => ({ ...v, key: e.target.value }))}
              />
            </div>
            <div className="buttons">
              <button type="submit" className="primary" disabled={action.busy}>
                Save
              </button>
              {m.configured && (
                <button type="button" disabled={action.busy} onClick={test}>
                  Test connection
                </button>
              )}
              {own && (
                <button
                  type="button"
                  className="danger"
                  disabled={action.busy}
                  onClick={() => setAsking(true)}
                >
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
        </article>
      )}
      {asking && (
        <Confirm
          question="Disconnect the assistant’s model?"
          confirm="Disconnect"
          busy={action.busy}
          onCancel={() => setAsking(false)}
          onConfirm={() =>
            void action.perform(async () => {
              const after = await call(disconnectModel, {});
              setAsking(false);
              setEdits({});
              await model.reload();
              setAnswer({
                ok: true,
                message: after.configured
                  ? 'This workspace’s model was removed; the server’s model answers again.'
                  : 'The model was disconnected; the assistant tells people it is not set up yet.',
              });
            })
          }
        >
          <p>The key is forgotten. The assistant, @Builder and model steps stop using this model at once.</p>
        </Confirm>
      )}
    </section>
  );
}
