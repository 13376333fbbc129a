import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import { ApiFailure, call } from '../api.ts';
import { useAction } from '../hooks.ts';
import {
  draftVersion,
  publishVersion,
  triggerPreview,
  type AutomationDetail,
  type SchedulePreview,
} from '../../../src/contract/automations.ts';
import { ErrorNote } from '../ui/status.tsx';
import { Field } from '../ui/field.tsx';
import { myZone } from '../ui/time.tsx';
import { Firings } from './automation-schedule.tsx';
import { PlanForms } from './plan-forms.tsx';

type Trigger = AutomationDetail['trigger'];
type Frequency = 'hourly' | 'daily' | 'weekdays' | 'weekly';
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const zones = () => (typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []);

export interface ScheduleForm {
  frequency: Frequency;
  weekday: number;
  hour: number;
  minute: number;
  timezone: string;
}

export function scheduleForm(trigger: Trigger): ScheduleForm | undefined {
  if (trigger.kind !== 'schedule') return undefined;
  const t = trigger as Partial<ScheduleForm>;
  return {
    frequency: t.frequency ?? 'daily',
    weekday: t.weekday ?? 1,
    hour: t.hour ?? 9,
    minute: t.minute ?? 0,
    timezone: t.timezone ?? myZone(),
  };
}

/** A schedule with exactly the fields its frequency takes (publish refuses the others). */
export function scheduleTrigger(f: ScheduleForm): Trigger {
  const base = { kind: 'schedule' as const, minute: f.minute, timezone: f.timezone };
  if (f.frequency === 'hourly') return { ...base, frequency: 'hourly' };
  if (f.frequency === 'weekly') return { ...base, frequency: 'weekly', weekday: f.weekday, hour: f.hour };
  return { ...base, frequency: f.frequency, hour: f.hour };
}

export function ScheduleFields({ form, set }: { form: ScheduleForm; set: (f: ScheduleForm) => void }) {
  const list = useId();
  const number = (value: string) => (value === '' ? 0 : Number(value));
  return (
    <fieldset>
      <legend>Schedule</legend>
      <Field label="Frequency">
        <select
          value={form.frequency}
          onChange={(e) => set({ ...form, frequency: e.target.value as Frequency })}
        >
          <option value="hourly">Every hour</option>
          <option value="daily">Every day</option>
          <option value="weekdays">On weekdays</option>
          <option value="weekly">Every week</option>
        </select>
      </Field>
      {form.frequency === 'weekly' && (
        <Field label="Weekday">
          <select value={form.weekday} onChange={(e) => set({ ...form, weekday: Number(e.target.value) })}>
            {WEEKDAYS.map((day, i) => (
              <option key={day} value={i + 1}>
                {day}
              </option>
            ))}
          </select>
        </Field>
      )}
      {form.frequency !== 'hourly' && (
        <Field label="Hour">
          <input
            type="number"
            min={0}
            max={23}
            required
            value={form.hour}
            onChange={(e) => set({ ...form, hour: number(e.target.value) })}
          />
        </Field>
      )}
      <Field label="Minute">
        <input
          type="number"
          min={0}
          max={59}
          required
          value={form.minute}
          onChange={(e) => set({ ...form, minute: number(e.target.value) })}
        />
      </Field>
      <Field label="Time zone">
        <input
          list={list}
          required
          value={form.timezone}
          onChange={(e) => set({ ...form, timezone: e.target.value })}
        />
      </Field>
      <datalist id={list}>
        {zones().map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
    </fieldset>
  );
}

/** JSON with object keys in one order, so two equal triggers give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const PREVIEW_DELAY_MS = 300;

/** A refusal's words as the end of a sentence. */
const ending = (message: string) => (/[.!?]$/.test(message) ? message : `${message}.`);

/** The edited trigger as publish would take it, or why it cannot be read at all. */
type Edited = { trigger: Trigger; json: string } | { failure: ApiFailure };

const notJson = (error: unknown) =>
  new ApiFailure(400, 'invalid_argument', `The trigger is not valid JSON: ${(error as Error).message}.`);

/**
 * The server's preview of an edited trigger (the rules publish checks it by), asked for once
 * the person stops typing for a moment. The last answer stays shown until the next one arrives.
 */
function usePreview(json: string | undefined) {
  const [shown, setShown] = useState<{ json: string; preview?: SchedulePreview; error?: ApiFailure }>();
  useEffect(() => {
    if (json === undefined) return;
    let current = true;
    const timer = setTimeout(() => {
      call(triggerPreview, { query: { trigger: json } }).then(
        (preview) => current && setShown({ json, preview }),
        (error: unknown) =>
          current &&
          setShown({
            json,
            error:
              error instanceof ApiFailure
                ? error
                : new ApiFailure(0, 'internal', 'The preview failed; try again in a moment.'),
          }),
      );
    }, PREVIEW_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [json]);
  return { shown, pending: json !== undefined && shown?.json !== json };
}

/** What the edited trigger means before it is published: in words, with its next runs. */
function Preview({ edited, live }: { edited: Edited; live: AutomationDetail }) {
  const id = useId();
  const changed = 'json' in edited && canonical(edited.trigger) !== canonical(live.trigger);
  const { shown, pending } = usePreview(changed ? edited.json : undefined);
  let body;
  if ('failure' in edited) {
    body = <p className="error">{edited.failure.message}</p>;
  } else if (!changed) {
    body = <p className="muted">Unchanged: it runs {live.schedule.text}.</p>;
  } else if (!shown) {
    body = <p className="muted">Working out when it would run…</p>;
  } else if (shown.error) {
    body = <p className="error">This trigger cannot be published: {ending(shown.error.message)}</p>;
  } else if (shown.preview) {
    body = (
      <>
        <p>Once published, it runs {shown.preview.text}.</p>
        <Firings schedule={shown.preview} heading="Its next five runs" level={4} />
      </>
    );
  }
  return (
    <section className="preview" aria-labelledby={id} aria-busy={changed && pending}>
      <h3 id={id}>Preview</h3>
      <div aria-live="polite">{body}</div>
    </section>
  );
}

function Problems({ failure }: { failure: ApiFailure | undefined }) {
  if (!failure) return null;
  if (failure.errors.length === 0) return <ErrorNote error={failure} />;
  return (
    <div className="error" role="alert">
      <p>
        The plan was not published: the validator found{' '}
        {failure.errors.length === 1 ? 'a problem' : `${failure.errors.length} problems`}.
      </p>
      <ul aria-label="Problems in the plan">
        {failure.errors.map((e, i) => (
          <li key={i}>
            <code>{e.rule}</code>
            {e.path.length > 0 && <span className="muted"> at {e.path.join('.')}</span>}
            {e.node_id && <span className="muted"> (step {e.node_id})</span>}: {e.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Editing an automation: its trigger, settings and plan; `Publish` makes them live. */
export function Editor({
  detail,
  onPublished,
}: {
  detail: AutomationDetail;
  onPublished: () => Promise<void>;
}) {
  const livePlan = useMemo(() => JSON.stringify(detail.plan_json, null, 2), [detail.plan_json]);
  const [schedule, setSchedule] = useState(() => scheduleForm(detail.trigger));
  const [triggerJson, setTriggerJson] = useState(() => JSON.stringify(detail.trigger, null, 2));
  const [name, setName] = useState(detail.name);
  const [notify, setNotify] = useState(detail.notify);
  const [cooldown, setCooldown] = useState(detail.cooldown_s);
  const [ask, setAsk] = useState(detail.ask);
  const [writeApproval, setWriteApproval] = useState(detail.write_approval);
  const [plan, setPlan] = useState(livePlan);
  const [done, setDone] = useState<string | undefined>();
  const action = useAction();

  const planChanged = plan !== livePlan || ask !== detail.ask || writeApproval !== detail.write_approval;
  const edited = useMemo((): Edited => {
    let trigger: Trigger;
    if (schedule) trigger = scheduleTrigger(schedule);
    else {
      try {
        trigger = JSON.parse(triggerJson) as Trigger;
      } catch (error) {
        return { failure: notJson(error) };
      }
    }
    return { trigger, json: JSON.stringify(trigger) };
  }, [schedule, triggerJson]);

  const publish = async (event: FormEvent) => {
    event.preventDefault();
    setDone(undefined);
    const published = await action.perform(async () => {
      if ('failure' in edited) throw edited.failure;
      const { trigger } = edited;
      // The trigger is checked before anything is stored, so a bad one leaves no draft behind.
      if (canonical(trigger) !== canonical(detail.trigger)) {
        try {
          await call(triggerPreview, { query: { trigger: edited.json } });
        } catch (error) {
          if (!(error instanceof ApiFailure)) throw error;
          throw new ApiFailure(error.status, error.code, `Nothing was published: ${ending(error.message)}`);
        }
      }
      let flowVersionId = detail.flow_version_id;
      if (planChanged) {
        const draft = await call(draftVersion, {
          params: { id: detail.automation_id },
          body: { plan_json: parsePlanText(plan), ask, write_approval: writeApproval },
        });
        flowVersionId = draft.flow_version_id;
      }
      return call(publishVersion, {
        params: { id: detail.automation_id },
        body: {
          flow_version_id: flowVersionId,
          trigger,
          name,
          notify,
          ...(trigger.kind === 'schedule' ? {} : { cooldown_s: cooldown }),
        },
      });
    });
    if (published) {
      setDone(
        planChanged
          ? `Published version ${published.version}.`
          : `Saved: version ${published.version} runs with the new trigger and settings.`,
      );
      await onPublished();
    }
  };

  return (
    <section aria-labelledby="edit">
      <h2 id="edit">Edit and publish</h2>
      <form className="editor" onSubmit={publish}>
        {schedule ? (
          <ScheduleFields form={schedule} set={setSchedule} />
        ) : (
          <Field label="Trigger (JSON)" wide>
            <textarea
              rows={5}
              spellCheck={false}
              value={triggerJson}
              onChange={(e) => setTriggerJson(e.target.value)}
            />
          </Field>
        )}
        <Preview edited={edited} live={detail} />
        <fieldset>
          <legend>Settings</legend>
          <Field label="Name">
            <input value={name} required maxLength={200} onChange={(e) => setName(e.target.value)} />
          </Field>
          <Field label="Notify me">
            <select value={notify} onChange={(e) => setNotify(e.target.value as typeof notify)}>
              <option value="problems">About problems</option>
              <option value="everyRun">About every run</option>
              <option value="off">Never</option>
            </select>
          </Field>
          {!schedule && (
            <Field label="Cooldown (seconds)">
              <input
                type="number"
                min={0}
                value={cooldown}
                onChange={(e) => setCooldown(e.target.value === '' ? 0 : Number(e.target.value))}
              />
            </Field>
          )}
        </fieldset>
        <fieldset>
          <legend>Plan</legend>
          <Field label="Ask" wide>
            <input value={ask} required maxLength={1000} onChange={(e) => setAsk(e.target.value)} />
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
          <PlanForms
            text={plan}
            setText={setPlan}
            problems={action.error?.errors ?? []}
            triggerKind={'trigger' in edited ? edited.trigger.kind : undefined}
          />
          <p className="muted small">
            {planChanged
              ? 'The plan changed: Publish checks it with the same validator agents use and, if it passes, makes it the next version.'
              : 'Publish keeps this plan and changes only the trigger and settings.'}
          </p>
        </fieldset>
        <Problems failure={action.error} />
        {done && (
          <p className="ok" role="status">
            {done}
          </p>
        )}
        <button type="submit" className="primary" disabled={action.busy}>
          Publish
        </button>
      </form>
    </section>
  );
}

/** The plan as typed in `Edit as JSON`, or the one-line refusal the server would give. */
export function parsePlanText(plan: string): unknown {
  try {
    return JSON.parse(plan);
  } catch (error) {
    throw new ApiFailure(400, 'invalid_argument', `The plan is not valid JSON: ${(error as Error).message}.`);
  }
}
