/**
 * A value shown as indented JSON, collapsed behind its label when long. `named` also labels a
 * short one (where several values share a cell), and shows nothing for a value that is absent.
 */
export function JsonValue({
  value,
  label,
  named = false,
}: {
  value: unknown;
  label: string;
  named?: boolean;
}) {
  if (value === undefined) return named ? null : <span className="muted">—</span>;
  const text = JSON.stringify(value, null, 2) ?? 'null';
  if (text.length <= 80 && !text.includes('\n')) {
    const json = <code className="inline-json">{text}</code>;
    return named ? (
      <div>
        <span className="muted small">{label}</span> {json}
      </div>
    ) : (
      json
    );
  }
  return (
    <details className="json">
      <summary>{label}</summary>
      <pre>{text}</pre>
    </details>
  );
}
