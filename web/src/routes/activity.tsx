import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import { listActivity, type ActivityEntry } from '../../../src/contract/people.ts';
import { Field } from '../ui/field.tsx';
import { objectPath } from '../ui/links.ts';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { StackTable } from '../ui/stack-table.tsx';
import { When } from '../ui/time.tsx';

const PAGE = 100;

/** The objects a call touched, by name; what the reader can no longer open is said, never shown. */
function Targets({ entry }: { entry: ActivityEntry }) {
  const named = entry.named ?? [];
  if (named.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="inline-list">
      {named.map((n) => {
        const path = n.open ? objectPath(n.id) : undefined;
        return (
          <li key={n.id}>
            {path ? <Link to={path}>{n.label}</Link> : <span className="muted">{n.label}</span>}
          </li>
        );
      })}
    </ul>
  );
}

/** A tool's name as words that break between words (`read_document` → `read document`). */
const toolWords = (tool: string) => tool.replace(/_/g, ' ');

export default function Activity() {
  useTitle('Agent activity');
  const [params, setParams] = useSearchParams();
  const tool = params.get('tool') ?? '';
  const outcome = params.get('outcome') ?? '';
  const via = params.get('via') ?? '';
  const [older, setOlder] = useState<ActivityEntry[]>([]);
  const first = useResource(`activity:${tool}:${outcome}:${via}`, async () => {
    setOlder([]);
    return call(listActivity, { query: { tool, outcome, via, limit: PAGE } });
  });
  const more = useAction();
  const rows = [...(first.data?.activity ?? []), ...older];
  const [exhausted, setExhausted] = useState(false);
  const canLoadMore = !exhausted && (first.data?.activity.length ?? 0) === PAGE;

  const filter = (name: 'tool' | 'outcome' | 'via', value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setExhausted(false);
    setParams(next);
  };

  return (
    <>
      <h1>Agent activity</h1>
      <p className="muted">Every tool call your agents made for you, reads included, newest first.</p>
      <div className="filters">
        <Field label="Tool">
          <select value={tool} onChange={(e) => filter('tool', e.target.value)}>
            <option value="">All tools</option>
            {first.data?.tools.map((t) => (
              <option key={t} value={t}>
                {toolWords(t)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="App">
          <select value={via} onChange={(e) => filter('via', e.target.value)}>
            <option value="">All apps and tokens</option>
            {first.data?.vias?.map((v) => (
              <option key={v.key} value={v.key}>
                {v.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Outcome">
          <select value={outcome} onChange={(e) => filter('outcome', e.target.value)}>
            <option value="">Any outcome</option>
            <option value="ok">Succeeded</option>
            <option value="error">Failed</option>
          </select>
        </Field>
      </div>
      <ErrorNote error={first.error ?? more.error} />
      {first.loading ? (
        <Loading what="activity" />
      ) : rows.length === 0 && !first.error ? (
        <p>
          {tool || outcome || via
            ? 'No tool calls match these filters.'
            : 'Your agents have made no tool calls yet.'}
        </p>
      ) : (
        <StackTable caption="Tool calls" columns={['When', 'Tool', 'Through', 'Outcome', 'Took', 'Objects']}>
          {rows.map((a) => (
            <tr key={a.id}>
              <td>
                <When at={a.at} />
              </td>
              <td data-label="Tool">{toolWords(a.tool)}</td>
              <td data-label="Through">{a.via ? `via ${a.via.label}` : '—'}</td>
              <td data-label="Outcome">
                {a.outcome === 'ok' ? (
                  <span className="ok">Succeeded</span>
                ) : (
                  <span className="warn">Failed{a.error_code ? ` (${a.error_code})` : ''}</span>
                )}
              </td>
              <td data-label="Took">{a.duration_ms} ms</td>
              <td data-label="Objects">
                <Targets entry={a} />
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      {canLoadMore && (
        <button
          type="button"
          disabled={more.busy}
          onClick={() =>
            void more.perform(async () => {
              const last = rows.at(-1);
              const page = await call(listActivity, {
                query: { tool, outcome, via, limit: PAGE, before: last?.id },
              });
              setOlder([...older, ...page.activity]);
              if (page.activity.length < PAGE) setExhausted(true);
            })
          }
        >
          Load older
        </button>
      )}
    </>
  );
}
