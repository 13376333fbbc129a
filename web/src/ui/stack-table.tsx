import type { ReactNode } from 'react';

/**
 * A table that scrolls within its box on a wide screen and stacks into labelled cards on a narrow
 * one (`narrow.css`): the caption names it (hidden unless `showCaption`), the columns head it, and
 * the rows come as children.
 */
export function StackTable(props: {
  caption: string;
  showCaption?: boolean;
  columns: string[];
  children: ReactNode;
  /** Shown under the table, inside its box (a note such as how many rows are shown). */
  after?: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className="stack">
        <caption className={props.showCaption ? undefined : 'visually-hidden'}>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
      {props.after}
    </div>
  );
}
