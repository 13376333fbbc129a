import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { packText } from '../../storage/packed.ts';
import type { Deps } from '../deps.ts';
import { artifactFor, type Artifact } from '../policies/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import type { DocumentStore } from './store.ts';

export type ExportFormat = 'markdown' | 'html';

export interface Exported {
  artifact_id: string;
  title: string;
  type: 'document' | 'html_app';
  /** The text read_document (a document's markdown) or read_page (a page's HTML) returns at `version`. */
  text: string;
  version: number;
  format: ExportFormat;
  version_id: string;
}

/**
 * Taking a document or page out as a file: anyone who can open it may, and each export is an
 * `export` version row attributed to them, holding the text at the version exported. Documents
 * go out as Markdown or HTML (the transport renders the markdown), pages as their HTML source.
 */
export function exporter(deps: Deps, store: DocumentStore) {
  const { db } = deps;

  /** A document's text with the version it is at: edits not stored yet are stored first. */
  async function documentAt(actor: Actor, artifact: Artifact): Promise<{ text: string; version: number }> {
    let current = artifact;
    for (let attempt = 0; ; attempt++) {
      if (await store.flush(current.id)) current = (await artifactFor(db, actor, current.id)).artifact;
      const text = await store.currentMarkdown(current.id, current.content);
      // Someone typed between storing and reading: store that too and read again, so the
      // text is exactly the version's.
      if (attempt < 3 && (await store.flush(current.id))) {
        current = (await artifactFor(db, actor, current.id)).artifact;
        continue;
      }
      return { text, version: current.version };
    }
  }

  async function exportArtifact(
    actor: Actor,
    input: { document_id?: unknown; format?: unknown },
  ): Promise<Exported> {
    const { artifact } = await artifactFor(db, actor, input.document_id);
    const format = input.format;
    if (format !== 'markdown' && format !== 'html') throw invalid('format must be markdown or html');
    let taken: { text: string; version: number };
    if (artifact.type === 'document') {
      taken = await documentAt(actor, artifact);
    } else if (artifact.type === 'html_app') {
      if (format !== 'html') throw invalid('A page exports as HTML only; use format=html');
      if (artifact.content === null) {
        throw new DomainError('no_content', 'That page has no content yet.', { prefixed: false });
      }
      taken = { text: artifact.content, version: artifact.version };
    } else {
      throw invalid('Only documents and pages can be exported; a table is read in the app');
    }
    const versionId = newId('ver');
    await db.transaction().execute(async (trx) => {
      // The right to open it is checked again where the row is written.
      await artifactFor(trx, actor, artifact.id);
      await trx
        .insertInto('checkpoints')
        .values({
          id: versionId,
          artifact_id: artifact.id,
          doc_version: taken.version,
          reason: 'export',
          label: null,
          pinned: 0,
          author_id: actor.personId,
          instruction: `exported as ${format === 'markdown' ? 'Markdown' : 'HTML'}`,
          content: packText(taken.text),
          kept_json: null,
          created_at: Date.now(),
        })
        .execute();
    });
    return {
      artifact_id: artifact.id,
      title: artifact.title,
      type: artifact.type,
      text: taken.text,
      version: taken.version,
      format,
      version_id: versionId,
    };
  }

  return { exportArtifact };
}
