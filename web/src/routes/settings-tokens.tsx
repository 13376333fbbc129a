import { useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { createToken, listTokens, revokeToken } from '../../../src/contract/settings.ts';
import { Field } from '../ui/field.tsx';
import { useRevoke } from '../ui/revoke.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';

/** What each scope lets an app or token do, as the consent page says it. */
export const SCOPE_WORDS: Record<string, string> = {
  'documents:read': 'Read your documents, pages and tables, and their comments',
  'documents:write': 'Create and change documents and pages, and comment on them',
  'automations:read': 'See your automations, their runs and sessions',
  'automations:write': 'Create, change and run automations, and decide approvals',
};

const EXPIRIES: [string, number | null][] = [
  ['7 days', 7],
  ['30 days', 30],
  ['90 days', 90],
  ['1 year', 365],
  ['Never', null],
];

function NewToken({ onMade }: { onMade: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['documents:read']);
  const [days, setDays] = useState('30');
  const [made, setMade] = useState<{ name: string; token: string } | undefined>();
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.perform(async () => {
      const token = await call(createToken, {
        body: { name, scopes, expires_in_days: days === 'never' ? null : Number(days) },
      });
      setMade({ name: token.name ?? name, token: token.token });
      setOpen(false);
      setName('');
      await onMade();
    });
  };
  return (
    <>
      {!open && (
        <p>
          <button type="button" className="primary" onClick={() => setOpen(true)}>
            New token
          </button>
        </p>
      )}
      {made && (
        <div className="made-token" role="status">
          <p>
            <strong>{made.name}</strong> was made. Copy it now: it is not shown again.
          </p>
          <Field label="Your new token" wide>
            <input readOnly value={made.token} onFocus={(e) => e.target.select()} />
          </Field>
          <button type="button" className="link" onClick={() => setMade(undefined)}>
            Done
          </button>
        </div>
      )}
      {open && (
        <form className="stack-form new-token" aria-label="New token" onSubmit={submit}>
          <Field label="Name">
            <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          <fieldset>
            <legend>What it may do</legend>
            {Object.entries(SCOPE_WORDS).map(([scope, words]) => (
              <label key={scope} className="check">
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={(e) =>
                    setScopes((s) => (e.target.checked ? [...s, scope] : s.filter((x) => x !== scope)))
                  }
                />{' '}
                {words} <code className="small">{scope}</code>
              </label>
            ))}
          </fieldset>
          <Field label="Expires after">
            <select value={days} onChange={(e) => setDays(e.target.value)}>
              {EXPIRIES.map(([label, n]) => (
                <option key={label} value={n === null ? 'never' : String(n)}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          <div className="buttons">
            <button type="submit" className="primary" disabled={action.busy}>
              Create token
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
          <ErrorNote error={action.error} />
        </form>
      )}
    </>
  );
}

/** `Access tokens`: `New token` (shown once), each token's last use, `Revoke` after a confirmation. */
export function AccessTokens() {
  const tokens = useResource('tokens', () => call(listTokens, {}));
  const revoking = useRevoke({
    revoke: (id) => call(revokeToken, { params: { id } }),
    reload: tokens.reload,
    question: (name) => `Revoke ${name}?`,
    done: (name) => `${name} was revoked; it stopped working at once.`,
    warning: <p>Anything using it stops working at once. This cannot be undone.</p>,
  });
  const list = tokens.data?.tokens ?? [];
  return (
    <section aria-labelledby="tokens-heading" className="panel">
      <h2 id="tokens-heading">Access tokens</h2>
      <p className="muted small">
        For scripts and MCP clients that send <code>Authorization: Bearer</code>. Each acts as you.
      </p>
      <NewToken onMade={tokens.reload} />
      <ErrorNote error={tokens.error ?? revoking.error} />
      {revoking.said && <p role="status">{revoking.said}</p>}
      {tokens.loading ? (
        <Loading what="tokens" />
      ) : list.length === 0 ? (
        <p className="muted">No personal access tokens.</p>
      ) : (
        <ul className="items">
          {list.map((t) => {
            const name = t.name ?? `Unnamed token ${t.token_id.slice(-6)}`;
            return (
              <li key={t.token_id}>
                <div>
                  <strong>{name}</strong>{' '}
                  <span className="muted small">
                    made <When at={t.created_at} /> ·{' '}
                    {t.expires_at === null ? (
                      'never expires'
                    ) : (
                      <>
                        expires <When at={t.expires_at} />
                      </>
                    )}{' '}
                    ·{' '}
                    {t.last_used_at === null ? (
                      'never used'
                    ) : (
                      <>
                        last used <When at={t.last_used_at} />
                      </>
                    )}
                  </span>
                  <div className="small muted">{t.scopes.join(', ')}</div>
                </div>
                <button type="button" onClick={() => revoking.ask({ id: t.token_id, name })}>
                  Revoke
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {revoking.dialog}
    </section>
  );
}
