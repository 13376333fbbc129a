import { call } from '../api.ts';
import { markNotificationsRead } from '../../../src/http/contract/people.ts';

/** A notification opened (its link followed, in this tab or another): it is read now. */
export function opened(notificationId: string): void {
  call(markNotificationsRead, { body: { ids: [notificationId] } }).catch(() => undefined);
}

/** The props that mark a notification read when its link is followed (click or middle click). */
export const marksRead = (notificationId: string) => ({
  onClick: () => opened(notificationId),
  onAuxClick: () => opened(notificationId),
});
