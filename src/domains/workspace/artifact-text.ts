import type { Artifact } from '../policies/artifacts.ts';

interface TableData {
  columns: string[];
  rows: string[][];
}

function cell(value: unknown): string {
  return String(value ?? '')
    .replace(/\r\n?|\n/g, ' ')
    .replace(/\|/g, '\\|');
}

/** A table's markdown projection: a GFM table with one header row. */
export function tableMarkdown(data: TableData): string {
  const header = `| ${data.columns.map(cell).join(' | ')} |`;
  const rule = `| ${data.columns.map(() => '---').join(' | ')} |`;
  const rows = data.rows.map((row) => `| ${data.columns.map((_, i) => cell(row[i])).join(' | ')} |`);
  return [header, rule, ...rows].join('\n') + '\n';
}

/**
 * The current text of an artifact as tools quote it: a page's HTML source, a document's
 * markdown, a table's markdown projection; null when nothing readable exists yet.
 * Comment anchors are found in this text.
 */
export function artifactText(artifact: Artifact): string | null {
  if (artifact.type === 'table') {
    if (artifact.table_json === null) return null;
    return tableMarkdown(JSON.parse(artifact.table_json) as TableData);
  }
  return artifact.content;
}
