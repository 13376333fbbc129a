import { structuredPatch } from 'diff';

export interface LineDiff {
  /** Unified-style lines: ` ` context, `-` only in the old text, `+` only in the new. */
  excerpt: string;
  /** 1-based lines of the new text where it differs from the old (where lines were removed, the line after). */
  changedRange: { start_line: number; end_line: number };
}

const MAX_EXCERPT_LINES = 80;
/**
 * Past this many added and removed lines the diff is not worked out: its cost grows with their
 * number times the length of the sources (minutes for pages rewritten from top to bottom), and an
 * excerpt of 80 lines says little about so many changes anyway.
 */
const MAX_EDIT_LINES = 1000;

/** A short line-level diff of two sources, or null when they are the same or differ too widely. */
export function lineDiff(oldText: string, newText: string): LineDiff | null {
  if (oldText === newText) return null;
  const patch = structuredPatch('old', 'new', oldText, newText, '', '', {
    context: 2,
    maxEditLength: MAX_EDIT_LINES,
  });
  if (!patch || patch.hunks.length === 0) return null;
  const lines: string[] = [];
  let start = Infinity;
  let end = 0;
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    let at = hunk.newStart;
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) continue;
      lines.push(line);
      if (line.startsWith('+') || line.startsWith('-')) {
        start = Math.min(start, at);
        end = Math.max(end, at);
      }
      if (!line.startsWith('-')) at++;
    }
  }
  const shown = lines.slice(0, MAX_EXCERPT_LINES);
  if (lines.length > shown.length) shown.push(`… ${lines.length - shown.length} more diff lines`);
  return {
    excerpt: shown.join('\n'),
    changedRange: clamp(start, Math.max(start, end), newText),
  };
}

/** Where only trailing lines were removed, the range names the new text's last line. */
function clamp(start: number, end: number, text: string): { start_line: number; end_line: number } {
  const lines = Math.max(1, text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
  return { start_line: Math.min(start, lines), end_line: Math.min(end, lines) };
}
