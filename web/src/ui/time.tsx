const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The person's own time zone, as the browser knows it. */
export const myZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** An instant in the person's time zone, machine-readable too. */
export function When({ at }: { at: string | number | undefined }) {
  if (at === undefined) return <span className="muted">—</span>;
  const date = new Date(at);
  return <time dateTime={date.toISOString()}>{dateTime.format(date)}</time>;
}

/** How long something took, from two instants: `1.2 s`, `3 min 4 s`. */
export function duration(from: string | undefined, to: string | undefined): string {
  if (!from || !to) return '—';
  const ms = new Date(to).getTime() - new Date(from).getTime();
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatIn(zone: string, at: string): string {
  return new Intl.DateTimeFormat(undefined, {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: zone,
  }).format(new Date(at));
}

/**
 * When an automation runs next, in its trigger's zone and named (`Mon 2 Mar, 09:00 Europe/Berlin`);
 * event triggers have no next run.
 */
export function NextRun({ at, trigger }: { at: string | undefined; trigger: unknown }) {
  if (at === undefined) return <span className="muted">—</span>;
  const zone =
    trigger && typeof trigger === 'object' && typeof (trigger as { timezone?: unknown }).timezone === 'string'
      ? (trigger as { timezone: string }).timezone
      : myZone();
  return (
    <time dateTime={new Date(at).toISOString()}>
      {formatIn(zone, at)} <span className="muted">{zone}</span>
    </time>
  );
}
