/** Where the app shows an artifact: pages in the sandboxed viewer, the rest in the document view. */
export function artifactPath(type: string, id: string): string {
  return type === 'html_app' ? `/pages/${encodeURIComponent(id)}` : `/documents/${encodeURIComponent(id)}`;
}

export const TYPE_NAMES: Record<string, string> = { document: 'Document', html_app: 'Page', table: 'Table' };

/** The app's page for an object id named in the activity history, by its kind prefix. */
export function objectPath(id: string): string | undefined {
  const prefix = id.split('_', 1)[0];
  if (prefix === 'aut') return `/automations/${encodeURIComponent(id)}`;
  if (prefix === 'pg') return `/pages/${encodeURIComponent(id)}`;
  if (prefix === 'doc' || prefix === 'tbl') return `/documents/${encodeURIComponent(id)}`;
  return undefined;
}

/** An automation's page, opened on one of its runs when given. */
export function automationPath(id: string, runId?: string): string {
  const path = `/automations/${encodeURIComponent(id)}`;
  return runId ? `${path}?run=${encodeURIComponent(runId)}` : path;
}

/** Where a notification leads: the automation (and run) it is about, or the document or page. */
export function notificationLinks(n: {
  artifact_id?: string | undefined;
  thread_id?: string | undefined;
  automation_id?: string | undefined;
  run_id?: string | undefined;
}): { to: string; label: string }[] {
  if (n.automation_id) {
    const automation = { to: automationPath(n.automation_id), label: 'Open the automation' };
    return n.run_id
      ? [{ to: automationPath(n.automation_id, n.run_id), label: 'Open the run' }, automation]
      : [automation];
  }
  const artifact = n.artifact_id ? objectPath(n.artifact_id) : undefined;
  if (!artifact) return [];
  // A comment's notice lands on its thread.
  const to = n.thread_id ? `${artifact}#thread-${encodeURIComponent(n.thread_id)}` : artifact;
  return [{ to, label: 'Open' }];
}
