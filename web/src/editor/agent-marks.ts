import { RangeSet, StateEffect, StateField, type Range } from '@codemirror/state';
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view';

/** A passage an agent wrote, as it wrote it, and who wrote it for whom. */
export interface AgentMark {
  text: string;
  by: string;
}

export const setAgentMarks = StateEffect.define<AgentMark[]>();

/**
 * Marks the passages agents wrote recently, quietly: each is ruled at the left and its first line carries who wrote
 * it (drawn by CSS from an attribute, no part of the text). A passage is found by its text as
 * written, so once a person changes it the mark is gone.
 */
export const agentMarks = StateField.define<{ marks: AgentMark[]; set: DecorationSet }>({
  create: () => ({ marks: [], set: Decoration.none }),
  update(value, tr) {
    let marks = value.marks;
    for (const effect of tr.effects) if (effect.is(setAgentMarks)) marks = effect.value;
    if (marks === value.marks && !tr.docChanged) return value;
    const text = tr.state.doc.toString();
    const ranges: Range<Decoration>[] = [];
    const seen = new Set<number>();
    for (const mark of marks) {
      const at = text.indexOf(mark.text);
      // The passage starts a line of its own (a block always does), and is whole.
      if (at < 0 || (at > 0 && text[at - 1] !== '\n')) continue;
      // Blank lines the passage starts with are not marked.
      const first = tr.state.doc.lineAt(at + mark.text.length - mark.text.trimStart().length);
      if (seen.has(first.from)) continue;
      const last = tr.state.doc.lineAt(at + mark.text.trimEnd().length);
      for (let n = first.number; n <= last.number; n++) {
        const line = tr.state.doc.line(n);
        if (seen.has(line.from)) continue;
        seen.add(line.from);
        ranges.push(
          n === first.number
            ? Decoration.line({ class: 'agent-written first', attributes: { 'data-by': mark.by } }).range(
                line.from,
              )
            : Decoration.line({ class: 'agent-written' }).range(line.from),
        );
      }
    }
    ranges.sort((a, b) => a.from - b.from);
    return { marks, set: RangeSet.of(ranges) };
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.set),
});
