import type { ToolCaller } from './harness.ts';
import { ok } from './results.ts';

/** Creates a document through create_document with exactly `args`; its id and version. */
export async function createDocument(
  caller: ToolCaller,
  args: Record<string, unknown>,
): Promise<{ id: string; version: number }> {
  const s = ok(await caller.call('create_document', args));
  return { id: s.document_id as string, version: s.version as number };
}

/** The markdown and version read_document gives `caller` for the document's first window. */
export async function readDocument(
  caller: ToolCaller,
  id: string,
): Promise<{ markdown: string; version: number }> {
  const s = ok(await caller.call('read_document', { document_id: id }));
  return { markdown: s.markdown as string, version: s.version as number };
}
