import { cloneElement, useId, type ReactElement } from 'react';

/**
 * A labelled control: the label names the control through `for`, so the control's accessible
 * name is the label alone (a label wrapped around a select would take in its options' text).
 */
export function Field({
  label,
  children,
  wide = false,
}: {
  label: string;
  children: ReactElement<{ id?: string }>;
  wide?: boolean;
}) {
  const id = useId();
  return (
    <div className={wide ? 'field wide' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id })}
    </div>
  );
}
