import { useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiFailure, call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import {
  dryRunDraft,
  publishDraft,
  readDraft,
  redraft,
  type DraftDetail,
} from '../../../src/contract/drafts.ts';
import type { AutomationDetail } from '../../../src/contract/automations.ts';
import { Field } from '../ui/field.tsx';
import { PlanDiagram, type DiagramEdge, type DiagramNode } from '../ui/plan-diagram.tsx';
import { ErrorNote, LoadFailure, Loading } from '../ui/status.tsx';
import { myZone, When } from '../ui/time.tsx';
import {
  parsePlanText,
  ScheduleFields,
  scheduleForm,
  scheduleTrigger,
  type ScheduleForm,
} from './automation-edit.tsx';
import { madeBy } from './automation-new.tsx';
import { RunDetail } from './automation-runs.tsx';
import { PlanForms } from './plan-forms.tsx';

type Trigger = AutomationDetail['trigger'];

const DEFAULT_SCHEDULE: ScheduleForm = { frequency: 'weekly', weekday: 1, hour: 9, minute: 0, timezone: '' };

/**
 * Focuses a step's form, as a diagram node's Enter does. The forms appear once the capabilities'
 * schemas have loaded; a node opened before that is focused when its form appears (within a few seconds).
 */
function openStep(id: string) {
  const elementId = `step-${id.split('.').pop() ?? id}`;
  const focus = (form: HTMLElement) => {
    form.scrollIntoView({ block: 'start' });
    form.focus();
  };
  const form = document.getElementById(elementId);
  if (form) return focus(form);
  const watcher = new MutationObserver(() => {
    const appeared = document.getElementById(elementId);
    if (!appeared) return;
    stop();
    focus(appeared);
  });
  const timer = setTimeout(() => stop(), 5000);
  const stop = () => {
    watcher.disconnect();
    clearTimeout(timer);
  };
  watcher.observe(document.body, { childList: true, subtree: true });
}

function PublishForm({
  draft,
  onDryRun,
}: {
  draft: DraftDetail;
  onDryRun: (draftId: string, runId: string) => void;
}) {
  const navigate = useNavigate();
  const original = useMemo(() => JSON.stringify(draft.plan_json, null, 2), [draft.plan_json]);
  const proposed = draft.trigger;
  const [starts, setStarts] = useState<'schedule' | 'event'>(
    proposed && proposed.kind !== 'schedule' ? 'event' : 'schedule',
  );
  const [schedule, setSchedule] = useState<ScheduleForm>(
    () => (proposed && scheduleForm(proposed)) || { ...DEFAULT_SCHEDULE, timezone: myZone() },
  );
  const [eventJson, setEventJson] = useState(() =>
    JSON.stringify(
      proposed && proposed.kind !== 'schedule'
        ? proposed
        : { kind: 'connector_event', provider: 'workspace', event: 'document.edited' },
      null,
      2,
    ),
  );
  const [name, setName] = useState(draft.name);
  const [scope, setScope] = useState<'personal' | 'workspace'>('personal');
  const [ask, setAsk] = useState(draft.ask);
  const [writeApproval, setWriteApproval] = useState(draft.write_approval);
  const [plan, setPlan] = useState(original);
  const action = useAction();
  const changed = plan !== original || ask !== draft.ask || writeApproval !== draft.write_approval;

  const trigger = (): Trigger => {
    if (starts === 'schedule') return scheduleTrigger(schedule);
    try {
      return JSON.parse(eventJson) as Trigger;
    } catch (error) {
      throw new ApiFailure(
        400,
        'invalid_argument',
        `The trigger is not valid JSON: ${(error as Error).message}.`,
      );
    }
  };

  /** The version to publish: this one, or the edited plan stored as the draft's next version first. */
  const version = async () => {
    if (!changed) return draft.flow_version_id;
    const next = await call(redraft, {
      params: { id: draft.flow_version_id },
      body: { plan_json: parsePlanText(plan), ask, write_approval: writeApproval },
    });
    return next.flow_version_id;
  };

  const act = (dry: boolean) => async (event?: FormEvent) => {
    event?.preventDefault();
    await action.perform(async () => {
      if (dry) {
        // The draft runs as it is: no trigger, name or scope, and nothing is published.
        const id = await version();
        const run = await call(dryRunDraft, { params: { id }, body: {} });
        onDryRun(id, run.run_id);
      } else {
        const body = { trigger: trigger(), name, scope };
        const id = await version();
        const published = await call(publishDraft, { params: { id }, body });
        navigate(`/automations/${encodeURIComponent(published.automation_id)}`);
      }
    });
  };

  return (
    <form className="editor" onSubmit={act(false)} noValidate aria-label="Publish the draft">
      <fieldset>
        <legend>Trigger</legend>
        <Field label="Starts">
          <select value={starts} onChange={(e) => setStarts(e.target.value as 'schedule' | 'event')}>
            <option value="schedule">On a schedule</option>
            <option value="event">On an event (JSON)</option>
          </select>
        </Field>
        {starts === 'schedule' ? (
          <ScheduleFields form={schedule} set={setSchedule} />
        ) : (
          <Field label="Trigger (JSON)" wide>
            <textarea
              rows={5}
              spellCheck={false}
              value={eventJson}
              onChange={(e) => setEventJson(e.target.value)}
            />
          </Field>
        )}
      </fieldset>
      <fieldset>
        <legend>Settings</legend>
        <Field label="Name">
          <input value={name} required maxLength={200} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Scope">
          <select value={scope} onChange={(e) => setScope(e.target.value as 'personal' | 'workspace')}>
            <option value="personal">Personal (only you)</option>
            <option value="workspace">Workspace (admins)</option>
          </select>
        </Field>
        <Field label="Writes">
          <select
            value={writeApproval}
            onChange={(e) => setWriteApproval(e.target.value as typeof writeApproval)}
          >
            <option value="required">need an approval step first</option>
            <option value="automatic">run unattended</option>
          </select>
        </Field>
        <Field label="Ask" wide>
          <input value={ask} required maxLength={1000} onChange={(e) => setAsk(e.target.value)} />
        </Field>
      </fieldset>
      <PlanForms
        text={plan}
        setText={setPlan}
        problems={action.error?.errors ?? []}
        triggerKind={starts === 'schedule' ? 'schedule' : undefined}
      />
      {action.error && (
        <p className="error" role="alert">
          {action.error.errors.length
            ? `Nothing was published: the validator found ${action.error.errors.length === 1 ? 'a problem' : `${action.error.errors.length} problems`}, shown at the steps above.`
            : action.error.message}
        </p>
      )}
      <p className="muted small">
        A dry run runs this draft once, as it is, with every write simulated; nothing is published and nothing
        runs on its trigger. Publish turns it on.
      </p>
      <div className="controls">
        <button type="button" onClick={() => void act(true)()} disabled={action.busy}>
          Dry run
        </button>
        <button type="submit" className="primary" disabled={action.busy}>
          Publish
        </button>
      </div>
    </form>
  );
}

/** A draft: its steps and diagram, editable, with `Dry run` and `Publish` (trigger, scope, write approval). */
export default function Draft() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const runId = params.get('run') ?? undefined;
  const draft = useResource(`draft:${id}`, () => call(readDraft, { params: { id } }));
  useTitle(draft.data ? `${draft.data.name} · Draft` : draft.error?.notFound ? 'Draft not found' : 'Draft');
  if (draft.error && !draft.data) return <LoadFailure error={draft.error} what="Draft" />;
  if (!draft.data) return <Loading what="the draft" />;
  const d = draft.data;
  const plan = d.plan_json as { nodes?: DiagramNode[]; edges?: DiagramEdge[] };
  const automation = d.automation;
  return (
    <>
      <p className="crumbs">
        <Link to="/automations">Automations</Link> › Drafts
      </p>
      <h1>{d.name}</h1>
      <p className="lead">{d.ask}</p>
      <p className="muted">
        Draft, version {d.version}, made by {madeBy(d)}, <When at={d.created_at} />.{' '}
        {d.writes.length
          ? `It writes with ${d.writes.join(', ')}; ${d.write_approval === 'automatic' ? 'the writes run unattended' : 'each write waits for an approval'}.`
          : 'It writes nothing.'}
      </p>
      {automation && (
        <p role="status">
          {automation.enabled ? 'Published and on' : 'Published, paused'}:{' '}
          <Link to={`/automations/${encodeURIComponent(automation.automation_id)}`}>open the automation</Link>
          .
        </p>
      )}
      <PlanDiagram nodes={plan.nodes ?? []} edges={plan.edges} onOpen={openStep} />
      {runId && (
        <RunDetail
          key={runId}
          draftId={d.flow_version_id}
          runId={runId}
          canControl={false}
          onClose={() =>
            navigate(`/automations/drafts/${encodeURIComponent(d.flow_version_id)}`, { replace: true })
          }
          onOpen={() => undefined}
        />
      )}
      <section aria-labelledby="publish">
        <h2 id="publish">Review and publish</h2>
        <PublishForm
          key={d.flow_version_id}
          draft={d}
          onDryRun={(draftId, run) => {
            navigate(`/automations/drafts/${encodeURIComponent(draftId)}?run=${encodeURIComponent(run)}`, {
              replace: draftId === d.flow_version_id,
            });
          }}
        />
      </section>
      <ErrorNote error={draft.error} />
    </>
  );
}
