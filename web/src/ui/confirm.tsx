import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal question with a confirming button and `Cancel` (the dialog's name is its question).
 * Esc and `Cancel` close it; focus starts on `Cancel`, so Enter alone changes nothing.
 */
export function Confirm({
  question,
  children,
  confirm,
  busy = false,
  onConfirm,
  onCancel,
}: {
  question: string;
  children?: ReactNode;
  confirm: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id={id}>{question}</h2>
      {children}
      <div className="buttons">
        <button type="button" className="danger" disabled={busy} onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
