import { useState, type ReactNode } from 'react';
import { useAction } from '../hooks.ts';
import { Confirm } from './confirm.tsx';

/**
 * `Revoke` on a list of credentials: which one is being asked about, the confirm dialog, and the
 * sentence said once it is gone (after the list has reloaded without it).
 */
export function useRevoke(options: {
  revoke: (id: string) => Promise<unknown>;
  reload: () => Promise<void>;
  question: (name: string) => string;
  done: (name: string) => string;
  warning: ReactNode;
}) {
  const [asking, setAsking] = useState<{ id: string; name: string } | undefined>();
  const [said, setSaid] = useState('');
  const action = useAction();
  const dialog = asking && (
    <Confirm
      question={options.question(asking.name)}
      confirm="Revoke"
      busy={action.busy}
      onCancel={() => setAsking(undefined)}
      onConfirm={() =>
        void action.perform(async () => {
          await options.revoke(asking.id);
          setAsking(undefined);
          await options.reload();
          setSaid(options.done(asking.name));
        })
      }
    >
      {options.warning}
    </Confirm>
  );
  return { ask: setAsking, said, error: action.error, dialog };
}
