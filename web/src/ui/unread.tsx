import { useEffect } from 'react';
import { NavLink, useLocation } from 'react-router';
import { call } from '../api.ts';
import { usePolling, useResource } from '../hooks.ts';
import { markNotificationsRead, unreadNotifications } from '../../../src/contract/people.ts';

/** Told whenever notifications are marked read here, so the menu's count follows at once. */
const CHANGED = 'tandem:notifications-read';

/** Marks notifications read as they are opened (a link followed, a card decided). */
export async function markOpened(ids: string[]): Promise<void> {
  if (ids.length > 0) await call(markNotificationsRead, { body: { ids } });
  window.dispatchEvent(new Event(CHANGED));
}

/** Marks every notification read. */
export async function markAllOpened(): Promise<void> {
  await call(markNotificationsRead, { body: {} });
  window.dispatchEvent(new Event(CHANGED));
}

/** The menu's link to Notifications; its name carries the unread count (`Notifications, 3 unread`). */
export function NotificationsLink() {
  const { pathname } = useLocation();
  const count = useResource('unread', () => call(unreadNotifications, {}));
  const { reload } = count;
  useEffect(() => {
    void reload();
    // A navigation may have opened one; a read elsewhere in the app says so.
    const heard = () => void reload();
    window.addEventListener(CHANGED, heard);
    return () => window.removeEventListener(CHANGED, heard);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pathname]);
  usePolling(true, 30_000, reload);
  const unread = count.data?.unread ?? 0;
  return (
    <NavLink
      to="/notifications"
      aria-label={unread > 0 ? `Notifications, ${unread} unread` : 'Notifications'}
    >
      Notifications
      {unread > 0 && (
        <span className="count" aria-hidden="true">
          {unread > 99 ? '99+' : unread}
        </span>
      )}
    </NavLink>
  );
}
