import type { SchedulePreview } from '../../../src/contract/automations.ts';
import { formatIn, myZone } from '../ui/time.tsx';

/**
 * A schedule's next firings in its zone and in the reader's, and what clock changes do; the page
 * shows the live trigger's and, while it is edited, the edited one's, worded by the same rules.
 */
export function Firings({
  schedule,
  heading,
  level = 3,
}: {
  schedule: SchedulePreview;
  heading: string;
  level?: 3 | 4;
}) {
  const mine = myZone();
  const zone = schedule.timezone;
  const showMine = zone !== undefined && zone !== mine;
  const Heading = level === 3 ? 'h3' : 'h4';
  return (
    <>
      {schedule.next.length > 0 && (
        <>
          <Heading>{heading}</Heading>
          <ol className="firings">
            {schedule.next.map((f) => (
              <li key={f.at}>
                <time dateTime={f.at}>
                  {f.local}{' '}
                  <span className="muted">
                    {zone} ({f.offset})
                  </span>
                </time>
                {showMine && (
                  <span className="muted">
                    {' '}
                    · {formatIn(mine, f.at)} your time ({mine})
                  </span>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
      <p className="muted small">
        {schedule.dst}
        {schedule.next_clock_change && (
          <>
            {' '}
            Clocks in {zone} next change on {formatIn(zone ?? 'UTC', schedule.next_clock_change.at)} (
            {schedule.next_clock_change.from} → {schedule.next_clock_change.to}).
          </>
        )}
      </p>
    </>
  );
}

/** When an automation runs: in words, its next firings in its zone and in the reader's, and what clock changes do. */
export function Schedule({ schedule, enabled }: { schedule: SchedulePreview; enabled: boolean }) {
  return (
    <section aria-labelledby="when">
      <h2 id="when">Trigger</h2>
      <p>Runs {schedule.text}.</p>
      <Firings schedule={schedule} heading={enabled ? 'Next five runs' : 'Next five runs, once resumed'} />
    </section>
  );
}
