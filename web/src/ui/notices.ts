import { markOpened } from './unread.tsx';

/** A notification opened (its link followed, in this tab or another): it is read now. */
export function opened(notificationId: string): void {
  markOpened([notificationId]).catch(() => undefined);
}

/** The props that mark a notification read when its link is followed (click or middle click). */
export const marksRead = (notificationId: string) => ({
  onClick: () => opened(notificationId),
  onAuxClick: () => opened(notificationId),
});
